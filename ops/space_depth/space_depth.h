// SPACE_TO_DEPTH and DEPTH_TO_SPACE: blocks of block_size x block_size pixels
// <-> channels.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct BlockSizeAttributes {
  int32_t block_size = 1;
};

std::vector<OpDefinition> SpaceDepthOps();

}  // namespace mgd::ops
