// ONE_HOT: the CPU kernel by hand (axes, dtypes, indices outside the
// depth), its errors, and the GPU against the CPU with constant and
// run-time int32 indices.
#include "ops/one_hot/one_hot.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

// ONE_HOT of int32 `indices` with float on/off values.
absl::StatusOr<std::vector<uint8_t>> OneHot(const Shape& shape, const std::vector<int32_t>& indices, int depth, int axis,
                                            const Shape& out, float on = 1.0f, float off = 0.0f) {
  return RunTyped(OpKind::kOneHot, OneHotAttributes{axis},
                  {Values(DataType::kInt32, shape, indices), Values(DataType::kInt32, {}, std::vector<int32_t>{depth}, true),
                   Values(DataType::kFloat32, {}, std::vector<float>{on}, true),
                   Values(DataType::kFloat32, {}, std::vector<float>{off}, true)},
                  DataType::kFloat32, out);
}

TEST(OneHotTest, ByHand) {
  // Indices 2, 0, 5 (outside depth 3: all off), -1 (all off), depth 3, last axis.
  auto last = OneHot({4}, {2, 0, 5, -1}, 3, -1, {4, 3}, 5.0f, -1.0f);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(As<float>(*last), (std::vector<float>{-1, -1, 5, 5, -1, -1, -1, -1, -1, -1, -1, -1}));
  // The new axis first: row d holds where the index is d.
  auto first = OneHot({4}, {2, 0, 5, -1}, 3, 0, {3, 4});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(As<float>(*first), (std::vector<float>{0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  // In the middle of [2, 2] indices: [2, depth 2, 2].
  auto middle = OneHot({2, 2}, {0, 1, 1, 1}, 2, 1, {2, 2, 2});
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(As<float>(*middle), (std::vector<float>{1, 0, 0, 1, 0, 0, 1, 1}));
}

TEST(OneHotTest, IntAndBoolOutputs) {
  auto ints = RunTyped(OpKind::kOneHot, OneHotAttributes{},
                       {Values(DataType::kInt64, {2}, std::vector<int64_t>{1, 0}),
                        Values(DataType::kInt32, {}, std::vector<int32_t>{2}, true),
                        Values(DataType::kInt32, {}, std::vector<int32_t>{7}, true),
                        Values(DataType::kInt32, {}, std::vector<int32_t>{-3}, true)},
                       DataType::kInt32, {2, 2});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(As<int32_t>(*ints), (std::vector<int32_t>{-3, 7, 7, -3}));
  auto mask = RunTyped(OpKind::kOneHot, OneHotAttributes{},
                       {Values(DataType::kInt32, {1}, std::vector<int32_t>{2}),
                        Values(DataType::kInt32, {}, std::vector<int32_t>{3}, true),
                        Values(DataType::kBool, {}, std::vector<uint8_t>{1}, true),
                        Values(DataType::kBool, {}, std::vector<uint8_t>{0}, true)},
                       DataType::kBool, {1, 3});
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, (std::vector<uint8_t>{0, 0, 1}));
}

TEST(OneHotTest, BadAxesDepthsAndTypesAreErrors) {
  EXPECT_THAT(OneHot({4}, {0, 0, 0, 0}, 3, 2, {4, 3}).status().message(), HasSubstr("axis 2 is out of range for indices [4]"));
  EXPECT_THAT(OneHot({4}, {0, 0, 0, 0}, -2, -1, {4, 3}).status().message(), HasSubstr("depth -2 is out of range"));
  auto mixed = RunTyped(OpKind::kOneHot, OneHotAttributes{},
                        {Values(DataType::kInt32, {1}, std::vector<int32_t>{0}),
                         Values(DataType::kInt32, {}, std::vector<int32_t>{2}, true),
                         Values(DataType::kInt32, {}, std::vector<int32_t>{1}, true),
                         Values(DataType::kInt32, {}, std::vector<int32_t>{0}, true)},
                        DataType::kFloat32, {1, 2});
  EXPECT_THAT(mixed.status().message(), HasSubstr("input 2 (tensor 2 't2') has type int32, expected float32"));
  auto depth = RunTyped(OpKind::kOneHot, OneHotAttributes{},
                        {Values(DataType::kInt32, {1}, std::vector<int32_t>{0}), Values(DataType::kInt32, {}, std::vector<int32_t>{2}),
                         Values(DataType::kFloat32, {}, std::vector<float>{1}, true),
                         Values(DataType::kFloat32, {}, std::vector<float>{0}, true)},
                        DataType::kFloat32, {1, 2});
  EXPECT_THAT(depth.status().message(), HasSubstr("input 1 (tensor 1 't1') must be a constant tensor"));
}

using OneHotGpuTest = testing::DelegateTest;

// Run-time int32 indices (read as the app gave them) and constant ones,
// on every axis, followed by a float op in the same partition.
TEST_P(OneHotGpuTest, MatchesTheCpu) {
  struct Case {
    Shape indices;
    int depth, axis;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{{{7}, 5, -1, {7, 5}},
                                         {{2, 6}, 9, -1, {2, 6, 9}},
                                         {{2, 6}, 3, 0, {3, 2, 6}},
                                         {{3, 5}, 4, 1, {3, 4, 5}},
                                         {{1, 2, 5}, 6, -1, {1, 2, 5, 6}}}) {
    for (bool constant : {false, true}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.indices) << " depth " << c.depth << " axis " << c.axis
                                        << (constant ? " constant" : ""));
      std::vector<int32_t> indices;
      for (int64_t i = 0; i < NumElements(c.indices); ++i) indices.push_back(static_cast<int32_t>((i * 5 + 1) % (c.depth + 2)) - 1);
      testing::GraphBuilder b;
      int t = b.Tensor(c.indices, DataType::kInt32, "indices");
      if (constant) {
        b.SetData(t, indices.data(), indices.size() * sizeof(int32_t));
      } else {
        b.graph().inputs.push_back(t);
      }
      const int one_hot = b.Tensor(c.out);
      b.Op(OpKind::kOneHot, OneHotAttributes{c.axis},
           {t, b.ConstantInt({}, {c.depth}), b.Constant({}, {0.75f}), b.Constant({}, {-0.25f})}, {one_hot});
      const int out = b.Tensor(c.out);
      b.Op(OpKind::kAbs, {}, {one_hot}, {out});
      b.Output(out);
      std::vector<std::vector<uint8_t>> inputs;
      if (!constant) {
        const auto* begin = reinterpret_cast<const uint8_t*>(indices.data());
        inputs.push_back({begin, begin + indices.size() * sizeof(int32_t)});
      }
      const Graph graph = b.Build();
      ExpectNear(testing::RunWithBytes(graph, inputs, delegate_.get()), testing::RunWithBytes(graph, inputs, nullptr));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, OneHotGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
