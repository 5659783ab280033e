// The convolution family's GPU shaders against the CPU kernels: odd shapes,
// every stride/padding/dilation variant, channel counts that are and are not
// multiples of 4, the split-reduction shader, on both APIs and both
// precisions (docs/design.md section 5 op bounds).
#include <array>
#include <cmath>

#include "delegate/observer.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;
using testing::OneOp;
using testing::Uniform;
using ConvGpuTest = testing::DelegateTest;

struct ConvCase {
  int h, w, ci, co, k, stride, dilation;
  Padding padding;
  Activation activation;
  bool bias;
};

TEST_P(ConvGpuTest, Conv2dMatchesTheCpu) {
  const ConvCase cases[] = {
      {7, 9, 5, 6, 3, 1, 1, Padding::kSame, Activation::kNone, true},
      {8, 8, 3, 16, 3, 2, 1, Padding::kSame, Activation::kRelu6, true},
      {9, 7, 4, 5, 3, 2, 2, Padding::kValid, Activation::kRelu, false},
      {5, 6, 17, 9, 1, 1, 1, Padding::kValid, Activation::kNone, true},
      {6, 6, 8, 4, 2, 2, 1, Padding::kSame, Activation::kTanh, true},
      {10, 3, 1, 1, 5, 3, 1, Padding::kSame, Activation::kReluN1To1, true},
      // Deep inputs, few outputs: the split-reduction shader where the
      // GPU's table has it (SplitSumsMatchTheCpu forces it).
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

// Deep inputs and few outputs split each output's work across invocations
// that combine it in shared memory (fp16: partial sums over every 8th input
// slice; fp32: one invocation per output channel), on every GPU whose table
// lets them (lavapipe's and llvmpipe's say 1: never).
TEST_P(ConvGpuTest, SplitSumsMatchTheCpu) {
  CompiledModelKeeper keeper;
  GpuDelegateOptions options;
  options.api = GetParam().api;
  options.precision = Precision::Of(GetParam().fp16);
  options.validation = true;
  options.workgroups = tuning::Table{};
  options.workgroups->split_conv_outputs = shaders::kSplitConvOutputs;
  options.observers = {&keeper};
  auto delegate = GpuDelegate::Create(options);
  ASSERT_TRUE(delegate.ok()) << delegate.status();
  for (const ConvCase& c : {ConvCase{4, 5, 70, 9, 3, 1, 1, Padding::kSame, Activation::kRelu, true},
                            ConvCase{7, 7, 128, 40, 1, 1, 1, Padding::kValid, Activation::kNone, false}}) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << "x" << c.ci << " -> " << c.co << " k" << c.k);
    OneOp g;
    const int x = g.Input({1, c.h, c.w, c.ci});
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.k * c.k * c.ci));
    std::vector<int> inputs = {x, g.Const({c.co, c.k, c.k, c.ci}, scale)};
    if (c.bias) inputs.push_back(g.Const({c.co}));
    Conv2dAttributes a;
    a.padding = c.padding;
    a.activation = c.activation;
    const bool same = c.padding == Padding::kSame;
    const int oh = same ? c.h : c.h - c.k + 1, ow = same ? c.w : c.w - c.k + 1;
    g.Out(g.Op(OpKind::kConv2d, a, inputs, {{1, oh, ow, c.co}}));
    const Graph graph = g.b.Build();
    const auto cpu = Run(graph, g.data, nullptr);
    ExpectNear(Run(graph, g.data, delegate->get()), cpu);
    ASSERT_FALSE(keeper.models().empty());
    ASSERT_EQ(keeper.models().back().dispatches.size(), 3u);  // in, the convolution, out
    EXPECT_NE(keeper.models().back().dispatches[1].code.shared, "");
  }
  EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
}

TEST_P(ConvGpuTest, DepthwiseConv2dMatchesTheCpu) {
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

TEST_P(ConvGpuTest, FullyConnectedMatchesTheCpu) {
  GraphBuilder b;
  const int x = b.Input({2, 13});
  const int w = b.Constant({7, 13}, Uniform(91, 5, 0.3f));
  const int bias = b.Constant({7}, Uniform(7, 6));
  const int y = b.Tensor({2, 7});
  b.Op(OpKind::kFullyConnected, FullyConnectedAttributes{Activation::kRelu, false}, {x, w, bias}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {Uniform(26, 7)});
}

TEST_P(ConvGpuTest, UnsupportedNodesSayWhy) {
  GraphBuilder b;
  const int x = b.Input({2, 8}), w = b.Input({4, 8}), y = b.Tensor({2, 4});
  b.Op(OpKind::kFullyConnected, FullyConnectedAttributes{}, {x, w}, {y});
  b.Output(y);
  const Graph graph = b.Build();
  const NodeSupport support = delegate_->IsNodeSupported(graph, 0);
  EXPECT_FALSE(support.supported);
  EXPECT_THAT(support.reason, ::testing::HasSubstr("the weights must be constant"));
}

TEST_P(ConvGpuTest, DepthwiseWithMultiplierMatchesTheCpu) {
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

TEST_P(ConvGpuTest, FullyConnectedOverSpatialInputs) {
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

TEST_P(ConvGpuTest, TransposedConvolutions) {
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
}

// Convolutions whose invocations compute blocks of outputs (the tables'
// conv_block_x and conv_block_slices), in a grid of rows and columns or
// flat (conv_block_flat: every row's blocks along x): rows the block's
// width does not divide, a padded last slice, two images, 3x3 filters whose
// block's pixels reach past the padding at different taps (strided,
// dilated), and a fused activation and ADD applied to each output of a
// block.
TEST_P(ConvGpuTest, BlocksOfOutputsMatchTheCpu) {
  struct Case {
    Shape in;
    int out_channels, k, stride = 1, dilation = 1;
  };
  struct Block {
    int x, slices;
    bool flat = false;
  };
  for (const auto& [bx, bs, flat] :
       {Block{1, 1}, {3, 1}, {4, 2}, {8, 4}, {5, 3}, {1, 1, true}, {3, 1, true}, {8, 4, true}, {5, 3, true}}) {
    SCOPED_TRACE(::testing::Message() << "block " << bx << "x" << bs << (flat ? " flat" : ""));
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.validation = true;
    options.workgroups = tuning::Table{};
    options.workgroups->conv_block_x = bx;
    options.workgroups->conv_block_slices = bs;
    options.workgroups->conv_block_flat = flat;
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    for (const Case& c : {Case{{1, 5, 13, 20}, 24, 1}, Case{{2, 4, 9, 7}, 10, 1}, Case{{1, 6, 11, 12}, 22, 3},
                          Case{{1, 7, 15, 5}, 8, 3, 2}, Case{{1, 6, 12, 4}, 4, 3, 1, 2}}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.in) << " -> " << c.out_channels << " k" << c.k << " s"
                                        << c.stride << " d" << c.dilation);
      OneOp g;
      const int x = g.Input(c.in);
      const Shape out = {c.in[0], (c.in[1] + c.stride - 1) / c.stride, (c.in[2] + c.stride - 1) / c.stride,
                         c.out_channels};
      Conv2dAttributes a;
      a.padding = Padding::kSame;
      a.stride_h = a.stride_w = c.stride;
      a.dilation_h = a.dilation_w = c.dilation;
      a.activation = Activation::kRelu6;
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.k * c.k * c.in[3]));
      const int y = g.Op(OpKind::kConv2d, a,
                         {x, g.Const({c.out_channels, c.k, c.k, c.in[3]}, scale), g.Const({c.out_channels})}, {out})[0];
      g.Out(g.Op(OpKind::kAdd, ElementwiseAttributes{}, {y, g.Input(out)}, {out}));
      const Graph graph = g.b.Build();
      const auto cpu = Run(graph, g.data, nullptr);
      ExpectNear(Run(graph, g.data, delegate->get()), cpu);
      // One dispatch for both nodes (the ADD linked after each output of a
      // block), and blocks but the single output cover the output with fewer
      // invocations, flat ones in a grid one row high.
      std::array<uint32_t, 3> grid{};
      for (const GpuDelegate::DispatchInfo& d : (*delegate)->dispatch_infos().back()) {
        if (d.nodes == std::vector<int>{0, 1}) grid = d.grid;
      }
      const uint32_t outputs = static_cast<uint32_t>(out[0] * out[1] * out[2] * ((out[3] + 3) / 4));
      if (bx * bs == 1) {
        EXPECT_EQ(grid[0] * grid[1] * grid[2], outputs);
      } else {
        EXPECT_LT(grid[0] * grid[1] * grid[2], outputs);
        EXPECT_EQ(grid[1] == 1, flat || out[1] == 1) << grid[0] << "x" << grid[1] << "x" << grid[2];
      }
    }
    EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
  }
}

// A flat grid of blocks (conv_block_flat) is kept while every row's blocks
// fit the 65535 workgroups of x with any workgroup; a single output per
// invocation has no blocks to lay out.
TEST(ConvBlock, FlatWhereTheGridFitsAnyWorkgroup) {
  shaders::NodeContext ctx;
  ctx.conv_block = {8, 2, true};
  EXPECT_TRUE(ConvBlock(ctx, {1, 14, 14, 512}).flat);
  EXPECT_TRUE(ConvBlock(ctx, {1, 65535, 8, 8}).flat);
  EXPECT_FALSE(ConvBlock(ctx, {1, 65536, 8, 8}).flat);
  EXPECT_FALSE(ConvBlock(ctx, {1, 40000, 9, 8}).flat);  // 2 blocks a row
  ctx.conv_block = {1, 1, true};
  EXPECT_FALSE(ConvBlock(ctx, {1, 14, 14, 512}).flat);
  ctx.conv_block = {8, 2, false};
  EXPECT_FALSE(ConvBlock(ctx, {1, 14, 14, 512}).flat);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConvGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
