// The comparisons and SELECT_V2 on the CPU: by hand on float32 and int32
// operands with broadcasting, and the type rules.
#include <cstring>

#include "interpreter/interpreter.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
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

}  // namespace
}  // namespace mgd::ops
