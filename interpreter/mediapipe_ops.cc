// CPU kernels for the MediaPipe custom ops found in MediaPipe's models (their
// options: model/mediapipe_options.h).
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "interpreter/kernels/conv.h"
#include "interpreter/kernels/kernel_util.h"
#include "interpreter/op_resolver.h"
#include "model/mediapipe_options.h"
#include "model/status_macros.h"

namespace mgd {
namespace {

// The node's decoded custom options (model/mediapipe_options.h), or the
// decoder's error after the node's label.
template <typename Options>
absl::StatusOr<Options> Decoded(const KernelContext& ctx,
                                absl::StatusOr<Options> (*decode)(const std::vector<uint8_t>&)) {
  auto options = decode(std::get<CustomAttributes>(ctx.node->attributes).options);
  if (!options.ok()) return ctx.Error(std::string(options.status().message()));
  return options;
}

// Inputs: x [N,H,W,Ci], weights OHWI [Co,Kh,Kw,Ci], bias [Co].
class Convolution2dTransposeBiasKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 3, 1));
    MGD_ASSIGN_OR_RETURN(const MediaPipeTransposeConvOptions o, Decoded(ctx, DecodeTransposeConvOptions));
    params_.stride_w = o.stride_w;
    params_.stride_h = o.stride_h;
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, x, "input"));
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, w, "weights"));
    // MediaPipe's own output size and padding (model/geometry.h).
    const int kh = w.dim(1), kw = w.dim(2);
    const int ph = MediaPipeTransposeOverhang(o.padding, x.dim(1), kh, params_.stride_h);
    const int pw = MediaPipeTransposeOverhang(o.padding, x.dim(2), kw, params_.stride_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), params_.stride_h * (x.dim(1) - 1) + kh - ph,
                                                 params_.stride_w * (x.dim(2) - 1) + kw - pw, w.dim(0)}));
    params_.pad_h = ph / 2;
    params_.pad_w = pw / 2;
    return CheckTransposeConv(ctx, x, w, &ctx.in(2), ctx.out(0));
  }

  absl::Status Invoke(KernelContext& ctx) override {
    TransposeConv(params_, ctx.in(0), ctx.in(1), &ctx.in(2), ctx.out(0));
    return absl::OkStatus();
  }

 private:
  TransposeConvParams params_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvolution2dTransposeBiasKernel() {
  return std::make_unique<Convolution2dTransposeBiasKernel>();
}

}  // namespace mgd
