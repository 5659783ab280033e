// DEQUANTIZE: by hand, for each input type and quantization; folded at load.
#include "ops/dequantize/dequantize.h"

#include "ops/elementwise/elementwise.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

// ---------------------------------------------------------------------------
// DEQUANTIZE (constants are folded at load: the graph output is then a
// constant tensor, read the same way)
// ---------------------------------------------------------------------------

// A graph of one DEQUANTIZE whose input is the constant `t` built by `make`.
template <typename Make>
std::vector<float> DequantizeConstant(const Shape& shape, Make make) {
  GraphBuilder b;
  const int q = make(b);
  const int y = b.Tensor(shape);
  b.Op(OpKind::kDequantize, {}, {q}, {y});
  b.Output(y);
  auto outs = RunGraph(b.Build(), {});
  return outs.empty() ? std::vector<float>{} : outs[0];
}

template <typename T>
int QuantizedConstant(GraphBuilder& b, const Shape& shape, DataType type, const std::vector<T>& values,
                      Quantization q) {
  const int t = b.Tensor(shape, type);
  b.SetData(t, values.data(), values.size() * sizeof(T));
  b.graph().tensors[static_cast<size_t>(t)].quantization = std::move(q);
  return t;
}

TEST(DequantizeTest, Fp16ConstantByHand) {
  // Exactly representable halves come back unchanged; 0.1 rounds to the half
  // 0x2E66 = (1 + 614/1024) * 2^-4 = 0.0999755859375; 2^-24 is the smallest
  // subnormal half.
  const std::vector<float> values = {0.5f, -0.125f, 1024.0f, 3.140625f, 65504.0f, 0.1f, std::ldexp(1.0f, -24)};
  const auto out = DequantizeConstant({7}, [&](GraphBuilder& b) {
    std::vector<uint16_t> halves;
    for (float v : values) halves.push_back(FloatToHalf(v));
    EXPECT_EQ(halves[5], 0x2E66);
    const int t = b.Tensor({7}, DataType::kFloat16);
    b.SetData(t, halves.data(), halves.size() * 2);
    return t;
  });
  ExpectClose(out, {0.5, -0.125, 1024, 3.140625, 65504, 0.0999755859375, std::ldexp(1.0, -24)});
}

TEST(DequantizeTest, Fp16RuntimeInputByHand) {
  // The same conversion on a graph input (not folded): [1.5, -2, 0.25, 0].
  GraphBuilder b;
  const int h = b.Tensor({4}, DataType::kFloat16, "half");
  b.graph().inputs.push_back(h);
  const int y = b.Tensor({4});
  b.Op(OpKind::kDequantize, {}, {h}, {y});
  b.Output(y);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const uint16_t halves[4] = {FloatToHalf(1.5f), FloatToHalf(-2.0f), FloatToHalf(0.25f), FloatToHalf(0.0f)};
  ASSERT_EQ((*interpreter)->input(0).bytes, sizeof halves);
  std::memcpy((*interpreter)->input(0).data, halves, sizeof halves);
  ASSERT_TRUE((*interpreter)->Invoke().ok());
  const float* out = (*interpreter)->output(0).as<float>();
  ExpectClose(std::vector<float>(out, out + 4), {1.5, -2, 0.25, 0});
}

TEST(DequantizeTest, Int8PerTensorWithZeroPointByHand) {
  // (q - zp) * scale with scale 0.5, zp -3: q = [-128, -3, 0, 127] ->
  // [-125 * 0.5, 0, 3 * 0.5, 130 * 0.5] = [-62.5, 0, 1.5, 65].
  const auto out = DequantizeConstant({4}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {4}, DataType::kInt8, {-128, -3, 0, 127}, {{0.5f}, {-3}, 0});
  });
  ExpectClose(out, {-62.5, 0, 1.5, 65});
}

TEST(DequantizeTest, UInt8PerTensorByHand) {
  // scale 0.5, zp 128: [0, 128, 255] -> [-64, 0, 63.5].
  const auto out = DequantizeConstant({3}, [](GraphBuilder& b) {
    return QuantizedConstant<uint8_t>(b, {3}, DataType::kUInt8, {0, 128, 255}, {{0.5f}, {128}, 0});
  });
  ExpectClose(out, {-64, 0, 63.5});
}

TEST(DequantizeTest, Int8PerChannelAxis0ByHand) {
  // [3,2], quantized_dimension 0, scales [0.5, 0.25, 2], zero points [1, -2, 0]:
  // row 0: (3-1)*0.5 = 1, (-1-1)*0.5 = -1; row 1: (2+2)*0.25 = 1, (6+2)*0.25 = 2;
  // row 2: -4*2 = -8, 5*2 = 10.
  const auto out = DequantizeConstant({3, 2}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {3, 2}, DataType::kInt8, {3, -1, 2, 6, -4, 5},
                                     {{0.5f, 0.25f, 2.0f}, {1, -2, 0}, 0});
  });
  ExpectClose(out, {1, -1, 1, 2, -8, 10});
}

TEST(DequantizeTest, Int8PerChannelLastAxisByHand) {
  // [2,3], quantized_dimension 1, scales [1, 0.5, 0.1], zero points [0, 4, -10]:
  // row 0: 1, (2-4)*0.5 = -1, (3+10)*0.1 = 1.3; row 1: -1, (-2-4)*0.5 = -3, (-3+10)*0.1 = 0.7.
  const auto out = DequantizeConstant({2, 3}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {2, 3}, DataType::kInt8, {1, 2, 3, -1, -2, -3},
                                     {{1.0f, 0.5f, 0.1f}, {0, 4, -10}, 1});
  });
  ExpectClose(out, {1, -1, 1.3, -1, -3, 0.7});
}

TEST(DequantizeTest, FoldedConstantFeedsTheNextOp) {
  // DEQUANTIZE(fp16 [1, 2, 3]) + input [10, 20, 30] = [11, 22, 33].
  GraphBuilder b;
  const int x = b.Input({3});
  const int h = b.Tensor({3}, DataType::kFloat16);
  const uint16_t halves[3] = {FloatToHalf(1), FloatToHalf(2), FloatToHalf(3)};
  b.SetData(h, halves, sizeof halves);
  const int w = b.Tensor({3});
  const int y = b.Tensor({3});
  b.Op(OpKind::kDequantize, {}, {h}, {w});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, w}, {y});
  b.Output(y);
  const auto out = RunGraph(b.Build(), {{10, 20, 30}});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {11, 22, 33});
}

}  // namespace
}  // namespace mgd::ops
