// NaN and Inf through the CPU reference kernels: each case of
// tests/nonfinite_cases.h gives exactly what docs/numerics.md's contract
// says (IEEE 754 arithmetic; clamps, max and min keep NaN; Inf stays Inf
// where no activation clamps it).
#include <gtest/gtest.h>

#include "tests/nonfinite_cases.h"

namespace mgd {
namespace {

using testing::NonFiniteCase;

class NonFiniteTest : public ::testing::TestWithParam<NonFiniteCase> {};

TEST_P(NonFiniteTest, TheCpuGivesTheContractsValues) {
  const NonFiniteCase& c = GetParam();
  testing::single_op::ExpectClose(testing::single_op::RunSingleOp(c.op, c.attributes, c.operands, c.output), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Ops, NonFiniteTest, ::testing::ValuesIn(testing::NonFiniteCases()),
                         [](const ::testing::TestParamInfo<NonFiniteCase>& info) { return info.param.name; });

}  // namespace
}  // namespace mgd
