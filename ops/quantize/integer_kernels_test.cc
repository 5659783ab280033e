// Every op with an 8-bit kernel against its own float kernel: the 8-bit
// graph runs on random int8 (and uint8) values; the float graph runs on the
// same values dequantized, and its output quantized to the output's
// parameters is the expectation. Ops that move values (RESHAPE, PAD,
// MAX_POOL_2D, nearest resizing, tables of one value) must give it exactly;
// ops that compute in TFLite's integer arithmetic within one quantum
// (docs/numerics.md, "Quantized kernels").
#include <set>

#include "ops/concatenation/concatenation.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

using quantized::Params;

struct Case {
  std::string name;
  OpKind op;
  Attributes attributes;
  std::vector<Shape> inputs;
  std::vector<Params> input_params;  // int8's; uint8 has zero points 128 higher
  Shape output;
  Params output_params;
  std::vector<std::pair<Shape, std::vector<int32_t>>> constants;  // int32 inputs after the data
  int quanta;  // the most an output may differ by
};

Params ForType(Params p, DataType type) {
  if (type == DataType::kUInt8) p.zero_point += 128;
  return p;
}

// The case's graph with data inputs and output of `type`; 8-bit types get
// their parameters.
Graph Build(const Case& c, DataType type) {
  GraphBuilder g;
  std::vector<int> inputs;
  auto quantize = [&](int t, const Params& p) {
    if (type == DataType::kFloat32) return;
    const Params q = ForType(p, type);
    g.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{q.scale}, {q.zero_point}, 0};
  };
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(g.Input(c.inputs[i], type));
    quantize(inputs.back(), c.input_params[i]);
  }
  for (const auto& [shape, values] : c.constants) inputs.push_back(g.ConstantInt(shape, values));
  const int y = g.Tensor(c.output, type);
  quantize(y, c.output_params);
  g.Op(c.op, c.attributes, inputs, {y});
  g.Output(y);
  return g.Build();
}

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

std::vector<Case> Cases() {
  const Params p{0.05f, -3}, wide{0.1f, 10}, probability{1.0f / 256, -128};
  PoolAttributes average{Padding::kSame, 2, 2, 3, 3, Activation::kNone};
  PoolAttributes average_relu6 = average;
  average_relu6.activation = Activation::kRelu6;
  const PoolAttributes max{Padding::kValid, 2, 2, 2, 2, Activation::kNone};
  return {
      {"average pool", OpKind::kAveragePool2d, average, {{1, 7, 7, 5}}, {p}, {1, 4, 4, 5}, p, {}, 1},
      {"average pool, RELU6", OpKind::kAveragePool2d, average_relu6, {{1, 7, 7, 5}}, {p}, {1, 4, 4, 5}, p, {}, 1},
      {"max pool", OpKind::kMaxPool2d, max, {{1, 6, 7, 3}}, {p}, {1, 3, 3, 3}, p, {}, 0},
      {"reshape", OpKind::kReshape, ReshapeAttributes{}, {{1, 4, 4, 3}}, {p}, {1, 48}, p, {{{2}, {1, 48}}}, 0},
      {"pad", OpKind::kPad, {}, {{1, 3, 3, 2}}, {p}, {1, 6, 6, 3}, p, {{{4, 2}, {0, 0, 1, 2, 2, 1, 0, 1}}}, 0},
      {"bilinear", OpKind::kResizeBilinear, ResizeAttributes{}, {{1, 3, 4, 3}}, {p}, {1, 7, 9, 3}, p,
       {{{2}, {7, 9}}}, 1},
      {"bilinear, half pixels", OpKind::kResizeBilinear, ResizeAttributes{false, true}, {{1, 3, 4, 3}}, {p},
       {1, 8, 6, 3}, p, {{{2}, {8, 6}}}, 1},
      {"bilinear, corners", OpKind::kResizeBilinear, ResizeAttributes{true, false}, {{1, 3, 4, 3}}, {p},
       {1, 7, 9, 3}, p, {{{2}, {7, 9}}}, 1},
      {"nearest", OpKind::kResizeNearestNeighbor, ResizeAttributes{false, true}, {{1, 3, 4, 3}}, {p}, {1, 6, 8, 3},
       p, {{{2}, {6, 8}}}, 0},
      {"concatenation, one scale", OpKind::kConcatenation, ConcatenationAttributes{3, Activation::kNone},
       {{1, 2, 3, 4}, {1, 2, 3, 3}}, {p, p}, {1, 2, 3, 7}, p, {}, 0},
      {"concatenation, rescaled", OpKind::kConcatenation, ConcatenationAttributes{1, Activation::kRelu},
       {{1, 2, 3, 4}, {1, 3, 3, 4}}, {p, wide}, {1, 5, 3, 4}, {0.08f, -20}, {}, 1},
      {"logistic", OpKind::kLogistic, {}, {{2, 50}}, {p}, {2, 50}, probability, {}, 0},
      {"tanh", OpKind::kTanh, {}, {{2, 50}}, {p}, {2, 50}, {1.0f / 128, 0}, {}, 0},
      {"hard swish", OpKind::kHardSwish, {}, {{2, 50}}, {wide}, {2, 50}, {0.06f, -60}, {}, 1},
      {"relu6", OpKind::kRelu6, {}, {{2, 50}}, {wide}, {2, 50}, {0.03f, -128}, {}, 1},
      {"softmax", OpKind::kSoftmax, SoftmaxAttributes{1.0f}, {{3, 10}}, {wide}, {3, 10}, probability, {}, 1},
      {"softmax, beta", OpKind::kSoftmax, SoftmaxAttributes{0.5f}, {{2, 7}}, {p}, {2, 7}, probability, {}, 1},
      {"mean", OpKind::kMean, ReducerAttributes{true}, {{1, 5, 6, 8}}, {wide}, {1, 1, 1, 8}, {0.01f, 2},
       {{{2}, {1, 2}}}, 1},
      {"sum", OpKind::kSum, ReducerAttributes{false}, {{2, 3, 4}}, {p}, {2, 4}, {0.12f, 0}, {{{1}, {1}}}, 1},
      {"reduce max", OpKind::kReduceMax, ReducerAttributes{false}, {{2, 3, 4}}, {p}, {2, 3}, p, {{{1}, {2}}}, 0},
  };
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
