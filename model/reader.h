// Reading a .tflite file into the Graph IR. Every load runs the flatbuffers
// Verifier and then ValidateGraph; errors name the file and the node, tensor
// or field that is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/bytes.h"
#include "base/files.h"  // ReadFileBytes
#include "model/graph.h"

namespace mgd {

// `source` names the bytes in error messages (usually the file path).
absl::StatusOr<Graph> ReadModel(const uint8_t* data, size_t size, std::string_view source);
absl::StatusOr<Graph> ReadModelFile(const std::string& path);

}  // namespace mgd
