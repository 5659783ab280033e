// CAST: every pair of dtypes a model needs (token ids to float, masks to
// bool and back), by hand, and the values C++ leaves undefined.
#include "ops/cast/cast.h"

#include <cstring>
#include <limits>

#include "interpreter/interpreter.h"
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

}  // namespace
}  // namespace mgd::ops
