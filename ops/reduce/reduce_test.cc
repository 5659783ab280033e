// MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD: the CPU kernel by hand and
// against a naive loop, the GPU against the CPU over every axis set, with and
// without keep_dims.
#include "ops/reduce/reduce.h"

#include <cmath>
#include <tuple>

#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;

// Mean over H and W of an NHWC tensor: [N, C] values.
std::vector<double> RefMeanHw(const Shape& xs, const std::vector<float>& x) {
  std::vector<double> out;
  for (int b = 0; b < xs[0]; ++b)
    for (int c = 0; c < xs[3]; ++c) {
      double sum = 0;
      for (int y = 0; y < xs[1]; ++y)
        for (int w = 0; w < xs[2]; ++w) sum += x[At(xs, b, y, w, c)];
      out.push_back(sum / (xs[1] * xs[2]));
    }
  return out;
}

TEST(MeanTest, SpatialMeanByHand) {
  // x [1,2,2,2]: channel 0 = 1,3,5,7 -> 4; channel 1 = 2,4,6,8 -> 5.
  const auto out = RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true},
                               {In({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Ints({2}, {1, 2})}, {1, 1, 1, 2});
  ExpectClose(out, {4, 5});
}

TEST(MeanTest, Axes12KeepDimsTrue) {
  const Shape xs{2, 5, 3, 7};
  const auto x = Random(Count(xs), 4200);
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true}, {In(xs, x), Ints({2}, {1, 2})}, {2, 1, 1, 7}),
      RefMeanHw(xs, x));
}

TEST(MeanTest, Axes12KeepDimsFalse) {
  const Shape xs{2, 5, 3, 7};
  const auto x = Random(Count(xs), 4210);
  ExpectClose(RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = false}, {In(xs, x), Ints({2}, {1, 2})}, {2, 7}),
              RefMeanHw(xs, x));
}

TEST(MeanTest, NegativeAxes) {
  // [-3, -2] on rank 4 are axes 1 and 2.
  const Shape xs{1, 4, 6, 5};
  const auto x = Random(Count(xs), 4220);
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = false}, {In(xs, x), Ints({2}, {-3, -2})}, {1, 5}),
      RefMeanHw(xs, x));
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true}, {In(xs, x), Ints({2}, {2, -3})}, {1, 1, 1, 5}),
      RefMeanHw(xs, x));
}

TEST(MeanTest, LastAxisByHand) {
  // [[1, 2, 3], [4, 6, 8]] mean over axis -1 -> [2, 6].
  const auto out =
      RunSingleOp(OpKind::kMean, ReducerAttributes{}, {In({2, 3}, {1, 2, 3, 4, 6, 8}), Ints({1}, {-1})}, {2});
  ExpectClose(out, {2, 6});
}

// [[1, -2, 3], [4, 0.5, -8]] over axis -1 (and both axes, keep_dims).
TEST(ReduceTest, SumMaxMinProdByHand) {
  const auto x = In({2, 3}, {1, -2, 3, 4, 0.5f, -8});
  ExpectClose(RunSingleOp(OpKind::kSum, ReducerAttributes{}, {x, Ints({1}, {-1})}, {2}), {2, -3.5});
  ExpectClose(RunSingleOp(OpKind::kReduceMax, ReducerAttributes{}, {x, Ints({1}, {-1})}, {2}), {3, 4});
  ExpectClose(RunSingleOp(OpKind::kReduceMin, ReducerAttributes{}, {x, Ints({1}, {-1})}, {2}), {-2, -8});
  ExpectClose(RunSingleOp(OpKind::kReduceProd, ReducerAttributes{}, {x, Ints({1}, {-1})}, {2}), {-6, -16});
  ExpectClose(RunSingleOp(OpKind::kReduceMax, ReducerAttributes{.keep_dims = true}, {x, Ints({2}, {0, 1})}, {1, 1}), {4});
  ExpectClose(RunSingleOp(OpKind::kReduceProd, ReducerAttributes{.keep_dims = true}, {x, Ints({2}, {1, 0})}, {1, 1}), {96});
}

using ReduceGpuTest = testing::DelegateTest;

// The other reductions over the same axis sets. All values negative (and
// 7 channels, one padding lane): a maximum over channels that took a
// padding lane's zero would show.
TEST_P(ReduceGpuTest, SumMaxMinProdOverAxesMatchTheCpu) {
  std::vector<float> negative = testing::Uniform(210, 31, 1.0f), near_one = testing::Uniform(210, 32, 0.1f);
  for (float& v : negative) v = -1.5f - std::fabs(v);
  for (float& v : near_one) v += 1.0f;
  for (OpKind op : {OpKind::kSum, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kReduceProd}) {
    SCOPED_TRACE(OpName(op));
    for (const auto& [axes, keep, out] : {std::tuple<std::vector<int32_t>, bool, Shape>{{1, 2}, true, {1, 1, 1, 7}},
                                          {{3}, true, {1, 5, 6, 1}}, {{-2}, true, {1, 5, 1, 7}}, {{1, 2}, false, {1, 7}},
                                          {{1, 2, 3}, false, {1}}}) {
      SCOPED_TRACE(::testing::PrintToString(axes));
      GraphBuilder b;
      const int x = b.Input({1, 5, 6, 7}), y = b.Tensor(out);
      b.Op(op, ReducerAttributes{keep}, {x, b.ConstantInt({static_cast<int>(axes.size())}, axes)}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {op == OpKind::kReduceProd ? near_one : negative});
    }
  }
}

TEST_P(ReduceGpuTest, MeanOverAxesMatchesTheCpu) {
  struct Case {
    std::vector<int32_t> axes;
    bool keep;
    Shape out;
  };
  for (const Case& c : {Case{{1, 2}, true, {1, 1, 1, 7}}, Case{{1, 2}, false, {1, 7}}, Case{{3}, true, {1, 5, 6, 1}},
                        Case{{2}, true, {1, 5, 1, 7}}, Case{{-3, -2}, false, {1, 7}}}) {
    testing::OneOp g;
    const int x = g.Input({1, 5, 6, 7});
    g.Out(g.Op(OpKind::kMean, ReducerAttributes{c.keep},
               {x, g.b.ConstantInt({static_cast<int>(c.axes.size())}, c.axes)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

// Without keep_dims the kept axes may land on other BHWC axes than the
// input's ([B,W,C] over C is [B,W]: W moves from x to the channels): each
// output lane then reduces from its own input position (every node must run
// on the GPU).
TEST_P(ReduceGpuTest, ReductionsThatMoveTheKeptAxesMatchTheCpu) {
  struct Case {
    Shape in;
    std::vector<int32_t> axes;
    Shape out;
  };
  const Case cases[] = {{{1, 5, 6, 7}, {2}, {1, 5, 7}},  {{1, 5, 6, 7}, {3}, {1, 5, 6}},
                        {{1, 5, 6, 7}, {1, -1}, {1, 6}}, {{2, 5, 6, 7}, {0}, {5, 6, 7}},
                        {{2, 9, 7}, {2}, {2, 9}},        {{2, 9, 7}, {0, 2}, {9}},
                        {{6, 9}, {1}, {6}}};
  uint32_t seed = 40;
  for (OpKind op : {OpKind::kMean, OpKind::kSum, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kReduceProd}) {
    SCOPED_TRACE(OpName(op));
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::PrintToString(c.in) + " over " + ::testing::PrintToString(c.axes));
      std::vector<float> x = testing::Uniform(static_cast<size_t>(NumElements(c.in)), seed++, 1.0f);
      for (float& v : x) v = op == OpKind::kReduceProd ? 1.0f + 0.1f * v : -1.5f - std::fabs(v);
      GraphBuilder b;
      const int in = b.Input(c.in), y = b.Tensor(c.out);
      b.Op(op, ReducerAttributes{false}, {in, b.ConstantInt({static_cast<int>(c.axes.size())}, c.axes)}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {x});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ReduceGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
