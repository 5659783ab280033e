// GPU shaders for the delegate's edges: a user's float32 BHWC buffer to the
// PHWC4 layout used inside, and back; a bool tensor's BHWC bytes to PHWC4
// 0.0/1.0 values, and back. Shapes are inlined as constants.
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
// A bool tensor (one byte per element, any nonzero byte true, TFLite's
// storage) to PHWC4 0.0/1.0. Buffers: 0 = the bytes as uint words (read),
// 1 = PHWC4 (written).
ConversionShader BoolBhwcToPhwc4Shader(const layout::Bhwc& shape, bool half_storage = false);
// PHWC4 values to bool bytes (1 where nonzero, NaN included: C++'s
// conversion to bool). Buffers: 0 = PHWC4 (read), 1 = the bytes as uint
// words (written whole: the bytes past the last element of the last word
// are 0, in the buffer's rounding up to 4 bytes).
ConversionShader Phwc4ToBoolBhwcShader(const layout::Bhwc& shape, bool half_storage = false);

}  // namespace mgd::shaders
