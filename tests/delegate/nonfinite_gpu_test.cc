// NaN and Inf on the GPU: each case of tests/nonfinite_cases.h, fully
// delegated, gives NaN and +-Inf exactly where the CPU reference kernels do,
// and the same finite values within the op bounds (docs/numerics.md: as far
// as the GPU languages allow; lavapipe and llvmpipe keep every one).
#include "tests/delegate/delegate_fixture.h"
#include "tests/nonfinite_cases.h"

namespace mgd {
namespace {

using NonFiniteGpuTest = testing::DelegateTest;

const char* Class(float v) { return std::isnan(v) ? "NaN" : std::isinf(v) ? (v > 0 ? "+Inf" : "-Inf") : "finite"; }

TEST_P(NonFiniteGpuTest, NanAndInfWhereTheCpuHasThem) {
  for (const testing::NonFiniteCase& c : testing::NonFiniteCases()) {
    SCOPED_TRACE(c.name);
    std::vector<std::vector<float>> inputs;
    const Graph graph = testing::single_op::SingleOpGraph(c.op, c.attributes, c.operands, {c.output}, &inputs);
    const auto cpu = Run(graph, inputs, nullptr);
    const auto gpu = Run(graph, inputs, delegate_.get());
    ASSERT_EQ(cpu.size(), 1u);
    ASSERT_EQ(gpu.size(), 1u);
    ASSERT_EQ(gpu[0].size(), cpu[0].size());
    for (size_t i = 0; i < cpu[0].size(); ++i) {
      const float a = gpu[0][i], e = cpu[0][i];
      EXPECT_STREQ(Class(a), Class(e)) << "element " << i << ": gpu " << a << ", cpu " << e;
      if (std::isfinite(e) && std::isfinite(a)) {
        EXPECT_LE(std::abs(a - e), testing::OpBound(e, GetParam().fp16)) << "element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, NonFiniteGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
