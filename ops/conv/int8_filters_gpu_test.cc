// 8-bit filters on the GPU (shaders::NodeContext::int8_filters): a float
// filter that keeps the parameters of the int8 one it was dequantized from
// is stored as 8-bit integers, its sums scaled in the shader. Each convolution
// shader that reads it so (plain, blocked, split, transposed, a fully
// connected layer as a 1x1 convolution) gives the CPU's float results
// within the op bounds, on both APIs and precisions; one whose values are
// off the grid, or that asks for floats, stores floats.
#include <cmath>
#include <functional>
#include <random>

#include "delegate/observer.h"
#include "ops/conv/conv.h"
#include "shaders/dialect.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd::ops {
namespace {

using testing::OneOp;

// A filter of `shape` whose values are integers in [-127, 127] times a scale
// per output channel (dimension 0), with those parameters, as
// passes/int8_as_float.h leaves an int8 model's. The values are as large as
// the float tests' (1 / sqrt(fan-in)), which the op bounds are made for.
int Int8GridFilter(OneOp& g, const Shape& shape, uint32_t seed, bool per_channel = true) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> value(-127, 127);
  Quantization q;
  const int channels = shape[0];
  const float fan_in = static_cast<float>(NumElements(shape) / channels);
  for (int o = 0; o < (per_channel ? channels : 1); ++o) {
    q.scale.push_back((1.0f + 0.25f * static_cast<float>(o % 4)) / (127.0f * std::sqrt(fan_in)));
    q.zero_point.push_back(0);
  }
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  const size_t per_output = values.size() / static_cast<size_t>(channels);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(value(random)) * q.scale[per_channel ? i / per_output : 0];
  }
  const int w = g.b.Constant(shape, values);
  g.b.graph().tensors[static_cast<size_t>(w)].quantization = std::move(q);
  return w;
}

struct Stored {
  int int8_buffers = 0;  // dispatches' i8vec4 buffers
  size_t constant_bytes = 0;
  int free_workgroups = 0;  // dispatches that may take the tables' workgroups
  // Accumulators of 8-bit shaders that are not highp: their sums of
  // integers are the output over the scale, and can pass fp16's range.
  int mediump_sums = 0;
};

// Accumulators ("vec4 acc...") that `code` declares in mediump.
int MediumpAccumulators(const shaders::ShaderCode& code) {
  if (!code.mediump) return 0;
  int n = 0;
  const std::string& body = code.body;
  for (size_t at = body.find("vec4 acc"); at != std::string::npos; at = body.find("vec4 acc", at + 1)) {
    n += at < 6 || body.compare(at - 6, 6, "highp ") != 0;
  }
  return n;
}

class Int8FiltersGpuTest : public testing::DelegateTest {
 protected:
  // Runs `graph` on a delegate asked for 8-bit filters or not, with blocks
  // of conv_block_x outputs; returns its outputs and what it stored.
  std::vector<std::vector<float>> RunStoring(const Graph& graph, const std::vector<std::vector<float>>& inputs,
                                             bool int8_filters, int conv_block_x, Stored& stored) {
    CompiledModelKeeper keeper;
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.validation = true;
    // mediump arithmetic even on software GPUs, so that the accumulators'
    // precision is checked there too.
    options.keep_fp16_arithmetic = true;
    options.int8_filters = int8_filters;
    options.workgroups = tuning::Table{};
    options.workgroups->conv_block_x = conv_block_x;
    options.workgroups->conv_block_slices = 1;
    // The split case splits its sums on every GPU (lavapipe's table says 1).
    options.workgroups->split_conv_outputs = shaders::kSplitConvOutputs;
    options.observers = {&keeper};
    auto delegate = GpuDelegate::Create(options);
    EXPECT_TRUE(delegate.ok()) << delegate.status();
    if (!delegate.ok()) return {};
    auto outputs = Run(graph, inputs, delegate->get());
    for (const CompiledModel& m : keeper.models()) {
      for (const CompiledDispatch& d : m.dispatches) {
        for (const shaders::BufferDecl& b : d.code.buffers) {
          if (b.element_type != shaders::kInt8Vec4) continue;
          ++stored.int8_buffers;
          stored.mediump_sums += MediumpAccumulators(d.code);
        }
        stored.free_workgroups += d.grid[0] != 0;
      }
      for (const auto& c : m.constants) stored.constant_bytes += c.size();
    }
    EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
    return outputs;
  }
};

TEST_P(Int8FiltersGpuTest, EachConvolutionShaderReadsThemAsTheirValues) {
  struct Case {
    std::string name;
    std::function<void(OneOp&)> build;
    bool reads_8bit = true;
  };
  auto conv = [](Shape in, int co, int k, int stride, bool on_grid = true) {
    return [=](OneOp& g) {
      const int x = g.Input(in);
      Conv2dAttributes a;
      a.padding = Padding::kSame;
      a.stride_h = a.stride_w = stride;
      a.activation = Activation::kRelu6;
      const Shape out = {in[0], (in[1] + stride - 1) / stride, (in[2] + stride - 1) / stride, co};
      const int w = on_grid ? Int8GridFilter(g, {co, k, k, in[3]}, 7) : g.Const({co, k, k, in[3]}, 0.3f);
      if (!on_grid) g.b.graph().tensors[static_cast<size_t>(w)].quantization = Quantization{{0.01f}, {0}, 0};
      g.Out(g.Op(OpKind::kConv2d, a, {x, w, g.Const({co})}, {out}));
    };
  };
  const Case cases[] = {
      {"3x3", conv({1, 7, 9, 5}, 6, 3, 1)},
      {"3x3, strided", conv({1, 8, 8, 3}, 16, 3, 2)},
      {"1x1", conv({1, 5, 13, 20}, 24, 1, 1)},
      // Deep inputs, few outputs: the split sum in fp16; in fp32 each of its
      // threads sums one output channel (weights in rows, not columns).
      {"split", conv({1, 4, 5, 70}, 9, 3, 1)},
      {"fully connected, one scale",
       [](OneOp& g) {
         const int x = g.Input({3, 12});
         g.Out(g.Op(OpKind::kFullyConnected, FullyConnectedAttributes{},
                    {x, Int8GridFilter(g, {7, 12}, 3, /*per_channel=*/false), g.Const({7})}, {{3, 7}}));
       }},
      {"transposed",
       [](OneOp& g) {
         const int x = g.Input({1, 4, 5, 6});
         TransposeConvAttributes a;
         a.padding = Padding::kSame;
         a.stride_h = a.stride_w = 2;
         g.Out(g.Op(OpKind::kTransposeConv, a,
                    {g.b.ConstantInt({4}, {1, 8, 10, 3}), Int8GridFilter(g, {3, 3, 3, 6}, 5), x, g.Const({3})},
                    {{1, 8, 10, 3}}));
       }},
      {"off the grid", conv({1, 7, 9, 5}, 6, 3, 1, /*on_grid=*/false), false},
  };
  for (const Case& c : cases) {
    for (int block_x : {1, 4}) {
      SCOPED_TRACE(::testing::Message() << c.name << ", blocks of " << block_x);
      OneOp g;
      c.build(g);
      const Graph graph = g.b.Build();
      const auto cpu = Run(graph, g.data, nullptr);
      Stored as_8bit, as_float;
      ExpectNear(RunStoring(graph, g.data, true, block_x, as_8bit), cpu);
      ExpectNear(RunStoring(graph, g.data, false, block_x, as_float), cpu);
      EXPECT_EQ(as_float.int8_buffers, 0);
      EXPECT_EQ(as_8bit.free_workgroups, as_float.free_workgroups);
      if (c.reads_8bit) {
        EXPECT_EQ(as_8bit.int8_buffers, 1);
        EXPECT_EQ(as_8bit.mediump_sums, 0);
        EXPECT_LT(as_8bit.constant_bytes, as_float.constant_bytes);
      } else {
        EXPECT_EQ(as_8bit.int8_buffers, 0);
        EXPECT_EQ(as_8bit.constant_bytes, as_float.constant_bytes);
      }
    }
  }
}

// Unset in the options, the choice is the tables' for the delegate's
// storage precision ("int8_filter_bits": {"fp32": bits, "fp16": bits}).
TEST_P(Int8FiltersGpuTest, TheTablesChooseForEachStoragePrecision) {
  for (const bool fp16_says_8 : {true, false}) {
    SCOPED_TRACE(fp16_says_8 ? "fp16: 8, fp32: 32" : "fp16: 32, fp32: 8");
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.workgroups = tuning::Table{};
    options.workgroups->int8_filter_bits_fp16 = fp16_says_8 ? 8 : 32;
    options.workgroups->int8_filter_bits_fp32 = fp16_says_8 ? 32 : 8;
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    EXPECT_EQ((*delegate)->int8_filters(), GetParam().fp16 == fp16_says_8);
    options.int8_filters = false;  // the option wins
    delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    EXPECT_FALSE((*delegate)->int8_filters());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Int8FiltersGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::ops
