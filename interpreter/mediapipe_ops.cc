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

absl::Status ExpectArity(const KernelContext& ctx, size_t inputs, size_t outputs) {
  if (ctx.inputs.size() != inputs || ctx.outputs.size() != outputs) {
    return ctx.Error(fmt::format("has {} inputs and {} outputs, expected {} and {}", ctx.inputs.size(),
                                 ctx.outputs.size(), inputs, outputs));
  }
  for (size_t i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i)) return ctx.Error(fmt::format("input {} is omitted", i));
    if (ctx.in(i).type != DataType::kFloat32) return ctx.Error(fmt::format("input {} must be float32", i));
  }
  for (size_t i = 0; i < outputs; ++i) {
    if (ctx.out(i).type != DataType::kFloat32) return ctx.Error(fmt::format("output {} must be float32", i));
  }
  return absl::OkStatus();
}

absl::Status ExpectRank4(const KernelContext& ctx, const TensorRef& t, const char* what) {
  if (t.rank() == 4) return absl::OkStatus();
  return ctx.Error(fmt::format("{} has shape {}, expected rank 4", what, ShapeToString(t.shape)));
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

// MaxPoolingWithArgmax2D's and MaxUnpooling2D's options and activation.
struct PoolOptions : MediaPipePoolOptions {
  ActivationRange range;
};

absl::StatusOr<PoolOptions> ReadPoolOptions(const KernelContext& ctx) {
  MGD_ASSIGN_OR_RETURN(const MediaPipePoolOptions o, Decoded(ctx, DecodePoolOptions));
  return PoolOptions{o, RangeOf(o.activation)};
}

// Outputs: the max, and the argmax position inside the window as a float
// (y * filter_w + x + 0.1, as MediaPipe writes it).
class MaxPoolingWithArgmax2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 1, 2));
    MGD_ASSIGN_OR_RETURN(p_, ReadPoolOptions(ctx));
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, x, "input"));
    const Window wy = WindowAlong(p_.padding, x.dim(1), p_.filter_h, p_.stride_h, 1);
    const Window wx = WindowAlong(p_.padding, x.dim(2), p_.filter_w, p_.stride_w, 1);
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, x.dim(3)}));
    return ctx.ExpectOutputShape(1, {x.dim(0), wy.out, wx.out, x.dim(3)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const int oh = ctx.out(0).dim(1), ow = ctx.out(0).dim(2);
    const float* xd = x.as<float>();
    float* yd = ctx.out(0).as<float>();
    float* id = ctx.out(1).as<float>();
    for (int b = 0; b < n; ++b)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox)
          for (int ch = 0; ch < c; ++ch) {
            const int y0 = oy * p_.stride_h - pad_h_, x0 = ox * p_.stride_w - pad_w_;
            float best = std::numeric_limits<float>::lowest();
            int best_y = 0, best_x = 0;
            for (int fy = std::max(0, -y0); fy < std::min(p_.filter_h, ih - y0); ++fy)
              for (int fx = std::max(0, -x0); fx < std::min(p_.filter_w, iw - x0); ++fx) {
                const float v = xd[((static_cast<int64_t>(b) * ih + y0 + fy) * iw + x0 + fx) * c + ch];
                if (v > best) {
                  best = v;
                  best_y = fy;
                  best_x = fx;
                }
              }
            const int64_t o = ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c + ch;
            yd[o] = p_.range.Apply(best);
            id[o] = static_cast<float>(best_y * p_.filter_w + best_x) + 0.1f;
          }
    return absl::OkStatus();
  }

 private:
  PoolOptions p_{};
  int pad_h_ = 0, pad_w_ = 0;
};

// Inputs: values and argmax indices from MaxPoolingWithArgmax2D.
class MaxUnpooling2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 2, 1));
    MGD_ASSIGN_OR_RETURN(p_, ReadPoolOptions(ctx));
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, x, "input"));
    if (ctx.in(1).shape != x.shape) {
      return ctx.Error(fmt::format("indices {} and input {} differ in shape", ShapeToString(ctx.in(1).shape),
                                   ShapeToString(x.shape)));
    }
    const int oh = x.dim(1) * p_.filter_h, ow = x.dim(2) * p_.filter_w;
    pad_h_ = PaddingBefore(p_.stride_h, 1, oh, p_.filter_h, x.dim(1));
    pad_w_ = PaddingBefore(p_.stride_w, 1, ow, p_.filter_w, x.dim(2));
    return ctx.ExpectOutputShape(0, {x.dim(0), oh, ow, x.dim(3)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    const float* xd = x.as<float>();
    const float* idx = ctx.in(1).as<float>();
    float* yd = y.as<float>();
    std::memset(yd, 0, y.bytes);
    for (int b = 0; b < n; ++b)
      for (int iy = 0; iy < ih; ++iy)
        for (int ix = 0; ix < iw; ++ix)
          for (int ch = 0; ch < c; ++ch) {
            const int64_t i = ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * c + ch;
            const float fi = idx[i];
            // Decoded as MediaPipe does (truncate, then / and % by the filter
            // width); the index comes from a tensor, so values that do not fit
            // an int and destinations outside the output are skipped.
            if (!(fi > -1e9f && fi < 1e9f)) continue;
            const int k = static_cast<int>(fi);
            const int oy = iy * p_.stride_h - pad_h_ + k / p_.filter_w;
            const int ox = ix * p_.stride_w - pad_w_ + k % p_.filter_w;
            if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
            yd[((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c + ch] = xd[i];
          }
    return absl::OkStatus();
  }

 private:
  PoolOptions p_{};
  int pad_h_ = 0, pad_w_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> CreateConvolution2dTransposeBiasKernel() {
  return std::make_unique<Convolution2dTransposeBiasKernel>();
}
std::unique_ptr<Kernel> CreateMaxPoolingWithArgmax2dKernel() { return std::make_unique<MaxPoolingWithArgmax2dKernel>(); }
std::unique_ptr<Kernel> CreateMaxUnpooling2dKernel() { return std::make_unique<MaxUnpooling2dKernel>(); }

}  // namespace mgd
