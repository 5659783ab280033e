// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of int8 and uint8 tensors,
// by hand in TFLite's integer arithmetic (the steps are in the comments).
#include "ops/conv/conv_quantized.h"

#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

template <typename T>
int Quantized(GraphBuilder& b, const Shape& shape, DataType type, Quantization q, const std::vector<T>* values) {
  const int t = values != nullptr ? b.Tensor(shape, type) : b.Input(shape, type);
  if (values != nullptr) b.SetData(t, values->data(), values->size() * sizeof(T));
  b.graph().tensors[static_cast<size_t>(t)].quantization = std::move(q);
  return t;
}

template <typename T>
absl::StatusOr<std::vector<int32_t>> RunConv(OpKind op, Attributes attributes, DataType type, const Shape& x_shape,
                                             Quantization x_q, const std::vector<T>& x, const Shape& w_shape,
                                             Quantization w_q, const std::vector<T>& w,
                                             const std::vector<int32_t>& bias, const Shape& y_shape,
                                             Quantization y_q) {
  GraphBuilder b;
  std::vector<int> inputs = {Quantized<T>(b, x_shape, type, std::move(x_q), nullptr),
                             Quantized<T>(b, w_shape, type, std::move(w_q), &w)};
  if (!bias.empty()) inputs.push_back(b.ConstantInt({static_cast<int>(bias.size())}, bias));
  const int y = b.Tensor(y_shape, type);
  b.graph().tensors[static_cast<size_t>(y)].quantization = std::move(y_q);
  b.Op(op, std::move(attributes), inputs, {y});
  b.Output(y);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  if (!interpreter.ok()) return interpreter.status();
  std::memcpy((*interpreter)->input(0).data, x.data(), x.size() * sizeof(T));
  if (absl::Status s = (*interpreter)->Invoke(); !s.ok()) return s;
  const TensorRef& out = (*interpreter)->output(0);
  std::vector<int32_t> values;
  for (int64_t i = 0; i < out.elements(); ++i) values.push_back(out.as<T>()[i]);
  return values;
}

struct ConvWeights {
  Shape shape;
  Quantization q;
  std::vector<int8_t> values;
};

TEST(QuantizedConvTest, Int8PerChannelConvByHand) {
  // A 1x1 convolution of [1,2,2,1] (scale 0.5, zero point 1: x - 1 =
  // [2, 4, -2, 0]) with two per-channel filters [4] (scale 0.25) and [-2]
  // (scale 0.5), bias [3, 0], to scale 0.25: the multipliers are
  // 0.5 * 0.25 / 0.25 = 0.5 and 0.5 * 0.5 / 0.25 = 1.
  // Channel 0: (x - 1) * 4 + 3 = [11, 19, -5, 3], halved by the doubling
  // high product, which rounds halves up: [6, 10, -2, 2].
  // Channel 1: (x - 1) * -2 = [-4, -8, 4, 0].
  Conv2dAttributes a;
  a.padding = Padding::kValid;
  auto y = RunConv<int8_t>(OpKind::kConv2d, a, DataType::kInt8, {1, 2, 2, 1}, {{0.5f}, {1}, 0}, {3, 5, -1, 1},
                           {2, 1, 1, 1}, {{0.25f, 0.5f}, {0, 0}, 0}, {4, -2}, {3, 0}, {1, 2, 2, 2},
                           {{0.25f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(6, -4, 10, -8, -2, 4, 2, 0));
  // RELU6 with output zero point -1: from -1 up to -1 + round(6 / 0.25) = 23.
  a.activation = Activation::kRelu6;
  y = RunConv<int8_t>(OpKind::kConv2d, a, DataType::kInt8, {1, 2, 2, 1}, {{0.5f}, {1}, 0}, {3, 5, -1, 1},
                      {2, 1, 1, 1}, {{0.25f, 0.5f}, {0, 0}, 0}, {4, -2}, {3, 0}, {1, 2, 2, 2}, {{0.25f}, {-1}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(5, -1, 9, -1, -1, 3, 1, -1));
}

TEST(QuantizedConvTest, UInt8DepthwiseWithAMultiplierByHand) {
  // [1,1,3,2] (scale 1, zero point 128: [2,-2], [1,0], [-1,3]), a 1x2
  // filter of multiplier 2 (scale 0.5, zero point 128: x=0 [2,0,-2,4],
  // x=1 [0,1,2,-1]), VALID, to scale 1 and zero point 128: the multiplier
  // is 0.5. Output channel o reads input channel o / 2.
  // Pixel 0: [2*2 + 0, 0 + 1*1, -2*-2 + 0, 4*-2 + 0] = [4, 1, 4, -8],
  //   halved in float, rounded to nearest even (XNNPACK): [2, 0, 2, -4].
  // Pixel 1: [2*1 + 0, 0 + 1*-1, 0 + 2*3, 0 + -1*3] = [2, -1, 6, -3]:
  //   [1, 0, 3, -2].
  DepthwiseConv2dAttributes a;
  a.padding = Padding::kValid;
  a.depth_multiplier = 2;
  auto y = RunConv<uint8_t>(OpKind::kDepthwiseConv2d, a, DataType::kUInt8, {1, 1, 3, 2}, {{1.0f}, {128}, 0},
                            {130, 126, 129, 128, 127, 131}, {1, 1, 2, 4}, {{0.5f}, {128}, 0},
                            {130, 128, 126, 132, 128, 129, 130, 127}, {}, {1, 1, 2, 4}, {{1.0f}, {128}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(130, 128, 130, 124, 129, 128, 131, 126));
}

TEST(QuantizedConvTest, Int8PerChannelFullyConnectedByHand) {
  // Rows [2, -4, 6] and [1, 0, -1] (scale 0.5) against filters [1, 2, 3]
  // (scale 0.5) and [-2, 0, 4] (scale 0.25), bias [1, -3], to scale 0.5:
  // multipliers 0.5 and 0.25.
  // As XNNPACK, the sum as a float times the multiplier, rounded to nearest
  // even (TFLite's fixed point would round 6.5 up and 4.25 twice, to 5):
  // Row 0: 12 + 1 = 13 -> 6.5 -> 6; 20 - 3 = 17 -> 4.25 -> 4.
  // Row 1: -2 + 1 = -1 -> -0.5 -> 0; -6 - 3 = -9 -> -2.25 -> -2.
  ConvWeights fc{{2, 3}, {{0.5f, 0.25f}, {0, 0}, 0}, {1, 2, 3, -2, 0, 4}};
  auto y = RunConv<int8_t>(OpKind::kFullyConnected, FullyConnectedAttributes{}, DataType::kInt8, {2, 3},
                           {{0.5f}, {0}, 0}, {2, -4, 6, 1, 0, -1}, fc.shape, fc.q, fc.values, {1, -3}, {2, 2},
                           {{0.5f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(6, 4, 0, -2));
  y = RunConv<int8_t>(OpKind::kFullyConnected, FullyConnectedAttributes{Activation::kRelu}, DataType::kInt8, {2, 3},
                      {{0.5f}, {0}, 0}, {2, -4, 6, 1, 0, -1}, fc.shape, fc.q, fc.values, {1, -3}, {2, 2},
                      {{0.5f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(6, 4, 0, 0));
}

TEST(QuantizedConvTest, WhatIsNotTflitesIsRefusedByName) {
  Conv2dAttributes a;
  a.padding = Padding::kValid;
  // Per-channel scales along the wrong dimension.
  auto y = RunConv<int8_t>(OpKind::kConv2d, a, DataType::kInt8, {1, 1, 1, 2}, {{0.5f}, {0}, 0}, {1, 2},
                           {1, 1, 1, 2}, {{0.25f, 0.5f}, {0, 0}, 3}, {4, -2}, {}, {1, 1, 1, 1}, {{0.25f}, {0}, 0});
  EXPECT_THAT(y.status().message(), HasSubstr("expected 1, or 1 along dimension 0"));
  // A float bias.
  GraphBuilder b;
  const int x = b.Input({1, 1, 1, 1}, DataType::kInt8);
  const int w = b.Tensor({1, 1, 1, 1}, DataType::kInt8);
  const int8_t one = 1;
  b.SetData(w, &one, 1);
  for (int t : {x, w}) b.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{1.0f}, {0}, 0};
  const int y2 = b.Tensor({1, 1, 1, 1}, DataType::kInt8);
  b.graph().tensors[static_cast<size_t>(y2)].quantization = Quantization{{1.0f}, {0}, 0};
  b.Op(OpKind::kConv2d, a, {x, w, b.Constant({1}, {0.0f})}, {y2});
  b.Output(y2);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(interpreter.status().message(), HasSubstr("expected int32"));
}

// A dynamic-range ("hybrid") model's layer: int8 weights of a float
// CONV_2D and FULLY_CONNECTED, dequantized at load, give the float layer's
// results with the weights' real values.
TEST(HybridFiltersTest, AreDequantizedAtLoad) {
  for (OpKind op : {OpKind::kConv2d, OpKind::kFullyConnected}) {
    SCOPED_TRACE(OpName(op));
    const bool conv = op == OpKind::kConv2d;
    const Shape in_shape = conv ? Shape{1, 2, 2, 3} : Shape{2, 3};
    const Shape filter_shape = conv ? Shape{2, 1, 1, 3} : Shape{2, 3};
    const std::vector<int8_t> q{10, -20, 127, -128, 0, 64};
    const std::vector<float> real{10 * 0.5f, -20 * 0.5f, 127 * 0.5f, -128 * 0.25f, 0.0f, 64 * 0.25f};
    auto build = [&](bool hybrid) {
      GraphBuilder b;
      const int x = b.Input(in_shape);
      int w = 0;
      if (hybrid) {
        w = b.Tensor(filter_shape, DataType::kInt8, "w");
        b.SetData(w, q.data(), q.size());
        b.graph().tensors[static_cast<size_t>(w)].quantization = Quantization{{0.5f, 0.25f}, {0, 0}, 0};
      } else {
        w = b.Constant(filter_shape, real, "w");
      }
      const int bias = b.Constant({2}, {0.5f, -1.0f});
      const int y = b.Tensor(conv ? Shape{1, 2, 2, 2} : Shape{2, 2});
      if (conv) {
        Conv2dAttributes a;
        a.padding = Padding::kValid;
        b.Op(op, a, {x, w, bias}, {y});
      } else {
        b.Op(op, FullyConnectedAttributes{}, {x, w, bias}, {y});
      }
      b.Output(y);
      return b.Build();
    };
    const std::vector<float> input{0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f, 1.0f, 1.0f, -2.0f, 0.0f, 3.0f, 0.125f};
    const std::vector<float> x(input.begin(), input.begin() + NumElements(in_shape));
    auto run = [&](const Graph& g) {
      auto interpreter = Interpreter::Create(g, InterpreterOptions{});
      EXPECT_TRUE(interpreter.ok()) << interpreter.status();
      if (!interpreter.ok()) return std::vector<float>{};
      std::copy(x.begin(), x.end(), (*interpreter)->input(0).as<float>());
      EXPECT_TRUE((*interpreter)->Invoke().ok());
      const TensorRef& out = (*interpreter)->output(0);
      return std::vector<float>(out.as<float>(), out.as<float>() + out.elements());
    };
    const std::vector<float> hybrid = run(build(true)), dequantized = run(build(false));
    ASSERT_FALSE(hybrid.empty());
    EXPECT_EQ(hybrid, dequantized);
  }
}

}  // namespace
}  // namespace mgd::ops
