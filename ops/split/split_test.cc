// SPLIT and SPLIT_V: the CPU kernel by hand and against index arithmetic on
// every axis, the errors, and the GPU against the CPU.
#include "ops/split/split.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

using ::testing::HasSubstr;

TEST(SplitTest, TwoPartsAlongChannelsByHand) {
  // [[1,2,3,4],[5,6,7,8]] split in two on axis -1: [[1,2],[5,6]] and [[3,4],[7,8]].
  const auto out = RunOp(OpKind::kSplit, SplitAttributes{2}, {Ints({}, {-1}), In({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                         {{2, 2}, {2, 2}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(out[1], (std::vector<float>{3, 4, 7, 8}));
}

TEST(SplitTest, SplitVInfersTheMinusOneByHand) {
  // [1..6] by sizes [1, -1, 2]: [1], [2, 3, 4], [5, 6].
  const auto out = RunOp(OpKind::kSplitV, SplitAttributes{3}, {In({6}, {1, 2, 3, 4, 5, 6}), Ints({3}, {1, -1, 2}), Ints({}, {0})},
                         {{1}, {3}, {2}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], (std::vector<float>{1}));
  EXPECT_EQ(out[1], (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(out[2], (std::vector<float>{5, 6}));
}

TEST(SplitTest, EveryAxisMatchesIndexMath) {
  const Shape shape{2, 3, 4, 6};
  const std::vector<float> x = Iota(Count(shape), 0.0f);
  for (int axis : {0, 1, 2, 3, -1, -3}) {
    SCOPED_TRACE(axis);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    const std::vector<int32_t> sizes = {1, shape[a] - 1};
    std::vector<Shape> outs(2, shape);
    outs[0][a] = sizes[0];
    outs[1][a] = sizes[1];
    const auto out = RunOp(OpKind::kSplitV, SplitAttributes{2}, {In(shape, x), Ints({2}, sizes), Ints({1}, {axis})}, outs);
    ASSERT_EQ(out.size(), 2u);
    for (size_t j = 0; j < 2; ++j) {
      std::vector<float> expected;
      for (int64_t i = 0; i < NumElements(outs[j]); ++i) {
        auto idx = Unravel(i, outs[j]);
        if (j == 1) idx[a] += sizes[0];
        expected.push_back(x[static_cast<size_t>(Ravel(idx, shape))]);
      }
      EXPECT_EQ(out[j], expected) << "output " << j;
    }
  }
}

TEST(SplitTest, BadSplitsAreErrorsNamingWhatIsWrong) {
  const Operand x = In({2, 6}, std::vector<float>(12));
  EXPECT_THAT(CreateStatus(OpKind::kSplit, SplitAttributes{4}, {Ints({}, {1}), x}, {{2, 1}, {2, 1}, {2, 1}, {2, 1}}).message(),
              HasSubstr("does not split into 4 equal parts"));
  EXPECT_THAT(CreateStatus(OpKind::kSplit, SplitAttributes{2}, {Ints({}, {2}), x}, {{2, 3}, {2, 3}}).message(),
              HasSubstr("axis 2 is out of range"));
  EXPECT_THAT(CreateStatus(OpKind::kSplitV, SplitAttributes{2}, {x, Ints({2}, {2, 3}), Ints({}, {1})}, {{2, 2}, {2, 3}}).message(),
              HasSubstr("do not add up"));
  EXPECT_THAT(CreateStatus(OpKind::kSplitV, SplitAttributes{2}, {x, Ints({2}, {-1, -1}), Ints({}, {1})}, {{2, 3}, {2, 3}}).message(),
              HasSubstr("only one may be -1"));
  EXPECT_THAT(CreateStatus(OpKind::kSplit, SplitAttributes{3}, {Ints({}, {1}), x}, {{2, 3}, {2, 3}}).message(),
              HasSubstr("has 2 outputs, expected 3"));
}

using SplitGpuTest = testing::DelegateTest;

TEST_P(SplitGpuTest, AlongEveryAxisMatchesTheCpu) {
  struct Case {
    Shape in;
    int axis;
    std::vector<int32_t> sizes;  // empty: SPLIT into `parts`
    int parts;
  };
  for (const Case& c : {Case{{1, 3, 4, 12}, 3, {}, 3},            // 4 channels each: whole slices
                        Case{{1, 3, 4, 9}, -1, {}, 3},            // 3 channels each
                        Case{{1, 3, 4, 11}, 3, {5, -1, 2}, 3},    // uneven, past slice edges
                        Case{{1, 6, 4, 5}, 1, {}, 2},             // height
                        Case{{1, 3, 7, 6}, 2, {2, 1, 4}, 3},      // width
                        Case{{2, 3, 4, 6}, 0, {}, 2},             // batch
                        Case{{1, 6, 10}, 1, {1, 2, 3}, 3},        // rank 3 along width
                        Case{{4, 10}, 1, {3, 3, 4}, 3}}) {         // rank 2 along channels
    SCOPED_TRACE(::testing::Message() << ShapeToString(c.in) << " axis " << c.axis);
    testing::OneOp g;
    const int x = g.Input(c.in);
    const size_t a = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int>(c.in.size()) : c.axis);
    auto plan = PlanSplit(c.in, c.axis, std::vector<int64_t>(c.sizes.begin(), c.sizes.end()), c.parts);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<Shape> outs;
    for (int size : plan->sizes) {
      outs.push_back(c.in);
      outs.back()[a] = size;
    }
    std::vector<int> ys;
    if (c.sizes.empty()) {
      ys = g.Op(OpKind::kSplit, SplitAttributes{c.parts}, {g.b.ConstantInt({}, {c.axis}), x}, outs);
    } else {
      ys = g.Op(OpKind::kSplitV, SplitAttributes{c.parts},
                {x, g.b.ConstantInt({static_cast<int>(c.sizes.size())}, c.sizes), g.b.ConstantInt({1}, {c.axis})}, outs);
    }
    g.Out(ys);
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SplitGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
