// Reading a .tflite file into the Graph IR. Every load runs the flatbuffers
// Verifier and then ValidateGraph; errors name the file and the node, tensor
// or field that is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

// `source` names the bytes in error messages (usually the file path).
absl::StatusOr<Graph> ReadModel(const uint8_t* data, size_t size, std::string_view source);
absl::StatusOr<Graph> ReadModelFile(const std::string& path);

// The whole file in one read, or an error naming it (also when it holds more
// than `max_bytes`).
absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, uint64_t max_bytes = UINT64_MAX);

}  // namespace mgd
