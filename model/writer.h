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
absl::Status WriteModelFile(const Graph& graph, const std::string& path);

}  // namespace mgd
