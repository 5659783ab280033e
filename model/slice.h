// SLICE and STRIDED_SLICE resolved to a strided view of the input: shared by
// the CPU kernel and the GPU generator so both read the same elements.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

struct StridedView {
  int64_t offset = 0;             // flat input index of the first element
  std::vector<int64_t> strides;   // per input dimension, in input elements
  Shape full_shape;               // per input dimension, shrunk ones as 1
  Shape output_shape;             // without the shrunk dimensions
};

// `second` is SLICE's size or STRIDED_SLICE's end; `steps` is null for SLICE.
// Errors say which dimension is wrong.
absl::StatusOr<StridedView> ResolveSlice(const Shape& input, const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& second, const std::vector<int64_t>* steps,
                                         const StridedSliceAttributes& attributes);

}  // namespace mgd
