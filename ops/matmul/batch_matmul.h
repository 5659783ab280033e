// BATCH_MATMUL: [..., M, K] x [..., K, N] -> [..., M, N], either operand
// transposed in its last two dimensions (adj_x, adj_y), the batch
// dimensions broadcast as numpy does. Attention's two products.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct BatchMatmulAttributes {
  bool adj_x = false, adj_y = false;
};

std::vector<OpDefinition> BatchMatmulOps();

}  // namespace mgd::ops
