// Partitioning by cost with the GPU delegate: the work estimate against
// hand-counted operations, rates measured on the device, and a partition
// whose submission alone costs more than its work on the CPU.
#include <cmath>

#include "delegate/capabilities.h"
#include "delegate/cost_model.h"
#include "ops/matmul/batch_matmul.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;

TEST(CostModelTest, FlopsAsCountedByHand) {
  // The reference workload: 2 * pixels * (3x3x32x32 + 32x64 + 64x32), plus
  // its biases and one operation per output element.
  const Graph reference = ReferenceWorkload();
  double flops = 0;
  for (const Node& node : reference.nodes) flops += EstimatedFlops(reference, node);
  const double pixels = 56.0 * 56.0;
  const double expected = ReferenceWorkloadFlops() + 2 * pixels * (32 + 64 + 32) + pixels * (32 + 64 + 32);
  EXPECT_DOUBLE_EQ(flops, expected);
  // BATCH_MATMUL says its own: 2 * M * N * K for [2, 3, 5] x [2, 5, 7].
  GraphBuilder b;
  const int x = b.Input({2, 3, 5}), y = b.Input({2, 5, 7}), z = b.Tensor({2, 3, 7});
  b.Op(OpKind::kBatchMatmul, ops::BatchMatmulAttributes{}, {x, y}, {z});
  const Graph g = b.Build();
  EXPECT_DOUBLE_EQ(EstimatedFlops(g, g.nodes[0]), 2.0 * 2 * 3 * 7 * 5);
}

using CostModelGpuTest = testing::DelegateTest;

TEST_P(CostModelGpuTest, RatesAreMeasuredAndATinyPartitionStaysOnTheCpu) {
  absl::StatusOr<CostRates> rates = delegate_->cost_rates();
  ASSERT_TRUE(rates.ok()) << rates.status();
  for (double r : {rates->cpu_ms_per_mflop, rates->partition_ms, rates->ms_per_mib}) {
    EXPECT_GT(r, 0.0);
    EXPECT_TRUE(std::isfinite(r));
  }
  EXPECT_GE(rates->gpu_ms_per_mflop, 0.0);
  EXPECT_GE(rates->dispatch_ms, 0.0);

  // One ADD of 4 values: about 8 operations on the CPU against a submission.
  GraphBuilder b;
  const int x = b.Input({1, 4}), y = b.Tensor({1, 4});
  b.Op(OpKind::kAdd, {}, {x, b.Constant({1}, {1.0f})}, {y});
  b.Output(y);
  InterpreterOptions options;
  options.delegates.push_back(delegate_.get());
  options.partition_by_cost = true;
  auto interpreter = Interpreter::Create(b.Build(), std::move(options));
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  EXPECT_TRUE((*interpreter)->partitions().empty());
  EXPECT_EQ((*interpreter)->placements()[0].where, NodePlacement::Where::kCpu);
  EXPECT_THAT((*interpreter)->placements()[0].reason, ::testing::HasSubstr(": on the CPU by cost: its partition of 1 nodes"));

  // The reference workload's estimate on the CPU is its measured rate.
  const Graph reference = ReferenceWorkload();
  Partition whole{{0, 1, 2}, reference.inputs, reference.outputs};
  const PartitionCost cost = EstimatePartitionCost(reference, whole, *rates);
  double mflops = 0;
  for (const Node& node : reference.nodes) mflops += EstimatedFlops(reference, node) / 1e6;
  EXPECT_DOUBLE_EQ(cost.cpu_ms, mflops * rates->cpu_ms_per_mflop);
  EXPECT_GE(cost.transfer_ms, rates->partition_ms);
}

INSTANTIATE_TEST_SUITE_P(Backends, CostModelGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
