// The comparisons and SELECT_V2 on the CPU: by hand on float32 and int32
// operands with broadcasting, and the type rules. On the GPU against the
// CPU: bool outputs, inputs and bools inside a partition, fused and not.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "interpreter/interpreter.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(CompareTest, EveryComparisonByHandWithBroadcasting) {
  // [[1, 2, 3], [4, 5, 6]] against [2, 5, 3] per column.
  const Typed a = Values<float>(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Typed b = Values<float>(DataType::kFloat32, {3}, {2, 5, 3});
  const std::vector<std::pair<OpKind, std::vector<uint8_t>>> cases = {
      {OpKind::kEqual, {0, 0, 1, 0, 1, 0}},   {OpKind::kNotEqual, {1, 1, 0, 1, 0, 1}},
      {OpKind::kLess, {1, 1, 0, 0, 0, 0}},    {OpKind::kLessEqual, {1, 1, 1, 0, 1, 0}},
      {OpKind::kGreater, {0, 0, 0, 1, 0, 1}}, {OpKind::kGreaterEqual, {0, 0, 1, 1, 1, 1}},
  };
  for (const auto& [op, expected] : cases) {
    SCOPED_TRACE(OpName(op));
    auto out = RunTyped(op, {}, {a, b}, DataType::kBool, {2, 3});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, expected);
  }
  // int32 token ids against a scalar.
  auto ids = RunTyped(OpKind::kEqual, {}, {Values<int32_t>(DataType::kInt32, {4}, {0, 7, 0, 3}), Values<int32_t>(DataType::kInt32, {}, {0})},
                 DataType::kBool, {4});
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::vector<uint8_t>{1, 0, 1, 0}));
}

TEST(CompareTest, SelectV2BroadcastsAllThree) {
  // condition [2,1], x [2,3], y a scalar: rows of x where true, else -1.
  auto out = RunTyped(OpKind::kSelectV2, {},
                 {Values<uint8_t>(DataType::kBool, {2, 1}, {1, 0}), Values<float>(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                  Values<float>(DataType::kFloat32, {}, {-1})},
                 DataType::kFloat32, {2, 3});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> y(6);
  std::memcpy(y.data(), out->data(), 24);
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, -1, -1, -1}));
  auto ints = RunTyped(OpKind::kSelectV2, {},
                  {Values<uint8_t>(DataType::kBool, {3}, {0, 2, 1}), Values<int32_t>(DataType::kInt32, {3}, {10, 20, 30}),
                   Values<int32_t>(DataType::kInt32, {3}, {-10, -20, -30})},
                  DataType::kInt32, {3});
  ASSERT_TRUE(ints.ok()) << ints.status();
  std::vector<int32_t> yi(3);
  std::memcpy(yi.data(), ints->data(), 12);
  EXPECT_EQ(yi, (std::vector<int32_t>{-10, 20, 30}));
}

TEST(CompareTest, TypesThatDoNotAgreeAreErrors) {
  auto mixed = RunTyped(OpKind::kLess, {}, {Values<float>(DataType::kFloat32, {2}, {1, 2}), Values<int32_t>(DataType::kInt32, {2}, {1, 2})},
                   DataType::kBool, {2});
  EXPECT_THAT(mixed.status().message(), ::testing::HasSubstr("inputs have types float32 and int32, expected one"));
  auto not_bool = RunTyped(OpKind::kLess, {}, {Values<float>(DataType::kFloat32, {2}, {1, 2}), Values<float>(DataType::kFloat32, {2}, {1, 2})},
                      DataType::kFloat32, {2});
  EXPECT_THAT(not_bool.status().message(), ::testing::HasSubstr("has type float32, expected bool"));
  auto condition = RunTyped(OpKind::kSelectV2, {},
                       {Values<float>(DataType::kFloat32, {1}, {1}), Values<float>(DataType::kFloat32, {1}, {1}),
                        Values<float>(DataType::kFloat32, {1}, {1})},
                       DataType::kFloat32, {1});
  EXPECT_THAT(condition.status().message(), ::testing::HasSubstr("has type float32, expected bool"));
}

using CompareGpuTest = testing::DelegateTest;
using testing::BytesOf;
using testing::RunToBytes;

// Values on a quarter grid in [-2, 2]: exact in fp16, so that an fp16 run
// compares what the CPU compares, and many pairs are equal.
std::vector<float> Quarters(size_t n, uint32_t seed) {
  std::vector<float> v = testing::Uniform(n, seed, 2.0f);
  for (float& f : v) f = std::round(f * 4.0f) / 4.0f;
  return v;
}

constexpr OpKind kComparisons[] = {OpKind::kEqual,     OpKind::kNotEqual, OpKind::kLess,
                                   OpKind::kLessEqual, OpKind::kGreater,  OpKind::kGreaterEqual};

// Each comparison in each operand form, its bools a partition output: 105
// of them, so that the last word the GPU writes is partly past the tensor.
TEST_P(CompareGpuTest, ComparisonsGiveTheCpusBools) {
  const Shape full{1, 5, 3, 7};
  for (OpKind op : kComparisons) {
    for (int form = 0; form < 4; ++form) {
      SCOPED_TRACE(::testing::Message() << OpName(op) << " form " << form);
      GraphBuilder b;
      std::vector<std::vector<uint8_t>> inputs;
      const int x = b.Input(full);
      inputs.push_back(BytesOf(Quarters(105, 1)));
      int other = -1;
      switch (form) {
        case 0: other = b.Input(full), inputs.push_back(BytesOf(Quarters(105, 2))); break;
        case 1: other = b.Input({1, 1, 1, 7}), inputs.push_back(BytesOf(Quarters(7, 3))); break;
        case 2: other = b.Constant({7}, Quarters(7, 4)); break;
        default: other = b.Constant({1}, {0.5f}); break;
      }
      const int y = b.Tensor(full, DataType::kBool);
      // The broadcast operand first in one form: both operand orders.
      b.Op(op, {}, form == 1 ? std::vector<int>{other, x} : std::vector<int>{x, other}, {y});
      b.Output(y);
      const Graph g = b.Build();
      const auto cpu = RunToBytes(g, inputs, nullptr);
      ASSERT_EQ(cpu.size(), 1u);
      const auto trues = std::count(cpu[0].begin(), cpu[0].end(), 1);
      ASSERT_GT(trues, 0);
      ASSERT_LT(trues, 105);
      EXPECT_EQ(RunToBytes(g, inputs, delegate_.get()), cpu);
    }
  }
}

// Bools made and read inside one partition (fused into their producer's
// shader and not), a bool graph input, and SELECT_V2's broadcasting.
TEST_P(CompareGpuTest, BoolsInsideAPartitionMatchTheCpu) {
  const Shape full{1, 4, 5, 6};
  const std::vector<float> xs = Quarters(120, 5), zs = Quarters(120, 6);
  std::vector<uint8_t> mask(20);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<uint8_t>(i % 3);  // 2 is true too
  {  // ADD, GREATER, CAST to float, MUL: one chain
    GraphBuilder b;
    const int x = b.Input(full), z = b.Input(full);
    const int sum = b.Tensor(full), above = b.Tensor(full, DataType::kBool), ones = b.Tensor(full), y = b.Tensor(full);
    b.Op(OpKind::kAdd, {}, {x, z}, {sum});
    b.Op(OpKind::kGreater, {}, {sum, b.Constant({1}, {0.25f})}, {above});
    b.Op(OpKind::kCast, {}, {above}, {ones});
    b.Op(OpKind::kMul, {}, {ones, x}, {y});
    b.Output(y);
    const Graph g = b.Build();
    const std::vector<std::vector<float>> in = {xs, zs};
    ExpectNear(Run(g, in, delegate_.get()), Run(g, in, nullptr));
    ExpectNear(Run(g, in, &Unfused()), Run(g, in, nullptr));
  }
  {  // a comparison read twice (and given back), SELECT_V2 with a scalar and with a bool input [1,4,5,1]
    GraphBuilder b;
    const int x = b.Input(full), z = b.Input(full), given = b.Input({1, 4, 5, 1}, DataType::kBool);
    const int le = b.Tensor(full, DataType::kBool), picked = b.Tensor(full), y = b.Tensor(full);
    b.Op(OpKind::kLessEqual, {}, {x, z}, {le});
    b.Op(OpKind::kSelectV2, {}, {le, x, b.Constant({1}, {-3.5f})}, {picked});
    b.Op(OpKind::kSelectV2, {}, {given, picked, z}, {y});
    b.Output(y);
    b.Output(le);
    const Graph g = b.Build();
    const std::vector<std::vector<uint8_t>> in = {BytesOf(xs), BytesOf(zs), mask};
    for (Delegate* d : {static_cast<Delegate*>(delegate_.get()), static_cast<Delegate*>(&Unfused())}) {
      const auto cpu = RunToBytes(g, in, nullptr), gpu = RunToBytes(g, in, d);
      // Selections copy their operands: the same bits as the CPU's.
      EXPECT_EQ(gpu, cpu);
    }
  }
}

// A comparison of int32 tensors stays on the CPU and says why; the CAST of
// its bools runs on the GPU, which reads them through a conversion.
TEST_P(CompareGpuTest, Int32ComparisonsStayOnTheCpuAndSayWhy) {
  GraphBuilder b;
  const int ids = b.Input({1, 12}, DataType::kInt32);
  const int padding = b.Tensor({1, 12}, DataType::kBool), mask = b.Tensor({1, 12});
  b.Op(OpKind::kEqual, {}, {ids, b.ConstantInt({}, {0})}, {padding});
  b.Op(OpKind::kCast, {}, {padding}, {mask});
  b.Output(mask);
  const Graph g = b.Build();
  InterpreterOptions options;
  options.delegates.push_back(delegate_.get());
  auto interpreter = Interpreter::Create(g, std::move(options));
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  EXPECT_EQ((*interpreter)->placements()[0].where, NodePlacement::Where::kCpu);
  EXPECT_THAT((*interpreter)->placements()[0].reason, ::testing::HasSubstr("int32 activations stay on the CPU"));
  EXPECT_NE((*interpreter)->placements()[1].where, NodePlacement::Where::kCpu) << (*interpreter)->placements()[1].reason;
  const std::vector<int32_t> values = {0, 7, 0, 3, 30521, 0, -1, 0, 0, 1, 2, 0};
  std::memcpy((*interpreter)->input(0).data, values.data(), 48);
  ASSERT_TRUE((*interpreter)->Invoke().ok());
  const float* out = (*interpreter)->output(0).as<float>();
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(out[i], values[i] == 0 ? 1.0f : 0.0f) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, CompareGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
