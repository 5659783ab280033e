// A CompiledModel as bytes and back: the payload of the compilation cache and
// of offline compiled models (issue 8). The reader treats every byte as
// untrusted: lengths and counts are checked against what is left, indices
// against the tables they point into, enums against their values; anything
// wrong is an error naming the field, never a crash or a huge allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/bytes.h"
#include "delegate/compiled_model.h"

namespace mgd {

inline constexpr uint32_t kCompiledModelMagic = 0x4D43474D;  // "MGCM" little-endian
inline constexpr uint32_t kCompiledModelVersion = 6;  // 2: SPIR-V per dispatch; 3: GL binaries, pipeline cache;
                                                      // 4: fp16 weights in fp16, Vulkan module identifiers;
                                                      // 5: declared shader parameters;
                                                      // 6: integer dot products

std::vector<uint8_t> SerializeCompiledModel(const CompiledModel& model);
absl::StatusOr<CompiledModel> ParseCompiledModel(const uint8_t* data, size_t size);
// The same, with the constants left in `bytes` (shared) instead of copied.
absl::StatusOr<CompiledModel> ParseCompiledModel(std::shared_ptr<const Bytes> bytes);

}  // namespace mgd
