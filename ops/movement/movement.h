// The data movement ops: PAD and MIRROR_PAD (pad.cc), TILE (tile.cc),
// TRANSPOSE (transpose.cc), SLICE and STRIDED_SLICE (slice.cc). Their CPU
// kernels and GPU generators read the same elements through the strided
// views and per-axis maps below.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/op_definition.h"

namespace mgd::ops {

struct StridedSliceAttributes {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0;
  int32_t new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};

// MIRROR_PAD's mode: REFLECT leaves the edge out of the mirror image,
// SYMMETRIC repeats it.
struct MirrorPadAttributes {
  bool symmetric = false;
};

std::vector<OpDefinition> PadOps();
std::vector<OpDefinition> SliceOps();
std::vector<OpDefinition> TransposeOps();
std::vector<OpDefinition> TileOps();

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

// out[i0, i1, ...] = in[source[0][i0], source[1][i1], ...]: TILE's and
// MIRROR_PAD's CPU kernel (per_axis.cc).
void PerAxisCopy(const TensorRef& x, TensorRef& y, const std::vector<std::vector<int>>& source);
// A CPU kernel whose Prepare fills `source_` for PerAxisCopy: TILE's and
// MIRROR_PAD's.
class PerAxisKernel : public Kernel {
 public:
  absl::Status Invoke(KernelContext& ctx) override;

 protected:
  std::vector<std::vector<int>> source_;
};
// The same on the GPU: `source(d, v, params)` is the GLSL int expression of
// the input coordinate along BHWC dimension d (0 batch, 1 height, 2 width,
// 3 channel) for the output coordinate `v` (an int variable).
absl::StatusOr<shaders::GeneratedShader> PerAxisGather(
    const shaders::NodeContext& ctx, const std::function<std::string(int, const std::string&, shaders::ShaderParams&)>& source);

}  // namespace mgd::ops
