// Partitioning by cost (InterpreterOptions::partition_by_cost): what a
// partition is expected to cost per run on the GPU delegate, against its
// nodes on the CPU's kernels, from rates measured once per delegate on four
// small graphs (the same work on both sides where it can be).
#pragma once

#include "absl/status/statusor.h"
#include "interpreter/delegate.h"
#include "model/graph.h"

namespace mgd {

class GpuDelegate;

struct CostRates {
  double cpu_ms_per_mflop = 0;  // the CPU's kernels on convolutions
  double gpu_ms_per_mflop = 0;  // the GPU's shaders, transfers apart
  double dispatch_ms = 0;       // each dispatch beyond a partition's first
  double partition_ms = 0;      // a partition's submission, one dispatch and its smallest transfers
  double ms_per_mib = 0;        // host <-> GPU: a MiB in or out
};

// The floating-point operations one run of `node` does (OpDefinition::flops,
// or the rule it names).
double EstimatedFlops(const Graph& graph, const Node& node);

// Times, each the median of a few runs after warm-up: the reference
// workload (delegate/capabilities.h) on the CPU and through `delegate`,
// one ADD of 4 values and of 2 MiB, and eight chained SOFTMAXes of 4
// values, through `delegate` (a delegate of its own for measuring: these
// graphs go through its cache and observers).
absl::StatusOr<CostRates> MeasureCostRates(GpuDelegate& delegate);

// The partition's expected cost: its work at the measured rates, a dispatch
// per node (fusion only makes it cheaper), its submission and the bytes
// of its inputs and outputs.
PartitionCost EstimatePartitionCost(const Graph& graph, const Partition& partition, const CostRates& rates);

}  // namespace mgd
