// Single-op graphs fed NaN and +-Inf, with what mgd's contract says comes
// out (docs/numerics.md, "NaN and Inf"): IEEE 754 arithmetic, NaN kept by
// every clamp and by max and min, Inf kept where no activation clamps it.
// The CPU kernels must give exactly `expected` (tests/interpreter/
// nonfinite_test.cc); the GPU must give NaN and Inf where the CPU does and
// the same finite values within the op bounds (tests/delegate/
// nonfinite_gpu_test.cc). `litert` says whether LiteRT 2.5.3 (x86) gives the
// same: where it does not, numerics.md says why.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/graph.h"
#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "tests/interpreter/single_op.h"

namespace mgd::testing {

struct NonFiniteCase {
  std::string name;
  OpKind op;
  Attributes attributes;
  std::vector<single_op::Operand> operands;
  Shape output;
  std::vector<double> expected;
  bool litert = true;
};

inline std::vector<NonFiniteCase> NonFiniteCases() {
  using single_op::Const;
  using single_op::In;
  using single_op::Ints;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const double dnan = std::nan(""), dinf = HUGE_VAL;
  // Four lanes of one pixel: NaN, +Inf, -Inf, a number.
  const std::vector<float> x = {nan, inf, -inf, 2.5f};
  const Shape px{1, 1, 1, 4};
  std::vector<NonFiniteCase> cases;
  auto add = [&](std::string name, OpKind op, Attributes a, std::vector<single_op::Operand> ops, Shape out,
                 std::vector<double> expected, bool litert = true) {
    cases.push_back({std::move(name), op, std::move(a), std::move(ops), std::move(out), std::move(expected), litert});
  };
  add("relu", OpKind::kRelu, {}, {In(px, x)}, px, {dnan, dinf, 0, 2.5});
  add("relu6", OpKind::kRelu6, {}, {In(px, x)}, px, {dnan, 6, 0, 2.5});
  add("relu_n1_to_1", OpKind::kReluN1To1, {}, {In(px, x)}, px, {dnan, 1, -1, 1});
  add("logistic", OpKind::kLogistic, {}, {In(px, x)}, px, {dnan, 1, 0, 1 / (1 + std::exp(-2.5))});
  add("tanh", OpKind::kTanh, {}, {In(px, x)}, px, {dnan, 1, -1, std::tanh(2.5)});
  add("hard_swish", OpKind::kHardSwish, {}, {In(px, x)}, px, {dnan, dinf, dnan, 2.5 * (2.5 / 6 + 0.5)});
  add("exp", OpKind::kExp, {}, {In(px, x)}, px, {dnan, dinf, 0, std::exp(2.5)});
  add("elu", OpKind::kElu, {}, {In(px, x)}, px, {dnan, dinf, -1, 2.5});
  add("leaky_relu", OpKind::kLeakyRelu, ops::LeakyReluAttributes{0.5f}, {In(px, x)}, px, {dnan, dinf, -dinf, 2.5});
  add("prelu", OpKind::kPrelu, {}, {In(px, x), Const({1, 1, 4}, {0.5f, 0.5f, 0.5f, 0.5f})}, px,
      {dnan, dinf, -dinf, 2.5});
  // Inf stays Inf without an activation (not FLT_MAX); 1/0 is Inf, 0/0 NaN.
  add("add", OpKind::kAdd, ops::ElementwiseAttributes{}, {In(px, x), Const(px, {1, 1, inf, 1})}, px, {dnan, dinf, dnan, 3.5});
  add("div", OpKind::kDiv, ops::ElementwiseAttributes{}, {In(px, {1, -1, 0, 2.5f}), Const(px, {0, 0, 0, 2})}, px,
      {dinf, -dinf, dnan, 1.25});
  // A fused clamp keeps NaN.
  add("add_relu6", OpKind::kAdd, ops::ElementwiseAttributes{Activation::kRelu6}, {In(px, x), Const(px, {1, 1, 1, 1})}, px,
      {dnan, 6, 0, 3.5});
  add("mul_relu", OpKind::kMul, ops::ElementwiseAttributes{Activation::kRelu}, {In(px, x), Const(px, {2, 0, 2, 2})}, px,
      {dnan, dnan, 0, 5});
  // MAXIMUM / MINIMUM: NaN from either side (LiteRT: from one side only,
  // which side depends on the shapes).
  add("maximum", OpKind::kMaximum, {}, {In(px, x), In(px, {1, nan, 1, 1})}, px, {dnan, dnan, 1, 2.5}, false);
  add("minimum", OpKind::kMinimum, {}, {In(px, x), Const(px, {1, 1, nan, 1})}, px, {dnan, 1, dnan, 1}, false);
  add("squared_difference", OpKind::kSquaredDifference, {}, {In(px, x), Const(px, {0, inf, 0, 0.5f})}, px,
      {dnan, dnan, dinf, 4});
  // Pools: a NaN anywhere in the window wins; a window of -Inf is -Inf.
  {
    const Shape s{1, 2, 2, 4};
    const std::vector<float> v = {nan, -inf, 1, 1,  //
                                  0, -inf, inf, 2,  //
                                  5, -inf, 0, 3,    //
                                  1, -inf, 0, nan};
    const ops::PoolAttributes window{.padding = Padding::kValid, .stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2};
    add("max_pool", OpKind::kMaxPool2d, window, {In(s, v)}, {1, 1, 1, 4}, {dnan, -dinf, dinf, dnan});
    add("average_pool", OpKind::kAveragePool2d, window, {In(s, v)}, {1, 1, 1, 4}, {dnan, -dinf, dinf, dnan});
    ops::PoolAttributes relu6 = window;
    relu6.activation = Activation::kRelu6;
    add("max_pool_relu6", OpKind::kMaxPool2d, relu6, {In(s, v)}, {1, 1, 1, 4}, {dnan, 0, 6, dnan});
    add("mean", OpKind::kMean, ops::ReducerAttributes{.keep_dims = true}, {In(s, v), Ints({2}, {1, 2})}, {1, 1, 1, 4},
        {dnan, -dinf, dinf, dnan});
  }
  // Convolutions sum in IEEE arithmetic; a clamp keeps NaN (LiteRT on x86
  // turns NaN into the clamp's lower bound, and into -Inf in 1x1
  // convolutions and fully connected layers without one).
  {
    const Shape in{1, 1, 2, 2};
    const std::vector<float> v = {nan, 1, inf, 1};  // pixel 0: NaN, 1; pixel 1: +Inf, 1
    const Shape w{2, 1, 1, 2};                      // out 0 = in0 + in1; out 1 = 0*in0 + in1
    const std::vector<float> weights = {1, 1, 0, 1};
    add("conv_relu", OpKind::kConv2d, ops::Conv2dAttributes{.activation = Activation::kRelu},
        {In(in, v), Const(w, weights), Const({2}, {0, 0})}, {1, 1, 2, 2}, {dnan, dnan, dinf, dnan}, false);
    add("conv_inf", OpKind::kConv2d, ops::Conv2dAttributes{}, {In(in, {1, 1, inf, 1}), Const(w, weights), Const({2}, {0, 0})},
        {1, 1, 2, 2}, {2, 1, dinf, dnan}, false);
    add("depthwise_relu6", OpKind::kDepthwiseConv2d, ops::DepthwiseConv2dAttributes{.activation = Activation::kRelu6},
        {In(in, v), Const({1, 1, 1, 2}, {1, 0}), Const({2}, {0, 0})}, in, {dnan, 0, 6, 0}, false);
    // 0 * NaN is NaN: every output reads the NaN.
    add("fully_connected", OpKind::kFullyConnected, ops::FullyConnectedAttributes{},
        {In({1, 4}, {nan, 1, 2, 1}), Const({2, 4}, {0, 1, 0, 1, 1, 0, 1, 1}), Const({2}, {0, 0})}, {1, 2},
        {dnan, dnan}, false);
    add("fully_connected_inf", OpKind::kFullyConnected, ops::FullyConnectedAttributes{},
        {In({1, 4}, {-inf, 1, 2, 1}), Const({2, 4}, {0, 1, 0, 1, 1, 0, 1, 1}), Const({2}, {0, 0})}, {1, 2},
        {dnan, -dinf}, false);
  }
  // Softmax: a row with NaN or +Inf is all NaN (Inf - Inf); a -Inf is 0.
  add("softmax", OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {In({3, 2}, {nan, 0, inf, 0, -inf, 0})}, {3, 2},
      {dnan, dnan, dnan, dnan, 0, 1});
  // Bilinear resize in lerp form, a + (b - a) * t: a tap of Inf gives NaN
  // even at weight 0 (Inf - Inf), and so does the row lerp of an Inf.
  add("resize_bilinear", OpKind::kResizeBilinear, ops::ResizeAttributes{}, {In({1, 1, 3, 1}, {1, 2, inf}), Ints({2}, {1, 6})},
      {1, 1, 6, 1}, {1, 1.5, dnan, dnan, dnan, dnan});
  add("concatenation", OpKind::kConcatenation, ops::ConcatenationAttributes{.axis = -1}, {In({1, 2}, {nan, inf}), In({1, 1}, {-inf})},
      {1, 3}, {dnan, dinf, -dinf});
  add("pad", OpKind::kPad, {}, {In({1, 2}, {nan, inf}), Ints({2, 2}, {0, 0, 1, 0})}, {1, 3}, {0, dnan, dinf});
  return cases;
}

}  // namespace mgd::testing
