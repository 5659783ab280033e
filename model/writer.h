// Writing the Graph IR back to a .tflite flatbuffer (schema v3, "TFL3"), for
// modelgen and tests. What the reader reads, the writer writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

absl::StatusOr<std::vector<uint8_t>> WriteModel(const Graph& graph);

// For naming a model's structure cheaply (the compilation cache hashes
// constant data on its own, in parallel): constant tensors keep an empty
// buffer and the named metadata is left out. Not a loadable model.
struct StructureOptions {
  std::vector<std::string> skip_metadata;
};
absl::StatusOr<std::vector<uint8_t>> WriteModelStructure(const Graph& graph, const StructureOptions& options);
absl::Status WriteModelFile(const Graph& graph, const std::string& path);

// Writes `size` bytes to PATH.tmp<pid> beside `path` and renames it into
// place: a reader never sees half a file, and concurrent writers never share
// a temporary file. Errors name `path`.
absl::Status WriteFileAtomically(const std::string& path, const void* data, size_t size);

}  // namespace mgd
