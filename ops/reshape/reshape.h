// RESHAPE, SQUEEZE and EXPAND_DIMS: one new shape for the same elements in
// the same order.
#pragma once

#include <optional>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct ReshapeAttributes {
  std::optional<Shape> new_shape;  // used when the shape input is absent
};

struct SqueezeAttributes {
  std::vector<int32_t> squeeze_dims;
};

std::vector<OpDefinition> ReshapeOps();

}  // namespace mgd::ops
