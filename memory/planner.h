// Memory planning for a partition's intermediate tensors (issue 5, first
// part: the plain algorithms). Input: one usage record per tensor (bytes as
// stored, first and last execution step that touches it). Two problems:
//   shared objects: assign tensors to reusable buffers; cost = sum of sizes;
//   offsets: place tensors in one arena; cost = arena size.
// Two tensors whose [first, last] intervals intersect never share bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgd::memory {

struct TensorUsage {
  uint64_t bytes = 0;
  int first = 0;  // first step using it
  int last = 0;   // last step using it (inclusive)
};

struct SharedObjectsPlan {
  std::vector<uint64_t> object_bytes;  // one per buffer
  std::vector<int> object_of;          // per tensor
  uint64_t total() const;
};

struct OffsetsPlan {
  std::vector<uint64_t> offsets;  // per tensor
  uint64_t arena_bytes = 0;
};

// The largest total size of tensors alive at one step: no plan does better.
uint64_t LowerBound(const std::vector<TensorUsage>& usages);

SharedObjectsPlan NaiveSharedObjects(const std::vector<TensorUsage>& usages);
// Reuse only buffers of exactly the tensor's size.
SharedObjectsPlan EqualitySharedObjects(const std::vector<TensorUsage>& usages);
// In execution order, each tensor takes the free buffer closest in size
// (growing the largest free one if none fits), else a new one.
SharedObjectsPlan GreedyInOrderSharedObjects(const std::vector<TensorUsage>& usages);
// Largest tensors first, each into a buffer none of whose tensors overlap it.
SharedObjectsPlan GreedyBySizeSharedObjects(const std::vector<TensorUsage>& usages);
// Tensors of the steps with the most live bytes first (the breadth order
// below), each into the buffer that fits it best among those free for its
// whole lifetime: the smallest that is large enough, else the largest, grown.
SharedObjectsPlan GreedyByBreadthSharedObjects(const std::vector<TensorUsage>& usages);
// Minimum-cost flow over "tensor j takes tensor i's buffer" edges
// (min_cost_flow.cc, solved with Boost.Graph).
SharedObjectsPlan MinCostFlowSharedObjects(const std::vector<TensorUsage>& usages);

OffsetsPlan NaiveOffsets(const std::vector<TensorUsage>& usages);
// In execution order, each tensor at the best-fitting gap between the tensors
// still alive when it starts, else above them.
OffsetsPlan GreedyInOrderOffsets(const std::vector<TensorUsage>& usages);
// Largest first, each at the lowest offset that fits between the tensors
// already placed whose lifetimes overlap it (TFLite's greedy by size).
OffsetsPlan GreedyBySizeOffsets(const std::vector<TensorUsage>& usages);
// TFLite's greedy by breadth: tensors of the steps with the most live bytes
// first, placed the same way.
OffsetsPlan GreedyByBreadthOffsets(const std::vector<TensorUsage>& usages);

// Empty when the plan is valid; else what is wrong (tensor indices named).
std::string CheckPlan(const std::vector<TensorUsage>& usages, const SharedObjectsPlan& plan);
std::string CheckPlan(const std::vector<TensorUsage>& usages, const OffsetsPlan& plan);

}  // namespace mgd::memory
