// QUANTIZE (XNNPACK's arithmetic where LiteRT's CPU path uses it) and
// TFLite's fixed-point arithmetic, by hand (the arithmetic is in the
// comments), and bad quantization parameters refused by name.
#include "ops/quantize/quantize.h"

#include "model/validator.h"
#include "ops/quantize/fixed_point.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

using quantized::Multiplier;
using quantized::MultiplyByQuantizedMultiplier;
using quantized::QuantizeMultiplier;

TEST(FixedPointTest, MultipliersByHand) {
  // frexp: 0.5 = 0.5 * 2^0, 1 = 0.5 * 2^1, 0.25 = 0.5 * 2^-1, 3 = 0.75 * 2^2;
  // the mantissa in Q31: 0.5 -> 2^30, 0.75 -> 1610612736.
  EXPECT_EQ(QuantizeMultiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(QuantizeMultiplier(0.5).shift, 0);
  EXPECT_EQ(QuantizeMultiplier(1.0).shift, 1);
  EXPECT_EQ(QuantizeMultiplier(0.25).shift, -1);
  EXPECT_EQ(QuantizeMultiplier(3.0).multiplier, 1610612736);
  EXPECT_EQ(QuantizeMultiplier(3.0).shift, 2);
  // Below 2^-31 TFLite gives 0; 0 is 0.
  EXPECT_EQ(QuantizeMultiplier(std::ldexp(1.0, -33)).multiplier, 0);
  EXPECT_EQ(QuantizeMultiplier(0.0).multiplier, 0);
  // A mantissa that rounds up to 1.0 becomes 0.5 of the next power:
  // 1 - 2^-40 -> 2^30 with shift 1.
  EXPECT_EQ(QuantizeMultiplier(1.0 - std::ldexp(1.0, -40)).multiplier, 1 << 30);
  EXPECT_EQ(QuantizeMultiplier(1.0 - std::ldexp(1.0, -40)).shift, 1);
}

TEST(FixedPointTest, ProductsRoundAsTfliteRounds) {
  const Multiplier quarter = QuantizeMultiplier(0.25), one = QuantizeMultiplier(1.0), three = QuantizeMultiplier(3.0);
  // x * 0.25: the doubling high product by 2^30 halves x (rounding half up),
  // then the shift right by 1 rounds half away from zero.
  // 6 -> 3 -> 1.5 -> 2; -6 -> -3 -> -1.5 -> -2; 4 -> 2 -> 1;
  // 5 -> 2.5 rounds to 3 -> 1.5 -> 2 (TFLite rounds twice).
  EXPECT_EQ(MultiplyByQuantizedMultiplier(6, quarter), 2);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-6, quarter), -2);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(4, quarter), 1);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(5, quarter), 2);
  for (int32_t x : {0, 1, -1, 127, -128, 1 << 20, -(1 << 20)}) EXPECT_EQ(MultiplyByQuantizedMultiplier(x, one), x);
  // 7 * 3: shifted left by 2 to 28, times 0.75 = 21 exactly.
  EXPECT_EQ(MultiplyByQuantizedMultiplier(7, three), 21);
  EXPECT_EQ(quantized::RoundingDivideByPOT(-3, 1), -2);  // -1.5 away from zero
  EXPECT_EQ(quantized::RoundingDivideByPOT(3, 1), 2);
  EXPECT_EQ(quantized::RoundingDivideByPOT(-5, 2), -1);  // -1.25
  EXPECT_EQ(quantized::SaturatingRoundingDoublingHighMul(INT32_MIN, INT32_MIN), INT32_MAX);
  EXPECT_EQ(quantized::RoundHalfAwayFromZero(2.5f), 3);
  EXPECT_EQ(quantized::RoundHalfAwayFromZero(-2.5f), -3);
  EXPECT_EQ(quantized::RoundHalfAwayFromZero(INFINITY), INT32_MAX);
  EXPECT_EQ(quantized::RoundHalfAwayFromZero(-INFINITY), INT32_MIN);
  EXPECT_EQ(quantized::RoundHalfAwayFromZero(NAN), 0);
}

// A graph of one QUANTIZE from `in` (a graph input) to `out_type` with the
// output's parameters `out_q`; the input's are `in_q` when it is 8-bit.
Graph QuantizeGraph(DataType in_type, const Shape& shape, std::optional<Quantization> in_q, DataType out_type,
                    Quantization out_q) {
  GraphBuilder b;
  const int x = b.Input(shape, in_type);
  b.graph().tensors[static_cast<size_t>(x)].quantization = std::move(in_q);
  const int y = b.Tensor(shape, out_type);
  b.graph().tensors[static_cast<size_t>(y)].quantization = std::move(out_q);
  b.Op(OpKind::kQuantize, {}, {x}, {y});
  b.Output(y);
  return b.Build();
}

template <typename Out, typename In>
std::vector<Out> Quantize(const Graph& graph, const std::vector<In>& x) {
  auto interpreter = Interpreter::Create(graph, InterpreterOptions{});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok()) return {};
  std::memcpy((*interpreter)->input(0).data, x.data(), x.size() * sizeof(In));
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  const TensorRef& y = (*interpreter)->output(0);
  return std::vector<Out>(y.as<Out>(), y.as<Out>() + y.elements());
}

TEST(QuantizeTest, FloatToInt8PerTensorByHand) {
  // scale 0.5, zero point -3, as XNNPACK: x * 2 = [0, 0.5, -0.5, 1.5, 2,
  // 200, -200] saturated to [-125, 130] and rounded to nearest even,
  // [0, 0, 0, 2, 2, 130, -125]; plus -3.
  const Graph g = QuantizeGraph(DataType::kFloat32, {7}, std::nullopt, DataType::kInt8, {{0.5f}, {-3}, 0});
  EXPECT_THAT((Quantize<int8_t, float>(g, {0, 0.25f, -0.25f, 0.75f, 1, 100, -100})),
              ::testing::ElementsAre(-3, -3, -3, -1, -1, 127, -128));
}

TEST(QuantizeTest, FloatToUInt8PerTensorByHand) {
  // scale 0.25, zero point 128: 0.125 -> 0.5 -> 0 (even) -> 128; -32 -> -128
  // -> 0; 32 -> 128, saturated to 127 -> 255; -0.375 -> -1.5 -> -2 -> 126.
  const Graph g = QuantizeGraph(DataType::kFloat32, {4}, std::nullopt, DataType::kUInt8, {{0.25f}, {128}, 0});
  EXPECT_THAT((Quantize<uint8_t, float>(g, {0.125f, -32, 32, -0.375f})), ::testing::ElementsAre(128, 0, 255, 126));
}

TEST(QuantizeTest, FloatToInt8PerChannelByHand) {
  // [2,3] along dimension 1, scales [1, 0.5, 0.25], zero points [0, 10, -10]:
  // row [1, 1, 1] -> [1, 2 + 10, 4 - 10]; row [-2.5, -2.5, -2.5] ->
  // [-3, -5 + 10, -10 - 10].
  const Graph g = QuantizeGraph(DataType::kFloat32, {2, 3}, std::nullopt, DataType::kInt8,
                                {{1.0f, 0.5f, 0.25f}, {0, 10, -10}, 1});
  EXPECT_THAT((Quantize<int8_t, float>(g, {1, 1, 1, -2.5f, -2.5f, -2.5f})),
              ::testing::ElementsAre(1, 12, -6, -3, 5, -20));
}

TEST(QuantizeTest, Requantizations) {
  // uint8 (0.5, 128) to int8 (0.5, 0): minus 128.
  const Graph to_int8 = QuantizeGraph(DataType::kUInt8, {4}, Quantization{{0.5f}, {128}, 0}, DataType::kInt8,
                                      {{0.5f}, {0}, 0});
  EXPECT_THAT((Quantize<int8_t, uint8_t>(to_int8, {0, 128, 255, 200})), ::testing::ElementsAre(-128, 0, 127, 72));
  // That one in TFLite's arithmetic (XNNPACK converts within a type);
  // int8 (1, 0) to int8 (4, 1) in XNNPACK's: the ratio 0.25 as 64 / 256,
  // (x * 64 + 128) >> 8 rounds half up, plus 1: 6 -> 1.5 -> 2, -6 -> -1.5 ->
  // -1, 5 -> 1.25 -> 1, 127 -> 31.75 -> 32, -128 -> -32.
  const Graph rescale = QuantizeGraph(DataType::kInt8, {5}, Quantization{{1.0f}, {0}, 0}, DataType::kInt8,
                                      {{4.0f}, {1}, 0});
  EXPECT_THAT((Quantize<int8_t, int8_t>(rescale, {6, -6, 5, 127, -128})), ::testing::ElementsAre(3, 0, 2, 33, -31));
}

TEST(QuantizeTest, BadParametersAreRefusedByName) {
  struct Case {
    Quantization q;
    DataType type;
    const char* why;
  };
  const std::vector<Case> cases = {
      {{{0.0f}, {0}, 0}, DataType::kInt8, "scale[0] is 0"},
      {{{-1.0f}, {0}, 0}, DataType::kInt8, "scale[0] is -1"},
      {{{NAN}, {0}, 0}, DataType::kInt8, "scale[0] is nan"},
      {{{0.5f}, {200}, 0}, DataType::kInt8, "zero_point[0] is 200, outside [-128, 127] of int8"},
      {{{0.5f}, {-1}, 0}, DataType::kUInt8, "zero_point[0] is -1, outside [0, 255] of uint8"},
      {{{0.5f}, {}, 0}, DataType::kInt8, "0 zero points for 1 scales"},
      {{{0.5f, 0.25f, 1.0f}, {0, 0, 0}, 1}, DataType::kInt8, "3 per-channel scales, but dimension 1 of [2,2] has 2"},
      {{{0.5f, 0.25f}, {0, 0}, 2}, DataType::kInt8, "quantized_dimension 2 is not a dimension of [2,2]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    const Graph g = QuantizeGraph(DataType::kFloat32, {2, 2}, std::nullopt, c.type, c.q);
    const absl::Status s = ValidateGraph(g);
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.why));
    EXPECT_THAT(std::string(s.message()), HasSubstr("field quantization"));
    EXPECT_FALSE(Interpreter::Create(g, InterpreterOptions{}).ok());
  }
  // A float output, and a per-channel requantization, are no QUANTIZE.
  EXPECT_THAT(std::string(ValidateGraph(QuantizeGraph(DataType::kFloat32, {2}, std::nullopt, DataType::kFloat32,
                                                      {{0.5f}, {0}, 0}))
                              .message()),
              HasSubstr("expected int8 or uint8"));
  EXPECT_THAT(std::string(ValidateGraph(QuantizeGraph(DataType::kInt8, {2, 2}, Quantization{{1.0f}, {0}, 0},
                                                      DataType::kInt8, {{0.5f, 0.25f}, {0, 0}, 1}))
                              .message()),
              HasSubstr("per tensor only"));
}

}  // namespace
}  // namespace mgd::ops
