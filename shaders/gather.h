// Lane-by-lane gathers over PHWC4: the generator of every op that only moves
// elements (reshapes, transposes, slices, space/depth rearrangements), told
// where each output element comes from as strides over the flat BHWC index
// (ToBhwc keeps the row-major order).
#pragma once

#include <cstdint>
#include <vector>

#include "shaders/generator.h"

namespace mgd::shaders {

// A lane-by-lane gather: output element f (flat, row-major over `full`, a
// shape with the output's element count) reads input element
// offset + sum(index_d * strides[d]).
struct StridedGather {
  std::vector<int64_t> full;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Row-major strides of a shape.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);

// The shader of node input 0 gathered into output 0.
absl::StatusOr<GeneratedShader> Gather(const NodeContext& ctx, const StridedGather& gather);

}  // namespace mgd::shaders
