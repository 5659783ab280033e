// CAST between float32, int32, int64, uint8, int8 and bool, the output
// tensor's type saying to what.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

std::vector<OpDefinition> CastOps();

}  // namespace mgd::ops
