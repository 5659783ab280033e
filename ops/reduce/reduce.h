// Reductions over axes given as a constant int32/int64 input (negative
// axes count from the end), with TFLite's keep_dims: MEAN, SUM, REDUCE_MAX,
// REDUCE_MIN and REDUCE_PROD (sums and products in double on the CPU, fp32
// on the GPU).
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct ReducerAttributes {
  bool keep_dims = false;
};

std::vector<OpDefinition> ReduceOps();

}  // namespace mgd::ops
