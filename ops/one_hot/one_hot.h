// ONE_HOT: for int32 or int64 indices, a new axis of `depth` (a constant
// int32 scalar) holding on_value where its position is the index and
// off_value elsewhere (both scalars of the output's dtype); axis -1 puts
// the new axis last. An index outside [0, depth) gives a row of off_value.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct OneHotAttributes {
  int32_t axis = -1;
};

std::vector<OpDefinition> OneHotOps();

}  // namespace mgd::ops
