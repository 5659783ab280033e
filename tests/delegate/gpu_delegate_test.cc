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
#include "ops/elementwise/elementwise.h"
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

// fp16 really stores halves: x + 0 comes back rounded to fp16.
TEST_P(GpuDelegateTest, Fp16PrecisionStoresHalves) {
  GraphBuilder b;
  const int x = b.Input({1, 1, 1, 3}), y = b.Tensor({1, 1, 1, 3});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, b.Constant({1}, {0.0f})}, {y});
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
