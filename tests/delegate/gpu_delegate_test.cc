// The GPU delegate's op generators against the CPU reference kernels: odd
// shapes, every stride/padding/dilation variant, broadcast forms, channel
// counts that are and are not multiples of 4, on both APIs and both
// precisions (docs/design.md section 5 op bounds).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>

#include "model/fp16.h"
#include "model/op_kind.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::Uniform;
using GpuDelegateTest = testing::DelegateTest;
using testing::OneOp;

struct ConvCase {
  int h, w, ci, co, k, stride, dilation;
  Padding padding;
  Activation activation;
  bool bias;
};

TEST_P(GpuDelegateTest, Conv2dMatchesTheCpu) {
  const ConvCase cases[] = {
      {7, 9, 5, 6, 3, 1, 1, Padding::kSame, Activation::kNone, true},
      {8, 8, 3, 16, 3, 2, 1, Padding::kSame, Activation::kRelu6, true},
      {9, 7, 4, 5, 3, 2, 2, Padding::kValid, Activation::kRelu, false},
      {5, 6, 17, 9, 1, 1, 1, Padding::kValid, Activation::kNone, true},
      {6, 6, 8, 4, 2, 2, 1, Padding::kSame, Activation::kTanh, true},
      {10, 3, 1, 1, 5, 3, 1, Padding::kSame, Activation::kReluN1To1, true},
      // Deep inputs, few outputs: the split-reduction shader.
      {4, 5, 70, 9, 3, 1, 1, Padding::kSame, Activation::kRelu, true},
      {7, 7, 128, 40, 1, 1, 1, Padding::kValid, Activation::kNone, false},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << "x" << c.ci << " -> " << c.co << " k" << c.k << " s" << c.stride);
    GraphBuilder b;
    const int x = b.Input({1, c.h, c.w, c.ci});
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.k * c.k * c.ci));
    const int w = b.Constant({c.co, c.k, c.k, c.ci}, Uniform(static_cast<size_t>(c.co * c.k * c.k * c.ci), seed++, scale));
    std::vector<int> inputs = {x, w};
    if (c.bias) inputs.push_back(b.Constant({c.co}, Uniform(static_cast<size_t>(c.co), seed++)));
    const int eff = (c.k - 1) * c.dilation + 1;
    const int oh = c.padding == Padding::kSame ? (c.h + c.stride - 1) / c.stride : (c.h - eff + c.stride) / c.stride;
    const int ow = c.padding == Padding::kSame ? (c.w + c.stride - 1) / c.stride : (c.w - eff + c.stride) / c.stride;
    const int y = b.Tensor({1, oh, ow, c.co});
    Conv2dAttributes a;
    a.padding = c.padding;
    a.stride_w = a.stride_h = c.stride;
    a.dilation_w = a.dilation_h = c.dilation;
    a.activation = c.activation;
    b.Op(OpKind::kConv2d, a, inputs, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), {Uniform(static_cast<size_t>(c.h * c.w * c.ci), seed++)});
  }
}

TEST_P(GpuDelegateTest, DepthwiseConv2dMatchesTheCpu) {
  uint32_t seed = 100;
  for (int channels : {1, 5, 8, 17}) {
    for (int stride : {1, 2}) {
      GraphBuilder b;
      const int x = b.Input({1, 9, 7, channels});
      const int w = b.Constant({1, 3, 3, channels}, Uniform(static_cast<size_t>(9 * channels), seed++, 1.0f / 3));
      const int bias = b.Constant({channels}, Uniform(static_cast<size_t>(channels), seed++));
      const int y = b.Tensor({1, (9 + stride - 1) / stride, (7 + stride - 1) / stride, channels});
      DepthwiseConv2dAttributes a;
      a.stride_w = a.stride_h = stride;
      a.activation = Activation::kRelu6;
      b.Op(OpKind::kDepthwiseConv2d, a, {x, w, bias}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(static_cast<size_t>(63 * channels), seed++)});
    }
  }
}

TEST_P(GpuDelegateTest, FullyConnectedMatchesTheCpu) {
  GraphBuilder b;
  const int x = b.Input({2, 13});
  const int w = b.Constant({7, 13}, Uniform(91, 5, 0.3f));
  const int bias = b.Constant({7}, Uniform(7, 6));
  const int y = b.Tensor({2, 7});
  b.Op(OpKind::kFullyConnected, FullyConnectedAttributes{Activation::kRelu, false}, {x, w, bias}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {Uniform(26, 7)});
}

TEST_P(GpuDelegateTest, UnaryOpsMatchTheCpu) {
  for (OpKind op : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                    OpKind::kHardSwish, OpKind::kExp, OpKind::kElu, OpKind::kLeakyRelu}) {
    SCOPED_TRACE(OpName(op));
    GraphBuilder b;
    const int x = b.Input({1, 5, 3, 7});
    const int y = b.Tensor({1, 5, 3, 7});
    Attributes a;
    if (op == OpKind::kLeakyRelu) a = LeakyReluAttributes{0.1f};
    b.Op(op, a, {x}, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), {Uniform(105, 11, 4.0f)});
  }
}

TEST_P(GpuDelegateTest, BinaryOpsInTheirBroadcastFormsMatchTheCpu) {
  const Shape full{1, 4, 5, 6};
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kMaximum, OpKind::kMinimum, OpKind::kSquaredDifference}) {
    SCOPED_TRACE(OpName(op));
    const Attributes a = (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul)
                             ? Attributes{ElementwiseAttributes{Activation::kRelu6}}
                             : Attributes{};
    {  // two activations of one shape
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input(full), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 1), Uniform(120, 2)});
    }
    {  // a per-channel constant [C] and a scalar constant
      GraphBuilder b;
      const int x = b.Input(full), t = b.Tensor(full), y = b.Tensor(full);
      b.Op(op, a, {x, b.Constant({6}, Uniform(6, 3))}, {t});
      b.Op(op, a, {b.Constant({1}, {0.75f}), t}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 4)});
    }
    {  // [1,H,W,C] x [1,1,1,C] activation
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input({1, 1, 1, 6}), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 5), Uniform(6, 6)});
    }
  }
}

TEST_P(GpuDelegateTest, PreluWithPerChannelAlpha) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 4, 5}), y = b.Tensor({1, 3, 4, 5});
  b.Op(OpKind::kPrelu, {}, {x, b.Constant({1, 1, 5}, Uniform(5, 9))}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {Uniform(60, 10)});
}

TEST_P(GpuDelegateTest, UnsupportedNodesSayWhy) {
  GraphBuilder b;
  const int x = b.Input({2, 8}), w = b.Input({4, 8}), y = b.Tensor({2, 4});
  b.Op(OpKind::kFullyConnected, FullyConnectedAttributes{}, {x, w}, {y});
  b.Output(y);
  const Graph graph = b.Build();
  const NodeSupport support = delegate_->IsNodeSupported(graph, 0);
  EXPECT_FALSE(support.supported);
  EXPECT_THAT(support.reason, ::testing::HasSubstr("the weights must be constant"));
}

std::vector<uint8_t> IntBytes(std::initializer_list<int32_t> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

TEST_P(GpuDelegateTest, DepthwiseWithMultiplierMatchesTheCpu) {
  for (auto [h, c, m, stride] : {std::array<int, 4>{6, 3, 2, 1}, std::array<int, 4>{5, 5, 3, 2}}) {
    OneOp g;
    const int x = g.Input({1, h, 5, c});
    DepthwiseConv2dAttributes a;
    a.stride_h = a.stride_w = stride;
    a.depth_multiplier = m;
    const int oh = (h + stride - 1) / stride, ow = (5 + stride - 1) / stride;
    g.Out(g.Op(OpKind::kDepthwiseConv2d, a, {x, g.Const({1, 3, 3, c * m}, 1.0f / 3), g.Const({c * m})},
               {{1, oh, ow, c * m}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, FullyConnectedOverSpatialInputs) {
  {  // flattening: [1,3,3,5] -> 45 features
    OneOp g;
    const int x = g.Input({1, 3, 3, 5});
    g.Out(g.Op(OpKind::kFullyConnected, FullyConnectedAttributes{}, {x, g.Const({7, 45}, 0.15f), g.Const({7})}, {{1, 7}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // keep_num_dims: one row per pixel
    OneOp g;
    const int x = g.Input({1, 2, 3, 6});
    g.Out(g.Op(OpKind::kFullyConnected, FullyConnectedAttributes{Activation::kRelu, true}, {x, g.Const({5, 6}, 0.4f)},
               {{1, 2, 3, 5}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, BinaryOpsWithNumpyBroadcasting) {
  const Shape full{1, 4, 5, 6};
  for (const Shape& other : {Shape{1, 4, 5, 1}, Shape{1, 1, 5, 6}, Shape{1, 4, 1, 6}, Shape{1, 5, 6}, Shape{6}, Shape{1, 1, 1, 1}}) {
    SCOPED_TRACE(ShapeToString(other));
    OneOp g;
    const int x = g.Input(full), z = g.Input(other);
    g.Out(g.Op(OpKind::kSub, ElementwiseAttributes{}, {z, x}, {full}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // a full-shape constant and DIV by positive values
    OneOp g;
    const int x = g.Input(full);
    const int k = g.b.Constant(full, [&] {
      auto v = Uniform(120, 77);
      for (float& f : v) f = 1.5f + f;
      return v;
    }());
    g.Out(g.Op(OpKind::kDiv, ElementwiseAttributes{}, {x, k}, {full}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // RSQRT of positive values
    OneOp g;
    g.data.push_back([] {
      auto v = Uniform(30, 78);
      for (float& f : v) f = 1.2f + f;
      return v;
    }());
    const int x = g.b.Input({1, 2, 3, 5});
    g.Out(g.Op(OpKind::kRsqrt, {}, {x}, {{1, 2, 3, 5}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, PoolsMatchTheCpu) {
  struct Case {
    OpKind op;
    Padding padding;
    int filter, stride;
    Activation activation;
    int oh, ow;
  };
  for (const Case& c : {Case{OpKind::kMaxPool2d, Padding::kSame, 3, 2, Activation::kNone, 4, 5},
                        Case{OpKind::kMaxPool2d, Padding::kValid, 2, 2, Activation::kRelu6, 3, 4},
                        Case{OpKind::kAveragePool2d, Padding::kSame, 3, 1, Activation::kNone, 7, 9},
                        Case{OpKind::kAveragePool2d, Padding::kValid, 3, 2, Activation::kRelu, 3, 4}}) {
    for (int channels : {5, 8}) {
      OneOp g;
      const int x = g.Input({1, 7, 9, channels});
      Pool2dAttributes a;
      a.padding = c.padding;
      a.filter_h = a.filter_w = c.filter;
      a.stride_h = a.stride_w = c.stride;
      a.activation = c.activation;
      g.Out(g.Op(c.op, a, {x}, {{1, c.oh, c.ow, channels}}));
      ExpectSameAsCpu(g.b.Build(), g.data);
    }
  }
}

// Windows of hundreds of values over few outputs take the split-reduction
// shader (128 invocations per output, combined through shared memory), with
// windows cut by the edges (averaged over what they hold) included.
TEST_P(GpuDelegateTest, LargePoolWindowsMatchTheCpu) {
  struct Case {
    OpKind op;
    Shape in;
    Padding padding;
    int filter_h, filter_w, stride;
    Activation activation;
    Shape out;
  };
  for (const Case& c : {Case{OpKind::kAveragePool2d, {1, 20, 24, 6}, Padding::kValid, 20, 24, 1, Activation::kNone, {1, 1, 1, 6}},
                        Case{OpKind::kMaxPool2d, {1, 20, 24, 6}, Padding::kValid, 20, 24, 1, Activation::kNone, {1, 1, 1, 6}},
                        Case{OpKind::kAveragePool2d, {1, 30, 30, 3}, Padding::kSame, 17, 17, 16, Activation::kRelu6, {1, 2, 2, 3}},
                        Case{OpKind::kMaxPool2d, {1, 30, 30, 5}, Padding::kSame, 17, 17, 16, Activation::kRelu, {1, 2, 2, 5}}}) {
    SCOPED_TRACE(std::string(c.op == OpKind::kMaxPool2d ? "max" : "average") + " pool over " + ShapeToString(c.in));
    OneOp g;
    const int x = g.Input(c.in);
    Pool2dAttributes a;
    a.padding = c.padding;
    a.filter_h = c.filter_h;
    a.filter_w = c.filter_w;
    a.stride_h = a.stride_w = c.stride;
    a.activation = c.activation;
    g.Out(g.Op(c.op, a, {x}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
    const auto& infos = delegate_->dispatch_infos().back();
    EXPECT_TRUE(std::any_of(infos.begin(), infos.end(), [](const GpuDelegate::DispatchInfo& d) {
      return d.workgroup == tuning::Workgroup{128, 1, 1};
    })) << "no split-reduction dispatch";
  }
  {  // fused into one dispatch with a PAD before (its zeros are averaged in) and a MUL after
    OneOp g;
    const int x = g.Input({1, 30, 28, 6});
    const int padded = g.Op(OpKind::kPad, {}, {x, g.b.ConstantInt({4, 2}, {0, 0, 1, 2, 2, 1, 0, 0})}, {{1, 33, 31, 6}})[0];
    Pool2dAttributes a;
    a.padding = Padding::kValid;
    a.filter_h = a.filter_w = 17;
    a.stride_h = a.stride_w = 16;
    const int pooled = g.Op(OpKind::kAveragePool2d, a, {padded}, {{1, 2, 1, 6}})[0];
    g.Out(g.Op(OpKind::kMul, ElementwiseAttributes{}, {pooled, g.Const({6})}, {{1, 2, 1, 6}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
    const auto& infos = delegate_->dispatch_infos().back();
    EXPECT_TRUE(std::any_of(infos.begin(), infos.end(), [](const GpuDelegate::DispatchInfo& d) {
      return d.workgroup == tuning::Workgroup{128, 1, 1} && d.nodes.size() == 3;
    })) << "PAD, pool and MUL are not one split-reduction dispatch";
  }
}

TEST_P(GpuDelegateTest, PadInEveryDimension) {
  struct Case {
    Shape in;
    std::vector<int32_t> paddings;
    Shape out;
  };
  for (const Case& c : {Case{{1, 4, 5, 6}, {0, 0, 1, 2, 2, 1, 0, 0}, {1, 7, 8, 6}},
                        Case{{1, 4, 5, 6}, {0, 0, 0, 0, 0, 0, 0, 3}, {1, 4, 5, 9}},
                        Case{{1, 4, 5, 6}, {0, 0, 0, 0, 0, 0, 4, 1}, {1, 4, 5, 11}},
                        Case{{1, 4, 5, 6}, {0, 0, 1, 0, 0, 1, 2, 1}, {1, 5, 6, 9}},
                        Case{{1, 4, 5, 6}, {1, 0, 0, 0, 0, 0, 0, 0}, {2, 4, 5, 6}},
                        Case{{3, 5}, {1, 1, 2, 0}, {5, 7}}}) {
    OneOp g;
    const int x = g.Input(c.in);
    const int rank = static_cast<int>(c.in.size());
    g.Out(g.Op(OpKind::kPad, {}, {x, g.b.ConstantInt({rank, 2}, c.paddings)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, SlicesAndTransposes) {
  {
    OneOp g;
    const int x = g.Input({1, 6, 7, 9});
    g.Out(g.Op(OpKind::kSlice, {}, {x, g.b.ConstantInt({4}, {0, 1, 2, 3}), g.b.ConstantInt({4}, {1, 3, 4, 5})},
               {{1, 3, 4, 5}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  struct Strided {
    Shape in;
    std::vector<int32_t> begin, end, strides;
    int shrink;
    Shape out;
  };
  for (const Strided& c : {Strided{{1, 6, 7, 9}, {0, 1, 0, 1}, {1, 6, 7, 9}, {1, 2, 3, 2}, 0, {1, 3, 3, 4}},
                           Strided{{1, 6, 7, 9}, {0, 5, 6, 8}, {1, 0, 0, 0}, {1, -1, -2, -3}, 0, {1, 5, 3, 3}},
                           Strided{{2, 4, 5, 6}, {1, 0, 0, 0}, {2, 4, 5, 6}, {1, 1, 1, 1}, 1, {4, 5, 6}}}) {
    OneOp g;
    const int x = g.Input(c.in);
    StridedSliceAttributes a;
    a.shrink_axis_mask = c.shrink;
    g.Out(g.Op(OpKind::kStridedSlice, a,
               {x, g.b.ConstantInt({4}, c.begin), g.b.ConstantInt({4}, c.end), g.b.ConstantInt({4}, c.strides)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  struct Perm {
    Shape in;
    std::vector<int32_t> perm;
    Shape out;
  };
  for (const Perm& c : {Perm{{1, 3, 4, 5}, {0, 2, 1, 3}, {1, 4, 3, 5}}, Perm{{1, 3, 4, 5}, {0, 3, 1, 2}, {1, 5, 3, 4}},
                        Perm{{2, 3, 5}, {2, 0, 1}, {5, 2, 3}}}) {
    OneOp g;
    const int x = g.Input(c.in);
    g.Out(g.Op(OpKind::kTranspose, {}, {x, g.b.ConstantInt({static_cast<int>(c.perm.size())}, c.perm)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, TransposedConvolutions) {
  struct Case {
    Padding padding;
    int stride;
    bool bias;
    Shape out;
  };
  for (const Case& c : {Case{Padding::kSame, 2, true, {1, 8, 10, 3}}, Case{Padding::kValid, 2, false, {1, 9, 11, 3}},
                        Case{Padding::kSame, 1, true, {1, 4, 5, 3}}}) {
    OneOp g;
    const int x = g.Input({1, 4, 5, 6});
    TransposeConvAttributes a;
    a.padding = c.padding;
    a.stride_h = a.stride_w = c.stride;
    std::vector<int> ins = {g.b.ConstantInt({4}, std::vector<int32_t>(c.out.begin(), c.out.end())),
                            g.Const({3, 3, 3, 6}, 0.2f), x};
    if (c.bias) ins.push_back(g.Const({3}));
    g.Out(g.Op(OpKind::kTransposeConv, a, ins, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  // MediaPipe's Convolution2DTransposeBias, SAME and VALID.
  for (auto [padding, out] : {std::pair{1, Shape{1, 8, 9, 3}}, std::pair{2, Shape{1, 10, 12, 3}}}) {
    OneOp g;
    const int x = g.Input({1, 4, 5, 6});
    g.Out(g.Op(OpKind::kCustom, CustomAttributes{"Convolution2DTransposeBias", IntBytes({padding, 2, 2})},
               {x, g.Const({3, 4, 4, 6}, 0.2f), g.Const({3})}, {out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(GpuDelegateTest, MaxPoolingWithArgmaxAndUnpooling) {
  // Distinct values exactly representable in fp16, so that no two taps tie
  // after rounding and the argmax is the same on every path.
  std::vector<float> values(240);
  for (size_t i = 0; i < values.size(); ++i) values[i] = (static_cast<float>(i) - 120.0f) / 128.0f;
  std::shuffle(values.begin(), values.end(), std::mt19937(5));
  for (int padding : {1, 2}) {
    GraphBuilder b;
    const int x = b.Input({1, 6, 8, 5});
    const int v = b.Tensor({1, 3, 4, 5}), i = b.Tensor({1, 3, 4, 5}), y = b.Tensor({1, 6, 8, 5});
    const std::vector<uint8_t> options = IntBytes({padding, 2, 2, 2, 2, 0});
    b.Op(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", options}, {x}, {v, i});
    b.Op(OpKind::kCustom, CustomAttributes{"MaxUnpooling2D", options}, {v, i}, {y});
    for (int t : {v, i, y}) b.Output(t);
    ExpectSameAsCpu(b.Build(), {values});
  }
}

// fp16 really stores halves: x + 0 comes back rounded to fp16.
TEST_P(GpuDelegateTest, Fp16PrecisionStoresHalves) {
  GraphBuilder b;
  const int x = b.Input({1, 1, 1, 3}), y = b.Tensor({1, 1, 1, 3});
  b.Op(OpKind::kAdd, ElementwiseAttributes{}, {x, b.Constant({1}, {0.0f})}, {y});
  b.Output(y);
  const std::vector<float> in = {1.0f / 3, 0.1f, -2.0f / 7};
  const auto out = Run(b.Build(), {in}, delegate_.get());
  ASSERT_EQ(out.size(), 1u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[0][i], GetParam().fp16 ? HalfToFloat(FloatToHalf(in[i])) : in[i]) << i;
  }
}

// With share_programs, convolutions alike but for their input depth share
// one program, reading the sizes that differ as parameters
// (shaders/parameters.h), and still compute what the CPU does; by default
// each shape has its own.
TEST_P(GpuDelegateTest, DispatchesAlikeButForSizesShareAProgram) {
  GraphBuilder b;
  int t = b.Input({1, 8, 8, 4}), depth = 4;
  uint32_t seed = 40;
  for (int k = 0; k < 3; ++k) {  // 4 -> 8, 8 -> 8, 8 -> 8 channels
    const int w = b.Constant({8, 3, 3, depth}, Uniform(static_cast<size_t>(8 * 9 * depth), seed++, 0.2f));
    const int bias = b.Constant({8}, Uniform(8, seed++));
    const int y = b.Tensor({1, 8, 8, 8});
    Conv2dAttributes a;
    a.padding = Padding::kSame;
    a.activation = Activation::kRelu6;
    b.Op(OpKind::kConv2d, a, {t, w, bias}, {y});
    t = y;
    depth = 8;
  }
  b.Output(t);
  const Graph graph = b.Build();
  const std::vector<std::vector<float>> input = {Uniform(8 * 8 * 4, seed)};
  const auto cpu = Run(graph, input, nullptr);
  // The convolutions' dispatches: 1..3 (0 and 4 convert the layouts).
  auto conv_programs = [](const GpuDelegate& delegate) {
    const auto& infos = delegate.dispatch_infos().back();
    EXPECT_EQ(infos.size(), 5u);
    EXPECT_EQ(infos[1].workgroup, infos[2].workgroup) << "the tables gave equal shapes different workgroups";
    return std::array<size_t, 3>{infos[1].program, infos[2].program, infos[3].program};
  };
  ExpectNear(Run(graph, input, delegate_.get()), cpu);
  const std::array<size_t, 3> own = conv_programs(*delegate_);
  EXPECT_NE(own[0], own[1]);
  EXPECT_EQ(own[1], own[2]);  // the same shape: the same source, whatever the weights

  const std::unique_ptr<GpuDelegate> sharing = MakeDelegate(/*fusion=*/true, /*share_programs=*/true);
  ASSERT_NE(sharing, nullptr);
  ExpectNear(Run(graph, input, sharing.get()), cpu);
  const std::array<size_t, 3> shared = conv_programs(*sharing);
  EXPECT_EQ(shared[0], shared[1]);
  EXPECT_EQ(shared[1], shared[2]);
  EXPECT_THAT(sharing->device().validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuDelegateTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
