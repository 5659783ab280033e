// BATCH_MATMUL: the CPU kernel by hand and against a naive product with
// numpy broadcasting and both adjoints, its errors, and the GPU against the
// CPU on odd shapes of ranks 2 to 4.
#include "ops/matmul/batch_matmul.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

using ::testing::HasSubstr;

TEST(BatchMatmulTest, ByHand) {
  // [[1,2],[3,4]] x [[5,6,7],[8,9,10]] = [[21,24,27],[47,54,61]].
  EXPECT_EQ(RunSingleOp(OpKind::kBatchMatmul, {}, {In({2, 2}, {1, 2, 3, 4}), In({2, 3}, {5, 6, 7, 8, 9, 10})}, {2, 3}),
            (std::vector<float>{21, 24, 27, 47, 54, 61}));
  // adj_y: the same B given as [[5,8],[6,9],[7,10]].
  EXPECT_EQ(RunSingleOp(OpKind::kBatchMatmul, BatchMatmulAttributes{false, true},
                        {In({2, 2}, {1, 2, 3, 4}), Const({3, 2}, {5, 8, 6, 9, 7, 10})}, {2, 3}),
            (std::vector<float>{21, 24, 27, 47, 54, 61}));
}

// A naive product over the output's index, each operand read through numpy
// broadcasting of its batch dimensions.
std::vector<double> NaiveProduct(const Shape& as, const std::vector<float>& a, const Shape& bs, const std::vector<float>& b,
                                 bool adj_x, bool adj_y, const Shape& out) {
  const size_t rank = out.size();
  const int k = adj_x ? as[as.size() - 2] : as.back();
  std::vector<double> y;
  for (int64_t i = 0; i < NumElements(out); ++i) {
    const auto idx = Unravel(i, out);
    auto at = [&](const Shape& s, const std::vector<float>& v, int64_t r, int64_t c) {
      std::vector<int> own(s.size());
      for (size_t d = 0; d + 2 < s.size(); ++d) own[d] = s[d] == 1 ? 0 : idx[d + rank - s.size()];
      own[s.size() - 2] = static_cast<int>(r);
      own[s.size() - 1] = static_cast<int>(c);
      return static_cast<double>(v[static_cast<size_t>(Ravel(own, s))]);
    };
    double sum = 0.0;
    for (int q = 0; q < k; ++q) {
      const double av = adj_x ? at(as, a, q, idx[rank - 2]) : at(as, a, idx[rank - 2], q);
      const double bv = adj_y ? at(bs, b, idx[rank - 1], q) : at(bs, b, q, idx[rank - 1]);
      sum += av * bv;
    }
    y.push_back(sum);
  }
  return y;
}

struct Case {
  Shape a, b;
  bool adj_x, adj_y;
  Shape out;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {{5, 7}, {7, 6}, false, false, {5, 6}},
      {{2, 5, 7}, {2, 7, 9}, false, false, {2, 5, 9}},
      {{2, 7, 5}, {2, 9, 7}, true, true, {2, 5, 9}},
      {{3, 5, 7}, {7, 6}, false, false, {3, 5, 6}},           // B broadcast over the batch
      {{1, 4, 5, 8}, {1, 4, 6, 8}, false, true, {1, 4, 5, 6}},  // attention's Q x K^T
      {{2, 1, 3, 6}, {1, 3, 6, 5}, false, false, {2, 3, 3, 5}},  // both broadcast
      {{2, 3, 4, 6}, {3, 6, 5}, false, false, {2, 3, 4, 5}},     // B of lower rank
      {{1, 2, 9, 3}, {1, 2, 9, 10}, true, false, {1, 2, 3, 10}},
  };
  return cases;
}

TEST(BatchMatmulTest, MatchesNaiveProduct) {
  uint32_t seed = 7000;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(::testing::Message() << ShapeToString(c.a) << " x " << ShapeToString(c.b) << " adj " << c.adj_x << c.adj_y);
    const auto a = Random(Count(c.a), seed++), b = Random(Count(c.b), seed++);
    ExpectClose(RunSingleOp(OpKind::kBatchMatmul, BatchMatmulAttributes{c.adj_x, c.adj_y}, {In(c.a, a), In(c.b, b)}, c.out),
                NaiveProduct(c.a, a, c.b, b, c.adj_x, c.adj_y, c.out));
  }
}

TEST(BatchMatmulTest, ShapesThatDoNotMultiplyAreErrors) {
  EXPECT_THAT(CreateStatus(OpKind::kBatchMatmul, {}, {In({2, 3}, {}), In({4, 5}, {})}, {{2, 5}}).message(),
              HasSubstr("do not multiply: 3 columns against 4 rows"));
  EXPECT_THAT(CreateStatus(OpKind::kBatchMatmul, {}, {In({2, 2, 3}, {}), In({3, 3, 5}, {})}, {{2, 2, 5}}).message(),
              HasSubstr("batch dimensions of [2,2,3] and [3,3,5] do not broadcast"));
  EXPECT_THAT(CreateStatus(OpKind::kBatchMatmul, {}, {In({3}, {}), In({3, 5}, {})}, {{5}}).message(),
              HasSubstr("expected rank 2 or more"));
}

using BatchMatmulGpuTest = testing::DelegateTest;

TEST_P(BatchMatmulGpuTest, MatchesTheCpu) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(::testing::Message() << ShapeToString(c.a) << " x " << ShapeToString(c.b) << " adj " << c.adj_x << c.adj_y);
    testing::OneOp g;
    const int a = g.Input(c.a), b = g.Input(c.b);
    g.Out(g.Op(OpKind::kBatchMatmul, BatchMatmulAttributes{c.adj_x, c.adj_y}, {a, b}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // a constant B
    testing::OneOp g;
    const int a = g.Input({1, 6, 10});
    g.Out(g.Op(OpKind::kBatchMatmul, {}, {a, g.Const({10, 7})}, {{1, 6, 7}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchMatmulGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
