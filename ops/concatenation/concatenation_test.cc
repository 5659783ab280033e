// CONCATENATION and PACK: the CPU kernels by hand and against index
// arithmetic, the GPU against the CPU along every axis.
#include "ops/concatenation/concatenation.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(ConcatenationTest, NegativeAxisByHand) {
  // [[1,2],[3,4]] ++ [[5],[6]] on axis -1 -> [[1,2,5],[3,4,6]].
  const auto out = RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = -1},
                               {In({2, 2}, {1, 2, 3, 4}), In({2, 1}, {5, 6})}, {2, 3});
  EXPECT_EQ(out, (std::vector<float>{1, 2, 5, 3, 4, 6}));
}

TEST(ConcatenationTest, FusedReluByHand) {
  // relu([-1, 2] ++ [3, -4]) on axis 0 = [0, 2, 3, 0].
  const auto out =
      RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = 0, .activation = Activation::kRelu},
                  {In({2}, {-1, 2}), Const({2}, {3, -4})}, {4});
  EXPECT_EQ(out, (std::vector<float>{0, 2, 3, 0}));
}

TEST(ConcatenationTest, EveryAxisMatchesIndexMath) {
  // Three inputs of rank 4 whose sizes on the concat axis are 2, 3 and 1.
  const Shape base{2, 3, 4, 5};
  for (int axis : {0, 1, 2, 3, -1, -2, -3, -4}) {
    SCOPED_TRACE(axis);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    std::vector<Shape> shapes(3, base);
    shapes[0][a] = 2;
    shapes[1][a] = 3;
    shapes[2][a] = 1;
    std::vector<std::vector<float>> data;
    std::vector<Operand> ops;
    for (size_t i = 0; i < 3; ++i) {
      data.push_back(Iota(Count(shapes[i]), 1000.0f * static_cast<float>(i)));
      ops.push_back(In(shapes[i], data[i]));
    }
    Shape out_shape = base;
    out_shape[a] = 6;
    std::vector<float> expected;
    for (int64_t i = 0; i < NumElements(out_shape); ++i) {
      auto idx = Unravel(i, out_shape);
      size_t which = 0;
      while (idx[a] >= shapes[which][a]) idx[a] -= shapes[which++][a];
      expected.push_back(data[which][static_cast<size_t>(Ravel(idx, shapes[which]))]);
    }
    EXPECT_EQ(RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = axis}, ops, out_shape), expected);
  }
}

TEST(PackTest, ByHandOnEveryAxis) {
  // a = [1,2,3], b = [4,5,6]: axis 0 -> [[1,2,3],[4,5,6]]; axis 1 (= -1) -> [[1,4],[2,5],[3,6]].
  const std::vector<Operand> ops = {In({3}, {1, 2, 3}), In({3}, {4, 5, 6})};
  EXPECT_EQ(RunSingleOp(OpKind::kPack, PackAttributes{2, 0}, ops, {2, 3}), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(RunSingleOp(OpKind::kPack, PackAttributes{2, -1}, ops, {3, 2}), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(PackTest, MatchesIndexMathAndRefusesMismatches) {
  const Shape xs{2, 3, 4};
  std::vector<std::vector<float>> data;
  std::vector<Operand> ops;
  for (int i = 0; i < 3; ++i) {
    data.push_back(Iota(Count(xs), 100.0f * static_cast<float>(i)));
    ops.push_back(In(xs, data.back()));
  }
  for (int axis : {0, 1, 2, 3, -2}) {
    SCOPED_TRACE(axis);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    Shape ys = xs;
    ys.insert(ys.begin() + static_cast<long>(a), 3);
    std::vector<float> expected;
    for (int64_t i = 0; i < NumElements(ys); ++i) {
      auto idx = Unravel(i, ys);
      const int which = static_cast<int>(idx[a]);
      idx.erase(idx.begin() + static_cast<long>(a));
      expected.push_back(data[static_cast<size_t>(which)][static_cast<size_t>(Ravel(idx, xs))]);
    }
    EXPECT_EQ(RunSingleOp(OpKind::kPack, PackAttributes{3, axis}, ops, ys), expected);
  }
  EXPECT_THAT(CreateStatus(OpKind::kPack, PackAttributes{2, 0}, {In({3}, {}), In({2}, {})}, {{2, 3}}).message(),
              ::testing::HasSubstr("PACK needs one shape"));
  EXPECT_THAT(CreateStatus(OpKind::kPack, PackAttributes{2, 3}, {In({3}, {}), In({3}, {})}, {{2, 3}}).message(),
              ::testing::HasSubstr("field axis: 3 is out of range"));
  EXPECT_THAT(CreateStatus(OpKind::kPack, PackAttributes{3, 0}, {In({3}, {}), In({3}, {})}, {{2, 3}}).message(),
              ::testing::HasSubstr("has 2 inputs, expected 3"));
}

using ConcatenationGpuTest = testing::DelegateTest;

TEST_P(ConcatenationGpuTest, AlongEveryAxisMatchesTheCpu) {
  struct Case {
    std::vector<Shape> ins;
    int axis;
    Shape out;
  };
  for (const Case& c : {Case{{{1, 3, 4, 5}, {1, 3, 4, 3}, {1, 3, 4, 4}}, 3, {1, 3, 4, 12}},
                        Case{{{1, 3, 4, 4}, {1, 3, 4, 8}, {1, 3, 4, 3}}, -1, {1, 3, 4, 15}},
                        Case{{{1, 2, 4, 5}, {1, 3, 4, 5}}, 1, {1, 5, 4, 5}},
                        Case{{{1, 3, 2, 6}, {1, 3, 5, 6}}, 2, {1, 3, 7, 6}},
                        Case{{{1, 4, 6}, {1, 2, 6}}, 1, {1, 6, 6}},
                        Case{{{2, 3}, {2, 6}}, 1, {2, 9}}}) {
    testing::OneOp g;
    std::vector<int> ins;
    for (const Shape& s : c.ins) ins.push_back(g.Input(s));
    g.Out(g.Op(OpKind::kConcatenation, ConcatenationAttributes{c.axis, Activation::kRelu}, ins, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // a constant input
    testing::OneOp g;
    const int x = g.Input({1, 3, 4, 5});
    g.Out(g.Op(OpKind::kConcatenation, ConcatenationAttributes{3, Activation::kNone}, {g.Const({1, 3, 4, 4}), x},
               {{1, 3, 4, 9}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(ConcatenationGpuTest, PackOnEveryAxisMatchesTheCpu) {
  for (const Shape& in : {Shape{1, 3, 5}, Shape{2, 7}, Shape{6}}) {
    const int rank = static_cast<int>(in.size());
    for (int axis = 0; axis <= rank; ++axis) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(in) << " axis " << axis);
      testing::OneOp g;
      std::vector<int> xs;
      for (int i = 0; i < 3; ++i) xs.push_back(g.Input(in));
      Shape out = in;
      out.insert(out.begin() + axis, 3);
      g.Out(g.Op(OpKind::kPack, PackAttributes{3, axis}, xs, {out}));
      ExpectSameAsCpu(g.b.Build(), g.data);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConcatenationGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
