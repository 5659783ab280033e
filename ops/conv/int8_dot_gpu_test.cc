// Integer dot products on the GPU (shaders::NodeContext::int8_dot): an int8
// or uint8 model's convolutions and fully connected layers, their inputs on
// an int8 grid (passes/int8_as_float.h), summed in integers as TFLite's
// kernels sum them: the integer kernels' results within a quantum, zero
// points and padding included, on each API and precision. Only Vulkan
// devices with shaderIntegerDotProduct take them; GLES never does, nor do
// split sums.
#include <cmath>
#include <random>
#include <utility>

#include "delegate/observer.h"
#include "ops/conv/conv.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd::ops {
namespace {

struct DotCase {
  std::string name;
  Shape in;                  // NHWC, or [batch, features] for a fully connected layer
  int out_channels = 8;
  int k = 1, stride = 1;     // convolutions only
  Activation activation = Activation::kNone;
  DataType type = DataType::kInt8;
  int input_zero_point = 0;  // int8's; uint8's is 128 higher
  bool per_channel = true;
  // Few outputs over deep inputs: split across invocations (SplitPays),
  // whose float sums of 8-bit filters measured faster than dot products.
  bool split = false;
};

constexpr float kInputScale = 0.05f;

// float -> QUANTIZE -> the layer on 8-bit tensors -> DEQUANTIZE -> float, as
// a converted model has it; filter integers in [-127, 127].
Graph Int8Layer(const DotCase& c, float& output_scale) {
  testing::GraphBuilder g;
  const int shift = c.type == DataType::kUInt8 ? 128 : 0;
  auto eight_bit = [&](const Shape& shape, std::vector<float> scales, std::vector<int64_t> zero_points) {
    const int t = g.Tensor(shape, c.type);
    g.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{std::move(scales), std::move(zero_points), 0};
    return t;
  };
  const int x = g.Input(c.in);
  const int xq = eight_bit(c.in, {kInputScale}, {c.input_zero_point + shift});
  g.Op(OpKind::kQuantize, {}, {x}, {xq});
  const bool fc = c.in.size() == 2;
  const int in_channels = c.in.back();
  const Shape filter_shape = fc ? Shape{c.out_channels, in_channels} : Shape{c.out_channels, c.k, c.k, in_channels};
  const int64_t fan_in = NumElements(filter_shape) / c.out_channels;
  std::vector<float> scales;
  for (int o = 0; o < (c.per_channel ? c.out_channels : 1); ++o) {
    scales.push_back((1.0f + 0.25f * static_cast<float>(o % 4)) / (127.0f * std::sqrt(static_cast<float>(fan_in))));
  }
  std::mt19937 random(5);
  std::uniform_int_distribution<int> value(-127, 127);
  std::vector<uint8_t> filter(static_cast<size_t>(NumElements(filter_shape)));
  for (uint8_t& v : filter) v = static_cast<uint8_t>(value(random) + shift);
  const int w = eight_bit(filter_shape, scales, std::vector<int64_t>(scales.size(), shift));
  g.SetData(w, filter.data(), filter.size());
  std::vector<int32_t> bias;
  std::vector<float> bias_scales;
  for (int o = 0; o < c.out_channels; ++o) {
    bias.push_back(value(random) * 40);
    bias_scales.push_back(kInputScale * scales[c.per_channel ? static_cast<size_t>(o) : 0]);
  }
  const int b = g.ConstantInt({c.out_channels}, bias);
  g.graph().tensors[static_cast<size_t>(b)].quantization =
      Quantization{bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0};
  // The sums spread over a few units: a grid of 0.06 (or RELU6's).
  const bool relu6 = c.activation == Activation::kRelu6;
  output_scale = relu6 ? 6.0f / 255 : 0.06f;
  Shape out_shape = {c.in[0], c.out_channels};
  if (!fc) out_shape = {c.in[0], (c.in[1] + c.stride - 1) / c.stride, (c.in[2] + c.stride - 1) / c.stride, c.out_channels};
  const int yq = eight_bit(out_shape, {output_scale}, {(relu6 ? -128 : 0) + shift});
  if (fc) {
    FullyConnectedAttributes a;
    a.activation = c.activation;
    g.Op(OpKind::kFullyConnected, a, {xq, w, b}, {yq});
  } else {
    Conv2dAttributes a;
    a.padding = Padding::kSame;
    a.stride_h = a.stride_w = c.stride;
    a.activation = c.activation;
    g.Op(OpKind::kConv2d, a, {xq, w, b}, {yq});
  }
  const int y = g.Tensor(out_shape);
  g.Op(OpKind::kDequantize, {}, {yq}, {y});
  g.Output(y);
  return g.Build();
}

// Inputs on the input's grid, so that QUANTIZE keeps them.
std::vector<std::vector<float>> GridInput(const DotCase& c) {
  std::mt19937 random(9);
  std::uniform_int_distribution<int> q(-128, 127);
  std::vector<float> x(static_cast<size_t>(NumElements(c.in)));
  for (float& v : x) v = static_cast<float>(q(random) - c.input_zero_point) * kInputScale;
  return {x};
}

class Int8DotGpuTest : public testing::DelegateTest {
 protected:
  GpuDelegateOptions Options(int conv_block_x, bool flat = false) const {
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.validation = true;
    options.int8_filters = true;
    options.int8_dot = true;
    options.workgroups = tuning::Table{};
    options.workgroups->conv_block_x = conv_block_x;
    options.workgroups->conv_block_slices = 2;
    options.workgroups->conv_block_flat = flat;
    // The deep case splits its sums on every GPU (lavapipe's table says 1).
    options.workgroups->split_conv_outputs = shaders::kSplitConvOutputs;
    return options;
  }
  bool DeviceHasThem() {
    auto delegate = GpuDelegate::Create(Options(1));
    return delegate.ok() && (*delegate)->device().info().int8_dot_products;
  }
};

TEST_P(Int8DotGpuTest, SumsGiveTheIntegerKernelsResultsWithinAQuantum) {
  const DotCase cases[] = {
      {"3x3, zero point 5, RELU6", {1, 7, 9, 5}, 6, 3, 1, Activation::kRelu6, DataType::kInt8, 5},
      {"3x3, strided, zero point -128", {1, 8, 8, 3}, 16, 3, 2, Activation::kNone, DataType::kInt8, -128},
      {"1x1, zero point 100", {1, 5, 13, 20}, 24, 1, 1, Activation::kNone, DataType::kInt8, 100},
      {"uint8, 3x3, one scale", {1, 6, 6, 8}, 8, 3, 1, Activation::kRelu6, DataType::kUInt8, -3, false},
      {"deep 3x3", {1, 4, 5, 70}, 9, 3, 1, Activation::kNone, DataType::kInt8, -7, true, true},
      {"fully connected", {3, 40}, 7, 1, 1, Activation::kNone, DataType::kInt8, 17},
  };
  const bool dot = GetParam().api == gpu::Api::kVulkan && DeviceHasThem();
  for (const DotCase& c : cases) {
    for (const auto& [block_x, flat] : {std::pair{1, false}, {4, false}, {4, true}}) {
      SCOPED_TRACE(::testing::Message() << c.name << ", blocks of " << block_x << (flat ? " (flat)" : ""));
      float output_scale = 0.0f;
      const Graph graph = Int8Layer(c, output_scale);
      const auto inputs = GridInput(c);
      const auto integer = Run(graph, inputs, nullptr);
      CompiledModelKeeper keeper;
      GpuDelegateOptions options = Options(block_x, flat);
      options.observers = {&keeper};
      auto delegate = GpuDelegate::Create(options);
      ASSERT_TRUE(delegate.ok()) << delegate.status();
      EXPECT_EQ((*delegate)->int8_dot(), dot);
      const auto gpu = Run(graph, inputs, delegate->get());
      ASSERT_EQ(gpu.size(), 1u);
      ASSERT_EQ(gpu[0].size(), integer[0].size());
      for (size_t i = 0; i < integer[0].size(); ++i) {
        // fp16 storage holds a grid value to 11 bits.
        const float stored = GetParam().fp16 ? std::abs(integer[0][i]) * 0x1.0p-10f : 0.0f;
        ASSERT_LE(std::abs(gpu[0][i] - integer[0][i]), output_scale * 1.001f + stored)
            << "element " << i << ": gpu " << gpu[0][i] << " cpu " << integer[0][i];
      }
      int dot_dispatches = 0;
      for (const CompiledModel& m : keeper.models()) {
        for (const CompiledDispatch& d : m.dispatches) dot_dispatches += d.code.int8_dot;
      }
      EXPECT_EQ(dot_dispatches, dot && !c.split ? 1 : 0);
      EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
    }
  }
}

// Integer sums need 8-bit filters; unset in the options, the choice is the
// tables' for the storage precision ("int8_dot_products").
TEST_P(Int8DotGpuTest, TakenWith8BitFiltersWhereTheTablesSay) {
  const bool dot = GetParam().api == gpu::Api::kVulkan && DeviceHasThem();
  GpuDelegateOptions options = Options(1);
  options.int8_filters = false;
  auto delegate = GpuDelegate::Create(options);
  ASSERT_TRUE(delegate.ok()) << delegate.status();
  EXPECT_FALSE((*delegate)->int8_dot());
  options.int8_filters = true;
  options.int8_dot.reset();
  for (const bool fp16_says_yes : {true, false}) {
    SCOPED_TRACE(fp16_says_yes ? "fp16: true, fp32: false" : "fp16: false, fp32: true");
    options.workgroups->int8_dot_products_fp16 = fp16_says_yes;
    options.workgroups->int8_dot_products_fp32 = !fp16_says_yes;
    delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    EXPECT_EQ((*delegate)->int8_dot(), dot && GetParam().fp16 == fp16_says_yes);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Int8DotGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::ops
