// MediaPipe's custom op Resampler (mediapipe/util/tflite/operations,
// TensorFlow Addons' resampler): each output pixel samples the source
// bilinearly at the (x, y) its warp gives, in pixels, zero outside. Source
// [B, H, W, C], warp [B, H', W', 2], output [B, H', W', C]; MediaPipe's own
// kernel takes H' = H and W' = W, TFLite's GPU delegate any warp size.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

inline constexpr char kResamplerOp[] = "Resampler";

std::vector<OpDefinition> ResamplerOps();

}  // namespace mgd::ops
