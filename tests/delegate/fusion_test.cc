// GPU fusion planning: what each kind of fusion groups, then fused against
// unfused on the GPU: the same results within the bounds, with fewer
// dispatches. The graph passes have their tests in tests/passes/.
#include <functional>

#include "delegate/fusion.h"
#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/softmax/softmax.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::WholeGraph;
using testing::Uniform;

// An input of uniform values for each of `g`'s inputs, seeds `seed` on.
std::vector<std::vector<float>> UniformInputs(const Graph& g, uint32_t seed) {
  std::vector<std::vector<float>> inputs;
  for (int t : g.inputs) {
    inputs.push_back(Uniform(static_cast<size_t>(NumElements(g.tensors[static_cast<size_t>(t)].shape)), seed++));
  }
  return inputs;
}

int Conv(GraphBuilder& b, int x, int channels_in, int channels_out, const Shape& out, Activation activation = Activation::kNone) {
  ops::Conv2dAttributes a;
  a.padding = Padding::kValid;
  a.activation = activation;
  const int y = b.Tensor(out);
  b.Op(OpKind::kConv2d, a,
       {x, b.Constant({channels_out, 3, 3, channels_in}, Uniform(static_cast<size_t>(9 * channels_in * channels_out), 3, 0.2f)),
        b.Constant({channels_out}, Uniform(static_cast<size_t>(channels_out), 4))},
       {y});
  return y;
}

// conv -> RELU -> ADD(other input) -> MUL(constant per channel).
Graph ElementwiseChain() {
  GraphBuilder b;
  const int x = b.Input({1, 8, 9, 5}), other = b.Input({1, 6, 7, 6});
  const int c = Conv(b, x, 5, 6, {1, 6, 7, 6});
  const int r = b.Tensor({1, 6, 7, 6}), s = b.Tensor({1, 6, 7, 6}), y = b.Tensor({1, 6, 7, 6});
  b.Op(OpKind::kRelu, {}, {c}, {r});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {other, r}, {s});
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{Activation::kRelu6}, {s, b.Constant({6}, Uniform(6, 5))}, {y});
  b.Output(y);
  return b.Build();
}

// PAD (spatial) -> conv, PAD -> MAX_POOL, PAD -> AVERAGE_POOL: zeros of
// the PAD take part in the max and the average.
Graph PadsIntoWindows(OpKind op) {
  GraphBuilder b;
  const int x = b.Input({1, 6, 7, 5});
  const int p = b.Tensor({1, 8, 10, 5});
  b.Op(OpKind::kPad, {}, {x, b.ConstantInt({4, 2}, {0, 0, 1, 1, 2, 1, 0, 0})}, {p});
  if (op == OpKind::kConv2d) {
    b.Output(Conv(b, p, 5, 4, {1, 6, 8, 4}));
  } else {
    ops::PoolAttributes a;
    a.padding = Padding::kSame;
    a.filter_h = a.filter_w = 3;
    a.stride_h = a.stride_w = 2;
    const int y = b.Tensor({1, 4, 5, 5});
    b.Op(op, a, {p}, {y});
    b.Output(y);
  }
  return b.Build();
}

// MAX_POOL -> PAD (channels 5 -> 11) -> ADD, blazeface's residual pattern.
Graph ChannelPad() {
  GraphBuilder b;
  const int x = b.Input({1, 8, 8, 5}), other = b.Input({1, 4, 4, 11});
  ops::PoolAttributes a;
  a.filter_h = a.filter_w = a.stride_h = a.stride_w = 2;
  const int m = b.Tensor({1, 4, 4, 5}), p = b.Tensor({1, 4, 4, 11}), y = b.Tensor({1, 4, 4, 11});
  b.Op(OpKind::kMaxPool2d, a, {x}, {m});
  b.Op(OpKind::kPad, {}, {m, b.ConstantInt({4, 2}, {0, 0, 0, 0, 0, 0, 0, 6})}, {p});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{Activation::kRelu}, {other, p}, {y});
  b.Output(y);
  return b.Build();
}

// Blazeface's residual block: ADD(conv(x), PAD(x) to more channels) -> RELU.
Graph ResidualWithChannelPad() {
  GraphBuilder b;
  const int x = b.Input({1, 5, 5, 5});
  const int c = b.Tensor({1, 5, 5, 11}), p = b.Tensor({1, 5, 5, 11}), a = b.Tensor({1, 5, 5, 11}), y = b.Tensor({1, 5, 5, 11});
  ops::Conv2dAttributes conv;
  b.Op(OpKind::kConv2d, conv, {x, b.Constant({11, 1, 1, 5}, Uniform(55, 8, 0.4f))}, {c});
  b.Op(OpKind::kPad, {}, {x, b.ConstantInt({4, 2}, {0, 0, 0, 0, 0, 0, 0, 6})}, {p});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {c, p}, {a});
  b.Op(OpKind::kRelu, {}, {a}, {y});
  b.Output(y);
  return b.Build();
}

// conv -> MUL(constant) -> ADD(constant), then a RESHAPE [1,1,1,4] -> [1,4]
// (the same PHWC4 layout: a no-op).
Graph FoldableConstants() {
  GraphBuilder b;
  const int x = b.Input({1, 3, 3, 3});
  const int c = Conv(b, x, 3, 4, {1, 1, 1, 4});
  const int m = b.Tensor({1, 1, 1, 4}), a = b.Tensor({1, 1, 1, 4}), r = b.Tensor({1, 4});
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {c, b.Constant({4}, {0.5f, -2.0f, 1.5f, 3.0f})}, {m});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{Activation::kRelu}, {b.Constant({1}, {0.25f}), m}, {a});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {a, b.ConstantInt({2}, {1, 4})}, {r});
  b.Output(r);
  return b.Build();
}

// BlazeFace's strided residual block, in its order: DEPTHWISE_CONV_2D
// (stride 2), MAX_POOL_2D (the shortcut), a 1x1 CONV_2D of the depthwise
// output, a channel PAD of the pool, ADD, RELU. The ADD's operands come from
// both branches; the convolution's group runs after the pool's.
Graph StridedResidual() {
  GraphBuilder b;
  const int x = b.Input({1, 8, 8, 4});
  ops::DepthwiseConv2dAttributes dw;
  dw.padding = Padding::kSame;
  dw.stride_h = dw.stride_w = 2;
  const int d = b.Tensor({1, 4, 4, 4}), m = b.Tensor({1, 4, 4, 4}), c = b.Tensor({1, 4, 4, 8});
  b.Op(OpKind::kDepthwiseConv2d, dw, {x, b.Constant({1, 3, 3, 4}, Uniform(36, 31, 0.5f))}, {d});
  ops::PoolAttributes pool;
  pool.filter_h = pool.filter_w = pool.stride_h = pool.stride_w = 2;
  b.Op(OpKind::kMaxPool2d, pool, {x}, {m});
  b.Op(OpKind::kConv2d, ops::Conv2dAttributes{}, {d, b.Constant({8, 1, 1, 4}, Uniform(32, 32, 0.4f))}, {c});
  const int padded = b.Tensor({1, 4, 4, 8}), sum = b.Tensor({1, 4, 4, 8}), y = b.Tensor({1, 4, 4, 8});
  b.Op(OpKind::kPad, {}, {m, b.ConstantInt({4, 2}, {0, 0, 0, 0, 0, 0, 0, 4})}, {padded});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {c, padded}, {sum});
  b.Op(OpKind::kRelu, {}, {sum}, {y});
  b.Output(y);
  return b.Build();
}

// A detector's heads: two convolutions, each RESHAPEd to [1, anchors,
// `values`] and concatenated over the anchors (BlazeFace's scores: one value
// per anchor; its boxes: 16) [-> LOGISTIC], or the reshapes' outputs as
// they are (`concatenated` false; the full-range face detector's one head).
struct Heads {
  int values = 1;
  bool logistic = false, concatenated = true;
};

Graph DetectorHeads(const Heads& h) {
  const int values = h.values;
  GraphBuilder b;
  const int x = b.Input({1, 8, 8, 4}), other = b.Input({1, 6, 6, 3});
  const int scores = Conv(b, x, 4, 2 * values, {1, 6, 6, 2 * values}), flat = b.Tensor({1, 72, values});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {scores, b.ConstantInt({3}, {1, 72, values})}, {flat});
  const int more = Conv(b, other, 3, 3 * values, {1, 4, 4, 3 * values}), more_flat = b.Tensor({1, 48, values});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {more, b.ConstantInt({3}, {1, 48, values})}, {more_flat});
  if (!h.concatenated) {
    b.Output(flat);
    b.Output(more_flat);
    return b.Build();
  }
  const int y = b.Tensor({1, 120, values});
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{1}, {flat, more_flat}, {y});
  if (!h.logistic) {
    b.Output(y);
    return b.Build();
  }
  const int z = b.Tensor({1, 120, values});
  b.Op(OpKind::kLogistic, {}, {y}, {z});
  b.Output(z);
  return b.Build();
}

// 3x3 convolutions of one input to `channels` each, concatenated as they
// are along BHWC `axis`, with the CONCATENATION's own activation.
struct Concatenated {
  std::vector<int> channels;
  int axis = 3, batch = 1;
  Activation activation = Activation::kNone;
};

Graph ConcatenatedConvs(const Concatenated& c) {
  GraphBuilder b;
  const int x = b.Input({c.batch, 7, 7, 4});
  std::vector<int> parts;
  Shape out = {c.batch, 5, 5, c.channels[0]};
  out[static_cast<size_t>(c.axis)] = 0;
  for (int channels : c.channels) {
    const Shape part = {c.batch, 5, 5, channels};
    parts.push_back(Conv(b, x, 4, channels, part));
    out[static_cast<size_t>(c.axis)] += part[static_cast<size_t>(c.axis)];
  }
  const int y = b.Tensor(out);
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{c.axis, c.activation}, parts, {y});
  b.Output(y);
  return b.Build();
}

// A separable convolution: [PAD ->] DEPTHWISE_CONV_2D (3x3, `stride`,
// `multiplier`, ReLU6) -> 1x1 CONV_2D [-> ADD(other input)]: the depthwise
// output is computed inside the 1x1 convolution's shader.
struct Separable {
  Shape in;
  int multiplier = 1, stride = 1, out_channels = 8;
  bool pad = false, bias = true, residual = false;
  Activation pointwise_activation = Activation::kNone;
};

Graph SeparableConv(const Separable& c) {
  GraphBuilder b;
  int x = b.Input(c.in);
  const int batch = c.in[0], ih = c.in[1], iw = c.in[2], ci = c.in[3], mc = ci * c.multiplier;
  int h = ih, w = iw;
  if (c.pad) {
    h += 2, w += 3;
    const int p = b.Tensor({batch, h, w, ci});
    b.Op(OpKind::kPad, {}, {x, b.ConstantInt({4, 2}, {0, 0, 1, 1, 2, 1, 0, 0})}, {p});
    x = p;
  }
  ops::DepthwiseConv2dAttributes dw;
  dw.padding = c.pad ? Padding::kValid : Padding::kSame;
  dw.stride_h = dw.stride_w = c.stride;
  dw.depth_multiplier = c.multiplier;
  dw.activation = Activation::kRelu6;
  const int oh = c.pad ? (h - 3) / c.stride + 1 : (h + c.stride - 1) / c.stride;
  const int ow = c.pad ? (w - 3) / c.stride + 1 : (w + c.stride - 1) / c.stride;
  const int m = b.Tensor({batch, oh, ow, mc});
  std::vector<int> dw_inputs = {x, b.Constant({1, 3, 3, mc}, Uniform(static_cast<size_t>(9 * mc), 11, 0.5f))};
  if (c.bias) dw_inputs.push_back(b.Constant({mc}, Uniform(static_cast<size_t>(mc), 12)));
  b.Op(OpKind::kDepthwiseConv2d, dw, dw_inputs, {m});
  ops::Conv2dAttributes pw;
  pw.activation = c.pointwise_activation;
  const int y = b.Tensor({batch, oh, ow, c.out_channels});
  b.Op(OpKind::kConv2d, pw,
       {m, b.Constant({c.out_channels, 1, 1, mc}, Uniform(static_cast<size_t>(c.out_channels * mc), 13, 0.3f)),
        b.Constant({c.out_channels}, Uniform(static_cast<size_t>(c.out_channels), 14))},
       {y});
  if (!c.residual) {
    b.Output(y);
    return b.Build();
  }
  const int other = b.Input({batch, oh, ow, c.out_channels}), sum = b.Tensor({batch, oh, ow, c.out_channels});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {y, other}, {sum});
  b.Output(sum);
  return b.Build();
}

// A squeeze-and-excitation gate: x -> global average (AVERAGE_POOL_2D, or
// MEAN) -> 1x1 CONV_2D squeezing to `squeezed` channels [-> RELU, its own
// node unless `fused_relu`] -> 1x1 CONV_2D to `out_channels` -> LOGISTIC ->
// MUL(x, gate) when the gate has x's channels [-> a convolution reading
// the product: 1x1 to `projected` channels, or a 3x3 depthwise with
// stride 2]. squeezed 0: no squeeze.
struct Gate {
  Shape in;
  int squeezed = 4, out_channels = -1;  // -1: the input's
  bool mean = false, fused_relu = false;
  enum class Reader { kNone, kPointwise, kDepthwise } reader = Reader::kNone;
  int projected = 8;
  bool gate_first = false;  // MUL(gate, x)
};

Graph SqueezeExcite(const Gate& c) {
  GraphBuilder b;
  const int x = b.Input(c.in);
  const int batch = c.in[0], channels = c.in[3], out_channels = c.out_channels < 0 ? channels : c.out_channels;
  const int pooled = b.Tensor({batch, 1, 1, channels});
  if (c.mean) {
    b.Op(OpKind::kMean, ops::ReducerAttributes{true}, {x, b.ConstantInt({2}, {1, 2})}, {pooled});
  } else {
    ops::PoolAttributes a;
    a.padding = Padding::kValid;
    a.filter_h = c.in[1];
    a.filter_w = c.in[2];
    b.Op(OpKind::kAveragePool2d, a, {x}, {pooled});
  }
  int mid = pooled, mid_channels = channels;
  if (c.squeezed > 0) {
    ops::Conv2dAttributes a;
    a.activation = c.fused_relu ? Activation::kRelu : Activation::kNone;
    mid = b.Tensor({batch, 1, 1, c.squeezed});
    b.Op(OpKind::kConv2d, a,
         {pooled, b.Constant({c.squeezed, 1, 1, channels}, Uniform(static_cast<size_t>(c.squeezed * channels), 21, 0.3f)),
          b.Constant({c.squeezed}, Uniform(static_cast<size_t>(c.squeezed), 22))},
         {mid});
    if (!c.fused_relu) {
      const int r = b.Tensor({batch, 1, 1, c.squeezed});
      b.Op(OpKind::kRelu, {}, {mid}, {r});
      mid = r;
    }
    mid_channels = c.squeezed;
  }
  const int expanded = b.Tensor({batch, 1, 1, out_channels}), gate = b.Tensor({batch, 1, 1, out_channels});
  b.Op(OpKind::kConv2d, ops::Conv2dAttributes{},
       {mid, b.Constant({out_channels, 1, 1, mid_channels}, Uniform(static_cast<size_t>(out_channels * mid_channels), 23, 0.5f)),
        b.Constant({out_channels}, Uniform(static_cast<size_t>(out_channels), 24))},
       {expanded});
  b.Op(OpKind::kLogistic, {}, {expanded}, {gate});
  if (out_channels != channels) {
    b.Output(gate);
    return b.Build();
  }
  const int y = b.Tensor(c.in);
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, c.gate_first ? std::vector<int>{gate, x} : std::vector<int>{x, gate},
       {y});
  if (c.reader == Gate::Reader::kPointwise) {
    const int z = b.Tensor({batch, c.in[1], c.in[2], c.projected});
    b.Op(OpKind::kConv2d, ops::Conv2dAttributes{},
         {y, b.Constant({c.projected, 1, 1, channels}, Uniform(static_cast<size_t>(c.projected * channels), 25, 0.3f)),
          b.Constant({c.projected}, Uniform(static_cast<size_t>(c.projected), 26))},
         {z});
    b.Output(z);
  } else if (c.reader == Gate::Reader::kDepthwise) {
    ops::DepthwiseConv2dAttributes a;
    a.stride_h = a.stride_w = 2;
    const int z = b.Tensor({batch, (c.in[1] + 1) / 2, (c.in[2] + 1) / 2, channels});
    b.Op(OpKind::kDepthwiseConv2d, a, {y, b.Constant({1, 3, 3, channels}, Uniform(static_cast<size_t>(9 * channels), 27, 0.5f))},
         {z});
    b.Output(z);
  } else {
    b.Output(y);
  }
  return b.Build();
}

TEST(FusionPlan, ASqueezeAndExcitationGateIsOneGroup) {
  Graph g = SqueezeExcite({.in = {1, 8, 8, 16}, .fused_relu = true});
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  // The pool and the squeeze first make a gate of their own, which the
  // expansion then takes in.
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].source, 0);
  EXPECT_EQ(plan.groups[0].producer, 1);
  EXPECT_EQ(plan.groups[0].head, 2);
  EXPECT_EQ(plan.groups[0].nodes(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.groups[1].head, 4);  // the MUL
}

TEST(FusionPlan, AGateOverALargeInputLeavesThePoolToItself) {
  // 64 x 64 x 32: 32768 vec4s, more than one workgroup pools quickly.
  Graph g = SqueezeExcite({.in = {1, 64, 64, 32}, .fused_relu = true});
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 3u);
  EXPECT_EQ(plan.groups[0].nodes(), std::vector<int>{0});
  EXPECT_EQ(plan.groups[1].source, -1);
  EXPECT_EQ(plan.groups[1].nodes(), (std::vector<int>{1, 2, 3}));
}

TEST(FusionPlan, AClassifiersHeadIsNoGate) {
  // A pool, then a 1x1 convolution summing 1024 channels per output: each
  // invocation alone would take longer than the dispatch saved.
  Graph g = SqueezeExcite({.in = {1, 7, 7, 1024}, .squeezed = 0, .out_channels = 1000});
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].nodes(), std::vector<int>{0});
  EXPECT_EQ(plan.groups[1].nodes(), (std::vector<int>{1, 2}));
  Graph gate = SqueezeExcite({.in = {1, 7, 7, 256}, .squeezed = 0});
  EXPECT_EQ(PlanFusion(WholeGraph(gate), true).groups[0].nodes(), (std::vector<int>{0, 1, 2}));
}

TEST(FusionPlan, ADepthwiseConvolutionIsComputedInThePointwiseOne) {
  Graph g = SeparableConv({.in = {1, 6, 7, 5}, .pad = true, .residual = true});
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].input_pad, 0);
  EXPECT_EQ(plan.groups[0].producer, 1);
  EXPECT_EQ(plan.groups[0].head, 2);
  EXPECT_EQ(plan.groups[0].nodes(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.groups[0].output, g.outputs[0]);
}

TEST(FusionPlan, ADepthwiseOutputReadTwiceOrByA3x3ConvolutionIsNotComputedInside) {
  // The depthwise output escapes as a graph output too.
  Graph escaping = SeparableConv({.in = {1, 6, 7, 5}});
  escaping.outputs.push_back(escaping.nodes[0].outputs[0]);
  EXPECT_EQ(PlanFusion(WholeGraph(escaping), true).groups.size(), 2u);
  // The consumer is a 3x3 convolution.
  GraphBuilder b;
  const int x = b.Input({1, 6, 7, 4}), m = b.Tensor({1, 6, 7, 4});
  b.Op(OpKind::kDepthwiseConv2d, ops::DepthwiseConv2dAttributes{}, {x, b.Constant({1, 3, 3, 4}, Uniform(36, 1))}, {m});
  b.Output(Conv(b, m, 4, 4, {1, 4, 5, 4}));
  Graph g = b.Build();
  EXPECT_EQ(PlanFusion(WholeGraph(g), true).groups.size(), 2u);
}

TEST(FusionPlan, ElementwiseChainsBecomeTailsOfTheirProducer) {
  Graph g = ElementwiseChain();
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].head, 0);
  EXPECT_EQ(plan.groups[0].tails, (std::vector<std::pair<int, int>>{{1, 0}, {2, 1}, {3, 0}}));
  EXPECT_EQ(plan.groups[0].output, g.outputs[0]);
  EXPECT_EQ(PlanFusion(WholeGraph(g), false).groups.size(), 4u);
}

TEST(FusionPlan, ATensorWithTwoConsumersIsNotFused) {
  GraphBuilder b;
  const int x = b.Input({1, 4, 4, 4});
  const int r = b.Tensor({1, 4, 4, 4}), y1 = b.Tensor({1, 4, 4, 4}), y2 = b.Tensor({1, 4, 4, 4});
  b.Op(OpKind::kRelu, {}, {x}, {r});
  b.Op(OpKind::kTanh, {}, {r}, {y1});
  b.Op(OpKind::kLogistic, {}, {r}, {y2});
  b.Output(y1);
  b.Output(y2);
  Graph g = b.Build();
  EXPECT_EQ(PlanFusion(WholeGraph(g), true).groups.size(), 3u);
}

TEST(FusionPlan, SpatialPadsAreReadThroughAndChannelPadsWritten) {
  for (OpKind op : {OpKind::kConv2d, OpKind::kMaxPool2d, OpKind::kAveragePool2d}) {
    Graph g = PadsIntoWindows(op);
    const FusionPlan plan = PlanFusion(WholeGraph(g), true);
    ASSERT_EQ(plan.groups.size(), 1u) << OpName(op);
    EXPECT_EQ(plan.groups[0].input_pad, 0);
    EXPECT_EQ(plan.groups[0].head, 1);
    EXPECT_EQ(plan.groups[0].pad.top, 1);
    EXPECT_EQ(plan.groups[0].pad.bottom, 1);
    EXPECT_EQ(plan.groups[0].pad.left, 2);
    EXPECT_EQ(plan.groups[0].pad.right, 1);
  }
  Graph g = ChannelPad();
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].output_pad, 1);
  EXPECT_EQ(plan.groups[1].head, 2);
}

TEST(FusionPlan, AChannelPadOperandIsReadThrough) {
  Graph g = ResidualWithChannelPad();
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].head, 0);
  EXPECT_EQ(plan.groups[0].tails, (std::vector<std::pair<int, int>>{{2, 0}, {3, 0}}));
  EXPECT_EQ(plan.groups[0].operand_pads.at(2), std::make_pair(1, 1));
  EXPECT_EQ(plan.groups[1].head, -1);  // the PAD's own dispatch is gone
  EXPECT_EQ(plan.groups[0].nodes(), (std::vector<int>{0, 1, 2, 3}));
}

// The groups that run, in order (an absorbed one's head is -1).
std::vector<FusedGroup> Running(const FusionPlan& plan) {
  std::vector<FusedGroup> running;
  for (const FusedGroup& g : plan.groups) {
    if (g.head >= 0) running.push_back(g);
  }
  return running;
}

TEST(FusionPlan, AGroupWhoseTailReadsALaterBranchRunsAfterIt) {
  Graph graph = StridedResidual();
  const std::vector<FusedGroup> groups = Running(PlanFusion(WholeGraph(graph), true));
  ASSERT_GE(groups.size(), 2u);
  // The pool writes the padded shortcut; the convolution (its depthwise
  // inside or just before) then adds it and applies the RELU.
  EXPECT_EQ(groups[groups.size() - 2].nodes(), (std::vector<int>{1, 3}));
  const std::vector<int> last = groups.back().nodes();
  EXPECT_EQ(std::vector<int>(last.end() - 3, last.end()), (std::vector<int>{2, 4, 5}));
}

TEST(FusionPlan, HeadsStoreIntoTheirConcatenationThroughTheReshapes) {
  auto running = [](Graph graph) { return Running(PlanFusion(WholeGraph(graph), true)); };
  const std::vector<FusedGroup> groups = running(DetectorHeads({.values = 16, .logistic = true}));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].nodes(), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(groups[1].nodes(), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(groups[0].output, groups[1].output);
  // The LOGISTIC reads the whole concatenation: a group of its own.
  EXPECT_EQ(groups[2].nodes(), std::vector<int>{5});
  // One value per anchor: each has a slot of its own.
  EXPECT_EQ(running(DetectorHeads({.values = 1})).size(), 2u);
  // Three: a slot's lanes would land in slots of two anchors; the RESHAPEs
  // stay dispatches, and they write their parts of the concatenation.
  const std::vector<FusedGroup> three = running(DetectorHeads({.values = 3}));
  ASSERT_EQ(three.size(), 4u);
  EXPECT_EQ(three[1].nodes(), (std::vector<int>{1, 4}));
  EXPECT_EQ(three[3].nodes(), (std::vector<int>{3, 4}));
  // Without the concatenation, each convolution stores through its RESHAPE.
  const std::vector<FusedGroup> apart = running(DetectorHeads({.values = 16, .concatenated = false}));
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(apart[0].nodes(), (std::vector<int>{0, 1}));
  // Over channels, each input's slots its own (the last input's padding the
  // output's), unless an input ends inside a slot that the next one fills.
  EXPECT_EQ(running(ConcatenatedConvs({.channels = {8, 5}})).size(), 2u);
  EXPECT_EQ(running(ConcatenatedConvs({.channels = {5, 8}})).size(), 3u);
}

TEST(FusionPlan, AConvolutionReadsTheGatedInputThroughTheGate) {
  Graph g = SqueezeExcite({.in = {1, 8, 8, 16}, .fused_relu = true, .reader = Gate::Reader::kPointwise});
  const FusionPlan plan = PlanFusion(WholeGraph(g), true);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[1].input_gate, 4);  // the MUL
  EXPECT_EQ(plan.groups[1].gate_operand, 1);
  EXPECT_EQ(plan.groups[1].nodes(), (std::vector<int>{4, 5}));
  Graph first = SqueezeExcite({.in = {1, 8, 8, 16}, .fused_relu = true, .reader = Gate::Reader::kPointwise, .gate_first = true});
  EXPECT_EQ(PlanFusion(WholeGraph(first), true).groups[1].gate_operand, 0);
  // A product read twice is stored: the MUL stays a group of its own.
  GraphBuilder b;
  const int x = b.Input({1, 4, 4, 8}), gate = b.Input({1, 1, 1, 8}), y = b.Tensor({1, 4, 4, 8});
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {x, gate}, {y});
  const int z = Conv(b, y, 8, 4, {1, 2, 2, 4});
  b.Output(y);
  b.Output(z);
  Graph twice = b.Build();
  EXPECT_EQ(PlanFusion(WholeGraph(twice), true).groups.size(), 2u);
}

// Fused and unfused on the GPU, on a GPU whose table asks for one output per
// convolution invocation and no split sums (where the planner's depthwise +
// 1x1 fusion runs as one output per invocation; lavapipe's table asks for
// blocks, which declines it, the H100's splits small convolutions' sums).
class FusionTest : public testing::DelegateTest {
 protected:
  void SetUp() override {
    testing::DelegateTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto delegate = WithTable([](tuning::Table& t) {
      t.conv_block_x = t.conv_block_slices = 1;
      t.split_conv_outputs = 1;
    });
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    delegate_ = std::move(*delegate);
  }

  absl::StatusOr<std::unique_ptr<GpuDelegate>> WithTable(const std::function<void(tuning::Table&)>& fill) {
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.validation = true;
    options.workgroups = tuning::Table{};
    fill(*options.workgroups);
    return GpuDelegate::Create(options);
  }

  // A table that splits every convolution's sums (one output a workgroup
  // row), and the fused pairs' too where `fused`.
  absl::StatusOr<std::unique_ptr<GpuDelegate>> SplittingSums(bool fused) {
    return WithTable([fused](tuning::Table& t) {
      t.split_conv_outputs = 1 << 20;
      if (fused) t.split_fused_sums = true;
      t.conv_block_x = t.conv_block_slices = 1;
    });
  }
};

TEST_P(FusionTest, FusedGraphsMatchAndDispatchLess) {
  struct Case {
    const char* name;
    Graph graph;
  };
  std::vector<Case> cases = {{"elementwise chain", ElementwiseChain()},
                             {"pad into conv", PadsIntoWindows(OpKind::kConv2d)},
                             {"pad into max pool", PadsIntoWindows(OpKind::kMaxPool2d)},
                             {"pad into average pool", PadsIntoWindows(OpKind::kAveragePool2d)},
                             {"channel pad", ChannelPad()},
                             {"residual channel pad", ResidualWithChannelPad()},
                             {"folded constants", FoldableConstants()},
                             {"separable", SeparableConv({.in = {1, 9, 11, 6}})},
                             {"separable, two images, stride 2, multiplier 2, no depthwise bias",
                              SeparableConv({.in = {2, 9, 11, 3}, .multiplier = 2, .stride = 2, .bias = false,
                                             .pointwise_activation = Activation::kRelu})},
                             {"pad into a separable with a residual",
                              SeparableConv({.in = {1, 7, 6, 5}, .out_channels = 5, .pad = true, .residual = true})},
                             // 150 depthwise slices: a few pixels per tile;
                             // 18 output slices: two workgroups across.
                             {"separable, deep and wide",
                              SeparableConv({.in = {1, 24, 24, 600}, .out_channels = 70})},
                             {"strided residual, the shortcut made after the convolution's input",
                              StridedResidual()},
                             {"detector scores, a value per anchor", DetectorHeads({.values = 1})},
                             {"detector boxes, 16 values per anchor, a LOGISTIC after",
                              DetectorHeads({.values = 16, .logistic = true})},
                             {"3 values per anchor: the reshapes write into the concatenation",
                              DetectorHeads({.values = 3})},
                             {"heads reshaped, not concatenated", DetectorHeads({.values = 1, .concatenated = false})},
                             {"convolutions concatenated over channels, RELU6",
                              ConcatenatedConvs({.channels = {8, 5}, .activation = Activation::kRelu6})},
                             {"over width, 3 channels each", ConcatenatedConvs({.channels = {3, 3}, .axis = 2})},
                             {"two images over height", ConcatenatedConvs({.channels = {6, 6}, .axis = 1, .batch = 2})},
                             {"two images over the batch", ConcatenatedConvs({.channels = {5, 5}, .axis = 0, .batch = 2})},
                             {"squeeze-and-excitation gate", SqueezeExcite({.in = {1, 9, 7, 20}, .squeezed = 6})},
                             {"gate over a MEAN, two images", SqueezeExcite({.in = {2, 5, 6, 12}, .mean = true})},
                             // 100 slices: one invocation each pools a slice.
                             {"gate over 400 channels", SqueezeExcite({.in = {1, 4, 3, 400}, .squeezed = 100})},
                             // 150 output slices: two workgroups.
                             {"gate to 600 channels",
                              SqueezeExcite({.in = {1, 6, 6, 24}, .squeezed = 8, .out_channels = 600})},
                             {"gate without a squeeze", SqueezeExcite({.in = {1, 5, 5, 36}, .squeezed = 0})},
                             {"gate over a large input, the pool apart",
                              SqueezeExcite({.in = {1, 64, 64, 32}, .squeezed = 8})},
                             {"gated input read by a 1x1 convolution",
                              SqueezeExcite({.in = {1, 9, 7, 20}, .squeezed = 6, .reader = Gate::Reader::kPointwise,
                                             .projected = 12})},
                             {"gate first, two images, read by a 1x1 convolution",
                              SqueezeExcite({.in = {2, 5, 6, 12}, .mean = true, .reader = Gate::Reader::kPointwise,
                                             .gate_first = true})},
                             {"gated input read by a depthwise convolution",
                              SqueezeExcite({.in = {1, 11, 10, 24}, .reader = Gate::Reader::kDepthwise})}};
  uint32_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<std::vector<float>> inputs = UniformInputs(c.graph, seed);
    seed += static_cast<uint32_t>(c.graph.inputs.size());
    const auto cpu = Run(c.graph, inputs, nullptr);
    const auto fused = Run(c.graph, inputs, delegate_.get());
    const size_t fused_dispatches = delegate_->last_dispatch_count();
    const auto unfused = Run(c.graph, inputs, &Unfused());
    const size_t unfused_dispatches = Unfused().last_dispatch_count();
    ExpectNear(fused, cpu, 2.0);
    ExpectNear(unfused, cpu, 2.0);
    EXPECT_LT(fused_dispatches, unfused_dispatches);
  }
}

// The pool, the squeeze (its RELU folded in by the graph passes) and the
// expansion with its LOGISTIC: one dispatch where fusion made three. A 1x1
// convolution after the MUL by the gate reads the MUL's product through it:
// no dispatch for the MUL either.
TEST_P(FusionTest, AGateIsOneDispatchAndTheConvolutionAfterItReadsThroughIt) {
  struct Case {
    const char* name;
    Graph graph;
    size_t fused, unfused;  // dispatches, the input's and the output's conversions among them
  };
  const Case cases[] = {{"gate, MUL", SqueezeExcite({.in = {1, 16, 16, 96}, .squeezed = 24}), 4, 8},
                        {"gate, 1x1 convolution of the MUL",
                         SqueezeExcite({.in = {1, 16, 16, 96}, .squeezed = 24, .reader = Gate::Reader::kPointwise,
                                        .projected = 40}),
                         4, 9}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<std::vector<float>> inputs = {Uniform(16 * 16 * 96, 79)};
    const auto cpu = Run(c.graph, inputs, nullptr);
    ExpectNear(Run(c.graph, inputs, delegate_.get()), cpu, 2.0);
    ExpectNear(Run(c.graph, inputs, &Unfused()), cpu, 2.0);
    EXPECT_EQ(delegate_->last_dispatch_count(), c.fused);
    EXPECT_EQ(Unfused().last_dispatch_count(), c.unfused);
  }
  EXPECT_THAT(delegate_->device().validation_messages(), ::testing::IsEmpty());
}

// A table's larger workgroup for the gates (more loads in flight while
// pooling): the same numbers and dispatches as with 128 invocations; 1024
// is halved until the partial sums fit in shared memory. A pool too large
// for the gate (the last graph's 20480 vec4s) splits its window over as
// many, up to 512 (its partial sums and counts in 16 KB).
TEST_P(FusionTest, AGateInTheTablesLargerWorkgroupMatches) {
  const Graph graphs[] = {SqueezeExcite({.in = {1, 16, 16, 96}, .squeezed = 24}),
                          SqueezeExcite({.in = {2, 5, 6, 12}, .mean = true}),
                          SqueezeExcite({.in = {1, 4, 3, 400}, .squeezed = 100}),
                          SqueezeExcite({.in = {1, 6, 6, 24}, .squeezed = 8, .out_channels = 600}),
                          SqueezeExcite({.in = {1, 64, 64, 20}, .squeezed = 8})};
  for (const int invocations : {256, 512, 1024}) {
    SCOPED_TRACE(invocations);
    auto delegate = WithTable([&](tuning::Table& t) {
      t.conv_block_x = t.conv_block_slices = 1;
      t.gate_invocations = invocations;
    });
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    uint32_t seed = 90;
    for (const Graph& g : graphs) {
      const std::vector<std::vector<float>> inputs = {
          Uniform(static_cast<size_t>(NumElements(g.tensors[static_cast<size_t>(g.inputs[0])].shape)), seed++)};
      const auto cpu = Run(g, inputs, nullptr);
      ExpectNear(Run(g, inputs, delegate->get()), cpu, 2.0);
      ExpectNear(Run(g, inputs, delegate_.get()), cpu, 2.0);
      EXPECT_EQ((*delegate)->last_dispatch_count(), delegate_->last_dispatch_count());
      uint32_t widest = 0, pool = 0;
      for (const auto& d : (*delegate)->dispatch_infos().back()) {  // this graph's
        if (d.name.find("SQUEEZE_EXCITE") != std::string::npos) widest = std::max(widest, d.workgroup[0]);
        if (d.name.find("AVERAGE_POOL_2D") != std::string::npos && d.name.find("fused") == std::string::npos) {
          pool = std::max(pool, d.workgroup[0]);
        }
      }
      EXPECT_GE(widest, 256u);
      EXPECT_LE(widest, static_cast<uint32_t>(invocations));
      if (&g == &graphs[4]) {
        EXPECT_EQ(pool, static_cast<uint32_t>(std::min(invocations, 512)));
      }
    }
    EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
  }
}

// A table that has more convolutions split their sums (a GPU with many
// cores) and says split_fused_sums splits the fused shader's sums too with
// fp16 storage: each output vec4 summed by kSplitInvocations invocations (a
// workgroup's z), one dispatch as without splits. In fp32 the split
// convolution sums a channel per lane instead, and the 1x1 convolution
// declines the depthwise one the planner gave it: two dispatches, the
// group's other fusions kept; so it does without split_fused_sums.
TEST_P(FusionTest, AConvolutionThatSplitsItsSumsSplitsTheFusedOne) {
  struct Case {
    const char* name;
    Graph graph;
  };
  const Case cases[] = {
      {"9216 output vec4s", SeparableConv({.in = {1, 48, 48, 64}, .out_channels = 16})},
      // 2 output slices: 8 pixels a tile, 17 tiles (fewer do not pay), the
      // last one 6 past the last pixel.
      {"a tile past the last pixel", SeparableConv({.in = {1, 13, 10, 70}})},
      // 17 output slices: two rows of 9, one past the last.
      {"an output slice past the last, two images, stride 2, multiplier 2",
       SeparableConv({.in = {2, 9, 11, 32}, .multiplier = 2, .stride = 2, .out_channels = 68, .bias = false})},
      {"a PAD read through, an ADD after",
       SeparableConv({.in = {1, 12, 10, 64}, .out_channels = 12, .pad = true, .residual = true})}};
  auto splitting = SplittingSums(true);
  auto apart = SplittingSums(false);
  ASSERT_TRUE(splitting.ok()) << splitting.status();
  ASSERT_TRUE(apart.ok()) << apart.status();
  uint32_t seed = 77;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<std::vector<float>> inputs = UniformInputs(c.graph, seed);
    seed += 2;
    const auto cpu = Run(c.graph, inputs, nullptr);
    ExpectNear(Run(c.graph, inputs, delegate_.get()), cpu, 2.0);
    ExpectNear(Run(c.graph, inputs, splitting->get()), cpu, 2.0);
    ExpectNear(Run(c.graph, inputs, apart->get()), cpu, 2.0);
    ExpectNear(Run(c.graph, inputs, &Unfused()), cpu, 2.0);
    uint32_t split_parts = 0;
    for (const auto& d : (*splitting)->dispatch_infos().back()) {
      if (d.name.find("DEPTHWISE_CONV_2D_CONV_2D") != std::string::npos) split_parts = d.workgroup[2];
    }
    const bool fp16 = GetParam().fp16;
    EXPECT_EQ(split_parts, fp16 ? static_cast<uint32_t>(ops::kSplitInvocations) : 0u);
    EXPECT_EQ((*splitting)->last_dispatch_count(), delegate_->last_dispatch_count() + (fp16 ? 0 : 1));
    EXPECT_LT(delegate_->last_dispatch_count(), Unfused().last_dispatch_count());
    EXPECT_EQ((*apart)->last_dispatch_count(), delegate_->last_dispatch_count() + 1);
  }
  EXPECT_THAT((*splitting)->device().validation_messages(), ::testing::IsEmpty());
  EXPECT_THAT((*apart)->device().validation_messages(), ::testing::IsEmpty());
}

// Where split fused sums were measured slower (docs/perf.md), the pair
// stays two dispatches with the table's field on too: a pixel's pointwise
// filter too large for a workgroup a pixel (palm_detection's 24 x 24 x 128
// blocks: 32 x 32 slices over 576 pixels), or too few workgroups to fill
// the GPU (7 x 7 pixels into two output slices: 7 tiles of 8 pixels).
TEST_P(FusionTest, SplitFusedSumsStayApartWhereTheyDoNotPay) {
  auto splitting = SplittingSums(true);
  auto apart = SplittingSums(false);
  ASSERT_TRUE(splitting.ok()) << splitting.status();
  ASSERT_TRUE(apart.ok()) << apart.status();
  uint32_t seed = 91;
  for (const Graph& g : {SeparableConv({.in = {1, 24, 24, 128}, .out_channels = 128}),
                         SeparableConv({.in = {1, 7, 7, 288}, .out_channels = 6})}) {
    const std::vector<std::vector<float>> inputs = UniformInputs(g, seed);
    seed += 2;
    const auto cpu = Run(g, inputs, nullptr);
    ExpectNear(Run(g, inputs, splitting->get()), cpu, 2.0);
    ExpectNear(Run(g, inputs, apart->get()), cpu, 2.0);
    EXPECT_EQ((*splitting)->last_dispatch_count(), (*apart)->last_dispatch_count());
    for (const auto& d : (*splitting)->dispatch_infos().back()) {
      EXPECT_EQ(d.name.find("DEPTHWISE_CONV_2D_CONV_2D"), std::string::npos) << d.name;
    }
  }
}

// So does a table that has convolutions compute blocks of outputs (a
// compute-bound GPU): the fused shader sums one output per invocation.
TEST_P(FusionTest, AConvolutionInBlocksLeavesItsDepthwiseToItself) {
  const Graph g = SeparableConv({.in = {1, 20, 24, 12}, .out_channels = 16});
  const std::vector<std::vector<float>> inputs = {Uniform(20 * 24 * 12, 78)};
  auto blocking = WithTable([](tuning::Table& t) {
    t.conv_block_x = 8;
    t.conv_block_slices = 2;
  });
  ASSERT_TRUE(blocking.ok()) << blocking.status();
  const auto cpu = Run(g, inputs, nullptr);
  ExpectNear(Run(g, inputs, delegate_.get()), cpu, 2.0);
  ExpectNear(Run(g, inputs, blocking->get()), cpu, 2.0);
  ExpectNear(Run(g, inputs, &Unfused()), cpu, 2.0);
  EXPECT_LT(delegate_->last_dispatch_count(), (*blocking)->last_dispatch_count());
  EXPECT_EQ((*blocking)->last_dispatch_count(), Unfused().last_dispatch_count());
  EXPECT_THAT((*blocking)->device().validation_messages(), ::testing::IsEmpty());
}

// The planner gives elementwise tails and a channel PAD to any producer, but
// a SOFTMAX over 16 slices or more reduces in a workgroup and stores its
// outputs itself (so does an LSTM): its tails then run as dispatches of
// their own, rather than being dropped with their outputs never written.
TEST_P(FusionTest, AProducerThatStoresItselfLeavesItsTailsToThemselves) {
  GraphBuilder b;
  const int x = b.Input({1, 2, 3, 70}), other = b.Input({1, 2, 3, 70});
  const int soft = b.Tensor({1, 2, 3, 70}), scaled = b.Tensor({1, 2, 3, 70}), sum = b.Tensor({1, 2, 3, 70}),
            padded = b.Tensor({1, 2, 3, 75});
  b.Op(OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {x}, {soft});
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {soft, b.Constant({70}, Uniform(70, 3, 30.0f))}, {scaled});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{Activation::kRelu}, {scaled, other}, {sum});
  b.Op(OpKind::kPad, {}, {sum, b.ConstantInt({4, 2}, {0, 0, 0, 0, 0, 0, 0, 5})}, {padded});
  b.Output(padded);
  Graph g = b.Build();
  EXPECT_EQ(PlanFusion(WholeGraph(g), true).groups[0].tails.size(), 2u);
  const std::vector<std::vector<float>> inputs = {Uniform(420, 81, 4.0f), Uniform(420, 82)};
  const auto cpu = Run(g, inputs, nullptr);
  ExpectNear(Run(g, inputs, delegate_.get()), cpu, 2.0);
  ExpectNear(Run(g, inputs, &Unfused()), cpu, 2.0);
  EXPECT_THAT(delegate_->device().validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, FusionTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
