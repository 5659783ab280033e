// Writing the Graph IR back to a .tflite flatbuffer (schema v3, "TFL3"), for
// modelgen and tests. What the reader reads, the writer writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/files.h"  // WriteFileAtomically
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
// Whole or not at all (WriteFileAtomically, base/files.h).
absl::Status WriteModelFile(const Graph& graph, const std::string& path);

}  // namespace mgd
