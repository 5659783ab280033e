// SPLIT (axis, input; num_splits equal parts) and SPLIT_V (input,
// size_splits with at most one -1, axis): one tensor cut along one axis into
// the node's outputs, in order.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_definition.h"

namespace mgd::ops {

struct SplitAttributes {
  int32_t num_splits = 0;
};

std::vector<OpDefinition> SplitOps();

// Where the outputs lie along the axis of an input of `shape`: SPLIT's
// equal parts (size_splits empty) or SPLIT_V's sizes, a -1 taking the rest.
// Errors name what does not fit.
struct SplitPlan {
  int axis = 0;              // non-negative
  std::vector<int> sizes;    // per output, along the axis
};
absl::StatusOr<SplitPlan> PlanSplit(const Shape& shape, int64_t axis, const std::vector<int64_t>& size_splits,
                                    int outputs);

}  // namespace mgd::ops
