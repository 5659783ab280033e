// GPU shaders for the delegate's edges: a user's float32 BHWC buffer to the
// PHWC4 layout used inside, and back. Shapes are inlined as constants.
#pragma once

#include <array>

#include "layout/phwc4.h"
#include "shaders/dialect.h"

namespace mgd::shaders {

struct ConversionShader {
  ShaderCode code;
  std::array<uint32_t, 3> groups;  // dispatch grid
};

// Buffers: 0 = BHWC floats (read), 1 = PHWC4 (written; fp16 with
// `half_storage`).
ConversionShader BhwcToPhwc4Shader(const layout::Bhwc& shape, bool half_storage = false);
// Buffers: 0 = PHWC4 (read), 1 = BHWC floats (written).
ConversionShader Phwc4ToBhwcShader(const layout::Bhwc& shape, bool half_storage = false);

}  // namespace mgd::shaders
