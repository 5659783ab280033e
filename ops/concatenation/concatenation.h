// CONCATENATION along one axis (negative counts from the end), with a fused
// activation (which LiteRT ignores and mgd applies: docs/numerics.md).
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

}  // namespace mgd::ops
