// CUMSUM: the CPU kernel by hand in its four modes and against a naive sum
// on every axis, its errors, and the GPU against the CPU.
#include "ops/cumsum/cumsum.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(CumsumTest, FourModesByHand) {
  const Operand x = In({4}, {1, 2, 3, 4});
  EXPECT_EQ(RunSingleOp(OpKind::kCumsum, CumsumAttributes{false, false}, {x, Ints({}, {0})}, {4}),
            (std::vector<float>{1, 3, 6, 10}));
  EXPECT_EQ(RunSingleOp(OpKind::kCumsum, CumsumAttributes{true, false}, {x, Ints({}, {0})}, {4}),
            (std::vector<float>{0, 1, 3, 6}));
  EXPECT_EQ(RunSingleOp(OpKind::kCumsum, CumsumAttributes{false, true}, {x, Ints({}, {0})}, {4}),
            (std::vector<float>{10, 9, 7, 4}));
  EXPECT_EQ(RunSingleOp(OpKind::kCumsum, CumsumAttributes{true, true}, {x, Ints({}, {-1})}, {4}),
            (std::vector<float>{9, 7, 4, 0}));
}

TEST(CumsumTest, EveryAxisMatchesNaiveSums) {
  const Shape shape{2, 3, 4, 5};
  const auto x = Random(Count(shape), 7100);
  for (int axis : {0, 1, 2, 3, -2}) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "axis " << axis << " exclusive " << exclusive << " reverse " << reverse);
        const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
        std::vector<double> expected;
        for (int64_t i = 0; i < NumElements(shape); ++i) {
          auto idx = Unravel(i, shape);
          const int64_t p = idx[a];
          double sum = 0.0;
          for (int64_t j = 0; j < shape[a]; ++j) {
            const bool in = reverse ? (exclusive ? j > p : j >= p) : (exclusive ? j < p : j <= p);
            if (!in) continue;
            idx[a] = j;
            sum += x[static_cast<size_t>(Ravel(idx, shape))];
          }
          expected.push_back(sum);
        }
        ExpectClose(RunSingleOp(OpKind::kCumsum, CumsumAttributes{exclusive, reverse}, {In(shape, x), Ints({}, {axis})}, shape),
                    expected);
      }
    }
  }
  EXPECT_THAT(CreateStatus(OpKind::kCumsum, {}, {In(shape, x), Ints({}, {4})}, {shape}).message(),
              ::testing::HasSubstr("axis 4 is out of range"));
}

using CumsumGpuTest = testing::DelegateTest;

TEST_P(CumsumGpuTest, EveryAxisAndModeMatchesTheCpu) {
  for (int axis : {0, 1, 2, 3}) {
    for (int mode = 0; mode < 4; ++mode) {
      SCOPED_TRACE(::testing::Message() << "axis " << axis << " mode " << mode);
      testing::OneOp g;
      const int x = g.Input({2, 5, 6, 7});
      g.Out(g.Op(OpKind::kCumsum, CumsumAttributes{(mode & 1) != 0, (mode & 2) != 0}, {x, g.b.ConstantInt({}, {axis})},
                 {{2, 5, 6, 7}}));
      ExpectSameAsCpu(g.b.Build(), g.data);
    }
  }
  {  // rank 2 along the last axis (a sequence's positions)
    testing::OneOp g;
    const int x = g.Input({3, 19});
    g.Out(g.Op(OpKind::kCumsum, {}, {x, g.b.ConstantInt({}, {-1})}, {{3, 19}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CumsumGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
