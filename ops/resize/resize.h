// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR with TFLite's align_corners and
// half_pixel_centers conventions.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct ResizeAttributes {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

// TFLite's input/output scale along one axis, in float as TFLite computes it
// (the CPU kernel and the GPU generator both use it).
inline float ResizeScale(const ResizeAttributes& a, int in, int out) {
  return (a.align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                      : static_cast<float>(in) / static_cast<float>(out);
}

std::vector<OpDefinition> ResizeOps();

}  // namespace mgd::ops
