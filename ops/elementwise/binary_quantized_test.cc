// ADD, SUB and MUL of int8 and uint8 tensors, by hand in TFLite's integer
// arithmetic (the fixed-point steps are in the comments).
#include "ops/elementwise/binary_quantized.h"

#include "ops/elementwise/elementwise.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

struct Operand {
  Shape shape;
  Quantization q;
  std::vector<int32_t> values;
};

// OP(a, b) on graph inputs of `type`, to an output of `out_shape` and `out_q`;
// the output's values, or the error of Create.
absl::StatusOr<std::vector<int32_t>>
RunBinary(OpKind op, Activation activation, DataType type, const Operand &a,
          const Operand &b, const Shape &out_shape, const Quantization &out_q) {
  GraphBuilder g;
  std::vector<int> inputs;
  for (const Operand *o : {&a, &b}) {
    inputs.push_back(g.Input(o->shape, type));
    g.graph().tensors[static_cast<size_t>(inputs.back())].quantization = o->q;
  }
  const int y = g.Tensor(out_shape, type);
  g.graph().tensors[static_cast<size_t>(y)].quantization = out_q;
  g.Op(op, ElementwiseAttributes{activation}, inputs, {y});
  g.Output(y);
  auto interpreter = Interpreter::Create(g.Build(), InterpreterOptions{});
  if (!interpreter.ok())
    return interpreter.status();
  for (size_t i = 0; i < 2; ++i) {
    const Operand &o = i == 0 ? a : b;
    for (size_t k = 0; k < o.values.size(); ++k) {
      if (type == DataType::kInt8) {
        (*interpreter)->input(i).as<int8_t>()[k] =
            static_cast<int8_t>(o.values[k]);
      } else {
        (*interpreter)->input(i).as<uint8_t>()[k] =
            static_cast<uint8_t>(o.values[k]);
      }
    }
  }
  if (absl::Status s = (*interpreter)->Invoke(); !s.ok())
    return s;
  const TensorRef &out = (*interpreter)->output(0);
  std::vector<int32_t> values;
  for (int64_t i = 0; i < out.elements(); ++i) {
    values.push_back(type == DataType::kInt8 ? out.as<int8_t>()[i]
                                             : out.as<uint8_t>()[i]);
  }
  return values;
}

TEST(QuantizedBinaryTest, Int8AddByHand) {
  // Inputs of scale 0.5, output of scale 1 (zero points 0), as XNNPACK:
  // the ratios 0.5 as multipliers 2^20 of a shift of 21, the rounding 2^20
  // added, shifted right: halves round up.
  // 3 + 2 -> 1.5 + 1 = 2.5 -> 3; -3 + 2 -> -0.5 -> 0; 127 + 127 -> 127.
  const Quantization half{{0.5f}, {0}, 0};
  auto y = RunBinary(OpKind::kAdd, Activation::kNone, DataType::kInt8,
                     {{3}, half, {3, -3, 127}}, {{3}, half, {2, 2, 127}}, {3},
                     {{1.0f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(3, 0, 127));
  // With output zero point 10 and RELU.
  y = RunBinary(OpKind::kAdd, Activation::kRelu, DataType::kInt8,
                {{3}, half, {3, -3, 127}}, {{3}, half, {2, 2, 127}}, {3},
                {{1.0f}, {10}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(13, 10, 127));
  // SUB: 1.5 - 1 = 0.5 -> 1; -1.5 - 1 = -2.5 -> -2; 63.5 - 63.5 = 0.
  y = RunBinary(OpKind::kSub, Activation::kNone, DataType::kInt8,
                {{3}, half, {3, -3, 127}}, {{3}, half, {2, 2, 127}}, {3},
                {{1.0f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(1, -2, 0));
  // An input whose scale over the output's is below XNNPACK's 2^-10: TFLite's
  // arithmetic (LiteRT's kernel then), both inputs rescaled to twice the
  // larger scale with 20 bits of headroom (x * 2^20 * 0.5), summed, brought
  // to the output by 2^-20, rounding half away from zero: 3 -> 1.5 -> 2,
  // -3 -> -1.5 -> -2.
  y = RunBinary(OpKind::kAdd, Activation::kNone, DataType::kInt8, {{2}, half, {3, -3}},
                {{2}, {{0x1.0p-12f}, {0}, 0}, {0, 0}}, {2}, {{1.0f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(2, -2));
}

TEST(QuantizedBinaryTest, UInt8AddBroadcastsByHand) {
  // [2,2] + [2], all zero points 128, inputs of scale 1, output of scale 2:
  // (a - 128) + (b - 128) halved, half away from zero, plus 128:
  // (2 + 1) / 2 = 1.5 -> 2; (-2 + 3) / 2 = 0.5 -> 1; (0 + 1) / 2 -> 1;
  // (72 + 3) / 2 = 37.5 -> 38.
  const Quantization one{{1.0f}, {128}, 0};
  auto y = RunBinary(OpKind::kAdd, Activation::kNone, DataType::kUInt8,
                     {{2, 2}, one, {130, 126, 128, 200}},
                     {{2}, one, {129, 131}}, {2, 2}, {{2.0f}, {128}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(130, 129, 129, 166));
}

TEST(QuantizedBinaryTest, Int8MulByHand) {
  // a (0.5, zero point 1) * b (0.25, zero point -2) to (0.125, 0): the
  // multiplier 0.5 * 0.25 / 0.125 = 1, so the output is the product of the
  // offset inputs: (5 - 1) * (6 + 2) = 32; (0 - 1) * (-1 + 2) = -1;
  // 126 * 129 saturates to 127; with RELU6, 6 / 0.125 = 48 caps it.
  const Operand a{{3}, {{0.5f}, {1}, 0}, {5, 0, 127}},
      b{{3}, {{0.25f}, {-2}, 0}, {6, -1, 127}};
  auto y = RunBinary(OpKind::kMul, Activation::kNone, DataType::kInt8, a, b,
                     {3}, {{0.125f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(32, -1, 127));
  y = RunBinary(OpKind::kMul, Activation::kRelu6, DataType::kInt8, a, b, {3},
                {{0.125f}, {0}, 0});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ::testing::ElementsAre(32, 0, 48));
}

TEST(QuantizedBinaryTest, WhatIsNotTflitesIsRefusedByName) {
  const Quantization half{{0.5f}, {0}, 0};
  // Per-channel parameters on an activation.
  auto y = RunBinary(OpKind::kAdd, Activation::kNone, DataType::kInt8,
                     {{2}, {{0.5f, 0.25f}, {0, 0}, 0}, {1, 2}},
                     {{2}, half, {1, 2}}, {2}, half);
  EXPECT_THAT(y.status().message(),
              HasSubstr("needs one scale and zero point (per tensor)"));
  // DIV of int8 tensors, and a fused TANH.
  y = RunBinary(OpKind::kDiv, Activation::kNone, DataType::kInt8,
                {{2}, half, {1, 2}}, {{2}, half, {1, 2}}, {2}, half);
  EXPECT_THAT(y.status().message(), HasSubstr("expected float32"));
  y = RunBinary(OpKind::kAdd, Activation::kTanh, DataType::kInt8,
                {{2}, half, {1, 2}}, {{2}, half, {1, 2}}, {2}, half);
  EXPECT_THAT(y.status().message(), HasSubstr("TANH"));
}

} // namespace
} // namespace mgd::ops
