// CUMSUM: running sums along one axis (a constant int32 scalar, negative
// from the end), from the end when `reverse`, leaving each element's own
// value out when `exclusive`.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct CumsumAttributes {
  bool exclusive = false, reverse = false;
};

std::vector<OpDefinition> CumsumOps();

}  // namespace mgd::ops
