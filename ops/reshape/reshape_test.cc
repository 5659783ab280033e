// RESHAPE, SQUEEZE and EXPAND_DIMS: the CPU kernel's shapes by hand, the
// GPU against the CPU where the PHWC4 layouts differ (and where they agree,
// which needs no dispatch).
#include "ops/reshape/reshape.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(ReshapeTest, MinusOneInAttributes) {
  // [2,3,4] with new_shape [-1, 6] -> [4, 6]; the data is unchanged.
  const auto x = Iota(24);
  EXPECT_EQ(RunSingleOp(OpKind::kReshape, ReshapeAttributes{Shape{-1, 6}}, {In({2, 3, 4}, x)}, {4, 6}), x);
}

TEST(ReshapeTest, MinusOneViaShapeInput) {
  // The shape input [2, -1, 3] wins over the attributes: [2,3,4] -> [2,4,3].
  const auto x = Iota(24, 1);
  EXPECT_EQ(
      RunSingleOp(OpKind::kReshape, ReshapeAttributes{Shape{24}}, {In({2, 3, 4}, x), Ints({3}, {2, -1, 3})}, {2, 4, 3}),
      x);
}

TEST(ReshapeTest, ElementCountMismatchIsAnError) {
  const absl::Status s = CreateStatus(OpKind::kReshape, {}, {In({2, 3, 4}, {}), Ints({2}, {5, 5})}, {{5, 5}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot reshape"));
}

TEST(ReshapeTest, SqueezeDropsUnitDims) {
  const auto x = Iota(6);
  EXPECT_EQ(RunSingleOp(OpKind::kSqueeze, SqueezeAttributes{{0, 2}}, {In({1, 3, 1, 2}, x)}, {3, 2}), x);
}

TEST(ReshapeTest, ExpandDimsInsertsUnitDim) {
  const auto x = Iota(6);
  EXPECT_EQ(RunSingleOp(OpKind::kExpandDims, {}, {In({3, 2}, x), Ints({}, {1})}, {3, 1, 2}), x);
}

using ReshapeGpuTest = testing::DelegateTest;

TEST_P(ReshapeGpuTest, MatchesTheCpu) {
  auto reshape = [&](const Shape& in, const Shape& out) {
    SCOPED_TRACE(ShapeToString(in) + " -> " + ShapeToString(out));
    testing::OneOp g;
    const int x = g.Input(in);
    g.Out(g.Op(OpKind::kReshape, ReshapeAttributes{},
               {x, g.b.ConstantInt({static_cast<int>(out.size())}, std::vector<int32_t>(out.begin(), out.end()))}, {out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  };
  reshape({1, 4, 6, 5}, {1, 24, 5});
  reshape({1, 4, 6, 5}, {1, 120});
  reshape({1, 2, 3, 8}, {1, 6, 8});
  reshape({1, 1, 1, 10}, {1, 10});  // the same PHWC4 layout: no dispatch with fusion
  {  // SQUEEZE and EXPAND_DIMS (axis -2) over layouts that differ
    testing::OneOp g;
    const int x = g.Input({1, 3, 1, 5});
    const int squeezed = g.Op(OpKind::kSqueeze, SqueezeAttributes{{0, 2}}, {x}, {{3, 5}})[0];
    g.Out(g.Op(OpKind::kExpandDims, {}, {squeezed, g.b.ConstantInt({}, {-2})}, {{3, 1, 5}}));
    g.Out({squeezed});
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ReshapeGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
