// Every op with an 8-bit kernel against its own float kernel: the 8-bit
// graph runs on random int8 (and uint8) values; the float graph runs on the
// same values dequantized, and its output quantized to the output's
// parameters is the expectation. Ops that move values (RESHAPE, PAD,
// MAX_POOL_2D, nearest resizing, tables of one value) must give it exactly;
// ops that compute in TFLite's integer arithmetic within one quantum
// (docs/numerics.md, "Quantized kernels").
#include <set>

#include "tests/interpreter/kernels/kernel_test.h"
#include "tests/ops/integer_cases.h"

namespace mgd::ops {
namespace {

using quantized::Params;
using namespace testing;  // NOLINT(google-build-using-namespace): the shared cases

void Check(const Case& c, DataType type) {
  SCOPED_TRACE(c.name + (type == DataType::kInt8 ? " int8" : " uint8"));
  auto quantized = Interpreter::Create(Build(c, type), InterpreterOptions{});
  ASSERT_TRUE(quantized.ok()) << quantized.status();
  auto real = Interpreter::Create(Build(c, DataType::kFloat32), InterpreterOptions{});
  ASSERT_TRUE(real.ok()) << real.status();
  std::mt19937 random(7);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorRef& q = (*quantized)->input(i);
    const Params p = ForType(c.input_params[i], type);
    std::uniform_int_distribution<int32_t> value(quantized::Lowest(type), quantized::Highest(type));
    for (int64_t k = 0; k < q.elements(); ++k) {
      quantized::Write(q, k, value(random));
      (*real)->input(i).as<float>()[k] = quantized::Dequantize(quantized::Read(q, k), p);
    }
  }
  ASSERT_TRUE((*quantized)->Invoke().ok());
  ASSERT_TRUE((*real)->Invoke().ok());
  const TensorRef& got = (*quantized)->output(0);
  const Params out = ForType(c.output_params, type);
  std::set<int32_t> distinct;
  int worst = 0;
  for (int64_t k = 0; k < got.elements(); ++k) {
    const int32_t expected = quantized::Quantize((*real)->output(0).as<float>()[k], out, type);
    worst = std::max(worst, std::abs(quantized::Read(got, k) - expected));
    distinct.insert(expected);
  }
  EXPECT_LE(worst, c.quanta);
  EXPECT_GE(distinct.size(), 4u) << "the case's outputs barely vary: it would test little";
}

TEST(IntegerKernelsTest, MatchTheFloatKernelsWithinTheirBound) {
  for (const Case& c : Cases()) {
    for (DataType type : {DataType::kInt8, DataType::kUInt8}) Check(c, type);
  }
}

TEST(IntegerKernelsTest, AverageRoundsHalfAwayFromZero) {
  // A 1x2 window over [1, 2] and [-1, -2]: sums 3 and -3 over 2 values,
  // 1.5 -> 2 and -1.5 -> -2.
  Case c{"", OpKind::kAveragePool2d, PoolAttributes{Padding::kValid, 2, 1, 2, 1, Activation::kNone},
         {{1, 1, 2, 2}}, {{1.0f, 0}}, {1, 1, 1, 2}, {1.0f, 0}, {}, 0};
  auto interpreter = Interpreter::Create(Build(c, DataType::kInt8), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const int8_t values[] = {1, -1, 2, -2};
  std::memcpy((*interpreter)->input(0).data, values, sizeof(values));
  ASSERT_TRUE((*interpreter)->Invoke().ok());
  EXPECT_EQ((*interpreter)->output(0).as<int8_t>()[0], 2);
  EXPECT_EQ((*interpreter)->output(0).as<int8_t>()[1], -2);
}

TEST(IntegerKernelsTest, AnOpThatMovesValuesKeepsTheirParameters) {
  Case c{"", OpKind::kReshape, ReshapeAttributes{}, {{1, 4}}, {{0.5f, 1}}, {4}, {0.25f, 1}, {{{1}, {4}}}, 0};
  auto interpreter = Interpreter::Create(Build(c, DataType::kInt8), InterpreterOptions{});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(std::string(interpreter.status().message()),
              HasSubstr("output 0 has scale 0.25 and zero point 1, input 0 scale 0.5 and zero point 1: RESHAPE keeps"));
}

TEST(IntegerKernelsTest, ATypeMixIsRefused) {
  Case c{"", OpKind::kLogistic, {}, {{4}}, {{0.5f, 1}}, {4}, {1.0f / 256, -128}, {}, 0};
  Graph graph = Build(c, DataType::kInt8);
  Tensor& y = graph.tensors[static_cast<size_t>(graph.outputs[0])];
  y.type = DataType::kUInt8;
  y.quantization->zero_point = {0};
  auto interpreter = Interpreter::Create(std::move(graph), InterpreterOptions{});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(std::string(interpreter.status().message()), HasSubstr("has type uint8, expected int8"));
}

}  // namespace
}  // namespace mgd::ops
