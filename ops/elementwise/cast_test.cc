// CAST: every pair of dtypes a model needs (token ids to float, masks to
// bool and back), by hand, and the values C++ leaves undefined; on the GPU
// against the CPU from each type it reads.
#include "ops/elementwise/elementwise.h"

#include <cstring>
#include <limits>

#include "interpreter/interpreter.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

// CAST of `in` (values of type In, a graph input) to a tensor of type `to`:
// the output's bytes.
template <typename In>
std::vector<uint8_t> Cast(DataType from, const std::vector<In>& in, DataType to) {
  auto out = RunTyped(OpKind::kCast, {}, {Values(from, {static_cast<int32_t>(in.size())}, in)}, to,
                      {static_cast<int32_t>(in.size())});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<uint8_t>{};
}

TEST(CastTest, IntsAndFloatsByHand) {
  EXPECT_EQ(As<float>(Cast<int32_t>(DataType::kInt32, {-3, 0, 7, 1 << 24}, DataType::kFloat32)),
            (std::vector<float>{-3, 0, 7, 16777216.0f}));
  // Toward zero; NaN is 0 and out-of-range values saturate (C++ leaves both
  // undefined).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(As<int32_t>(Cast<float>(DataType::kFloat32, {-1.7f, 0.0f, 2.9f, nan, 1e10f, -1e10f}, DataType::kInt32)),
            (std::vector<int32_t>{-1, 0, 2, 0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(As<int64_t>(Cast<uint8_t>(DataType::kUInt8, {0, 200, 255}, DataType::kInt64)), (std::vector<int64_t>{0, 200, 255}));
  EXPECT_EQ(As<int8_t>(Cast<float>(DataType::kFloat32, {-200.0f, -5.5f, 100.0f}, DataType::kInt8)),
            (std::vector<int8_t>{-128, -5, 100}));
}

TEST(CastTest, BoolsByHand) {
  // To bool: nonzero is true; from bool: any nonzero byte is 1.
  EXPECT_EQ(Cast<float>(DataType::kFloat32, {0.5f, 0.0f, -2.0f}, DataType::kBool), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(As<float>(Cast<uint8_t>(DataType::kBool, {0, 2, 1}, DataType::kFloat32)), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(As<int32_t>(Cast<uint8_t>(DataType::kBool, {1, 0}, DataType::kInt32)), (std::vector<int32_t>{1, 0}));
}

TEST(CastTest, OtherTypesAreRefusedByName) {
  GraphBuilder b;
  const int x = b.Tensor({2}, DataType::kFloat16, "x");
  b.graph().inputs.push_back(x);
  const int y = b.Tensor({2}, DataType::kFloat32, "y");
  b.Op(OpKind::kCast, {}, {x}, {y});
  b.Output(y);
  const auto s = Interpreter::Create(b.Build(), InterpreterOptions{}).status();
  EXPECT_THAT(s.message(), ::testing::HasSubstr("has type float16, expected float32 or int32"));
}

using CastGpuTest = testing::DelegateTest;

// One CAST from a graph input of type `from` (its bytes `in`) to `to`, with
// `then` (a MUL by a constant, fused into the CAST's shader) when set; GPU
// and CPU outputs as bytes.
struct CastRun {
  std::vector<uint8_t> gpu, cpu;
};
CastRun CastOnBoth(Delegate* delegate, const Shape& shape, DataType from, const std::vector<uint8_t>& in, DataType to,
                   bool then_scale = false) {
  GraphBuilder b;
  const int x = b.Input(shape, from);
  int y = b.Tensor(shape, to);
  b.Op(OpKind::kCast, {}, {x}, {y});
  if (then_scale) {
    const int scaled = b.Tensor(shape);
    b.Op(OpKind::kMul, {}, {y, b.Constant({1}, {1.0f / 255.0f})}, {scaled});
    y = scaled;
  }
  b.Output(y);
  const Graph g = b.Build();
  auto gpu = testing::RunToBytes(g, {in}, delegate), cpu = testing::RunToBytes(g, {in}, nullptr);
  if (gpu.size() != 1 || cpu.size() != 1) return {};
  return {gpu[0], cpu[0]};
}

TEST_P(CastGpuTest, IntegerInputsReadAsGivenMatchTheCpu) {
  // Token ids and a padding mask, odd sizes, values past fp16's integers.
  std::vector<int32_t> ids(35);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i * 877 % 30522) - (i % 4 == 0 ? 40000 : 0);
  ids[3] = GetParam().fp16 ? 60000 : 1 << 20;  // past 2^11 either way; within fp16's range there
  std::vector<uint8_t> bytes(45), signed_bytes(45);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(i * 37 % 256);
    signed_bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(static_cast<int>(i * 53 % 256) - 128));
  }
  struct Case {
    DataType from;
    Shape shape;
    std::vector<uint8_t> in;
    bool then_scale;
  };
  for (const Case& c : {Case{DataType::kInt32, {1, 5, 7}, testing::BytesOf(ids), false},
                        Case{DataType::kUInt8, {1, 3, 5, 3}, bytes, true},
                        Case{DataType::kInt8, {1, 3, 5, 3}, signed_bytes, false}}) {
    SCOPED_TRACE(DataTypeName(c.from));
    const CastRun floats = CastOnBoth(delegate_.get(), c.shape, c.from, c.in, DataType::kFloat32, c.then_scale);
    ASSERT_EQ(floats.gpu.size(), floats.cpu.size());
    ExpectNear({As<float>(floats.gpu)}, {As<float>(floats.cpu)});
    const CastRun bools = CastOnBoth(delegate_.get(), c.shape, c.from, c.in, DataType::kBool);
    EXPECT_EQ(bools.gpu, bools.cpu);
  }
}

TEST_P(CastGpuTest, FloatsAndBoolsMatchTheCpu) {
  // Zero of both signs and NaN (true, as in C++) among ordinary values.
  std::vector<float> x = testing::Uniform(21, 40, 2.0f);
  x[0] = 0.0f, x[1] = -0.0f, x[2] = std::numeric_limits<float>::quiet_NaN(), x[5] = 0.0f;
  const CastRun to_bool = CastOnBoth(delegate_.get(), {3, 7}, DataType::kFloat32, testing::BytesOf(x), DataType::kBool);
  EXPECT_EQ(to_bool.gpu, to_bool.cpu);
  EXPECT_EQ(to_bool.cpu[2], 1);
  const std::vector<uint8_t> given = {0, 1, 2, 0, 255, 0, 1, 1, 0, 3, 0};  // any nonzero byte is true
  const CastRun from_bool = CastOnBoth(delegate_.get(), {11}, DataType::kBool, given, DataType::kFloat32);
  EXPECT_EQ(from_bool.gpu, from_bool.cpu);
  EXPECT_EQ(As<float>(from_bool.gpu), (std::vector<float>{0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, CastGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
