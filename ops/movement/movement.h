// The data movement ops: PAD (pad.cc), TRANSPOSE (transpose.cc), SLICE and
// STRIDED_SLICE (slice.cc). Their CPU kernels and GPU generators read the
// same elements through the strided views below.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_definition.h"

namespace mgd::ops {

struct StridedSliceAttributes {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0;
  int32_t new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};

std::vector<OpDefinition> PadOps();
std::vector<OpDefinition> SliceOps();
std::vector<OpDefinition> TransposeOps();

// A slice resolved to a strided view of its input.
struct StridedView {
  int64_t offset = 0;             // flat input index of the first element
  std::vector<int64_t> strides;   // per input dimension, in input elements
  Shape full_shape;               // per input dimension, shrunk ones as 1
  Shape output_shape;             // without the shrunk dimensions
};

// `second` is SLICE's size or STRIDED_SLICE's end; `steps` is null for SLICE
// (whose attributes are the defaults). Errors say which dimension is wrong.
absl::StatusOr<StridedView> ResolveSlice(const Shape& input, const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& second, const std::vector<int64_t>* steps,
                                         const StridedSliceAttributes& attributes);

// out[i0, i1, ...] = in[offset + sum(i_d * strides[d])] over `out_shape`:
// the CPU kernels of TRANSPOSE and the slices.
void StridedCopy(const float* in, int64_t offset, const std::vector<int64_t>& strides, const Shape& out_shape,
                 float* out);

}  // namespace mgd::ops
