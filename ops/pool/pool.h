// MAX_POOL_2D and AVERAGE_POOL_2D (pool.cc), and MediaPipe's
// MaxPoolingWithArgmax2D and MaxUnpooling2D (mediapipe_pool.cc), whose
// TfLitePoolParams options are the same fields.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct PoolAttributes {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};

std::vector<OpDefinition> PoolOps();
std::vector<OpDefinition> MediaPipePoolOps();

// Whether `node` of `graph` averages each channel over the whole height and
// width of its rank-4 input into one pixel: an AVERAGE_POOL_2D whose window
// is the input, or a MEAN over axes 1 and 2 keeping them. Its fused
// activation when it does (NONE for a MEAN); a squeeze-and-excitation
// gate computes it inside its own shader (ops/conv/squeeze_excite.cc).
std::optional<Activation> GlobalAverage(const Graph& graph, const Node& node);

// The GLSL window loops of a pool over `in` (the pool generators share
// them). TFLite's own padding is skipped; the margins of a fused PAD are
// zeros that take part (as they would in the padded tensor). `inner` sees
// `v` (the input vec4 or zero) and fy, fx.
std::string PoolLoops(shaders::ShaderParams& params, const shaders::NodeContext& ctx, const layout::Bhwc& in,
                      const PoolAttributes& p,
                      const std::string& inner);

}  // namespace mgd::ops
