// SOFTMAX: the CPU kernel by hand and against the formula, the GPU against
// the CPU (few and many slices, both reductions).
#include "ops/softmax/softmax.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(SoftmaxTest, BetaHalfByHand) {
  // beta 0.5, x = [0, 2 ln 3]: exp(0.5 * x) = [1, 3] -> [0.25, 0.75].
  const auto out = RunSingleOp(OpKind::kSoftmax, SoftmaxAttributes{0.5f},
                               {In({1, 2}, {0, static_cast<float>(2 * std::log(3.0))})}, {1, 2});
  ExpectClose(out, {0.25, 0.75});
}

TEST(SoftmaxTest, BetaNotOneMatchesFormulaPerRow) {
  // Each row of the last dimension: exp(beta (x - max)) / sum.
  for (float beta : {0.3f, 2.5f}) {
    SCOPED_TRACE(beta);
    const Shape shape{2, 3, 7};
    const auto x = Random(Count(shape), 3600, -4, 4);
    std::vector<double> expected;
    for (size_t r = 0; r < 6; ++r) {
      const double mx =
          *std::max_element(x.begin() + static_cast<long>(r * 7), x.begin() + static_cast<long>(r * 7 + 7));
      double sum = 0;
      for (size_t i = 0; i < 7; ++i) sum += std::exp(static_cast<double>(beta) * (x[r * 7 + i] - mx));
      for (size_t i = 0; i < 7; ++i)
        expected.push_back(std::exp(static_cast<double>(beta) * (x[r * 7 + i] - mx)) / sum);
    }
    ExpectClose(RunSingleOp(OpKind::kSoftmax, SoftmaxAttributes{beta}, {In(shape, x)}, shape), expected);
  }
}

using SoftmaxGpuTest = testing::DelegateTest;

TEST_P(SoftmaxGpuTest, OverChannelsMatchesTheCpu) {
  for (auto [shape, beta] : {std::pair{Shape{1, 10}, 1.0f}, std::pair{Shape{1, 3, 4, 7}, 0.5f}, std::pair{Shape{1, 1, 1, 37}, 2.0f},
                                     std::pair{Shape{1, 1001}, 1.0f}, std::pair{Shape{2, 1, 2, 70}, 0.7f}}) {
    testing::OneOp g;
    const int x = g.Input(shape, 3.0f);
    g.Out(g.Op(OpKind::kSoftmax, SoftmaxAttributes{beta}, {x}, {shape}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

// Attention's scores: thousands of rows, several batches (MobileViT's
// [4 pixel positions, 4 heads, 256 patches, 256 patches]).
TEST_P(SoftmaxGpuTest, AttentionRowsInBatchesMatchTheCpu) {
  for (const Shape& shape : {Shape{4, 4, 256, 256}, Shape{1, 16, 256, 256}, Shape{4, 4, 16, 64}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    testing::OneOp g;
    const int x = g.Input(shape, 3.0f);
    g.Out(g.Op(OpKind::kSoftmax, SoftmaxAttributes{1.0f}, {x}, {shape}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SoftmaxGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
