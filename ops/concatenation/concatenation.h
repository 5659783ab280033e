// CONCATENATION along one axis (negative counts from the end), with a fused
// activation (which LiteRT ignores and mgd applies: docs/numerics.md); PACK
// (pack.cc), which stacks tensors of one shape along a new axis.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct ConcatenationAttributes {
  int32_t axis = 0;
  Activation activation = Activation::kNone;
};

std::vector<OpDefinition> ConcatenationOps();

struct PackAttributes {
  int32_t values_count = 0;
  int32_t axis = 0;  // of the output: -(rank + 1) .. rank of the inputs
};

std::vector<OpDefinition> PackOps();

}  // namespace mgd::ops
