// DENSIFY: TFLite's sparse tensor format (TACO-like: dense and CSR
// dimensions, blocks) to a dense tensor. The interpreter folds it at load
// (its input must be a constant); it has no GPU generator.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

std::vector<OpDefinition> DensifyOps();

}  // namespace mgd::ops
