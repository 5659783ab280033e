// GATHER: slices of `params` picked along one axis by `indices` (int32 or
// int64), as embeddings are looked up: out = params[:axis] + indices[batch_dims:]
// + params[axis + 1:], with the first `batch_dims` dimensions of params and
// indices walked together. Negative axis and batch_dims count from the end
// (of params and of indices).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_definition.h"

namespace mgd::ops {

struct GatherAttributes {
  int32_t axis = 0, batch_dims = 0;
};

// A gather as four loops: out[b][o][i][n] = params[b][o][indices[b][i]][n].
struct GatherPlan {
  int64_t batch = 1;    // the batch_dims dimensions
  int64_t outer = 1;    // params' dimensions between them and the axis
  int64_t extent = 1;   // params' axis
  int64_t indices = 1;  // indices per batch
  int64_t inner = 1;    // params' dimensions after the axis
  Shape output;
};

// The plan for these shapes, or an error naming the attribute that does
// not fit them.
absl::StatusOr<GatherPlan> PlanGather(const Shape& params, const Shape& indices, const GatherAttributes& a);

std::vector<OpDefinition> GatherOps();

}  // namespace mgd::ops
