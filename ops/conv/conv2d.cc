// CONV_2D: OHWI filters, grouped when the input has a multiple of the
// filter's channels (the CPU only: the GPU takes one group).
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/geometry.h"
#include "model/status_macros.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::Conv2DOptions>();
  if (!options.ok()) return options.status();
  Conv2dAttributes a;
  if (const tflite::Conv2DOptions* o = *options) {
    a.padding = PaddingFromTfl(o->padding());
    a.stride_w = o->stride_w();
    a.stride_h = o->stride_h();
    a.dilation_w = o->dilation_w_factor();
    a.dilation_h = o->dilation_h_factor();
    a.activation = ActivationFromTfl(o->fused_activation_function());
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<Conv2dAttributes>(node.attributes);
  file.Set(tflite::CreateConv2DOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h, ToTfl(a.activation),
                                       a.dilation_w, a.dilation_h));
}

absl::Status Validate(const NodeChecker& c) {
  const auto& a = AttributesOf<Conv2dAttributes>(c.node().attributes);
  return ValidateConvolution(c, a.stride_w, a.stride_h, a.dilation_w, a.dilation_h, a.activation);
}

class Conv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<Conv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(0), wci = w.dim(3);
    if (wci <= 0 || ci % wci != 0) {
      return ctx.Error(fmt::format("input has {} channels, not a multiple of the filter's {}", ci, wci));
    }
    groups_ = ci / wci;
    if (co % groups_ != 0) {
      return ctx.Error(fmt::format("{} output channels do not split into {} groups", co, groups_));
    }
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    const Window wy = WindowAlong(a_.padding, x.dim(1), w.dim(1), a_.stride_h, a_.dilation_h);
    const Window wx = WindowAlong(a_.padding, x.dim(2), w.dim(2), a_.stride_w, a_.dilation_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, co}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    // Constant weights are reordered at the first invoke, not here: when a
    // delegate takes the node (the usual case), that invoke never comes, and
    // reordering every filter of a model would slow each start.
    reordered_ = false;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    TensorRef& y = ctx.out(0);
    if (!w.is_constant || !reordered_) ReorderWeights(w);
    reordered_ = w.is_constant;
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
    const int kh = w.dim(1), kw = w.dim(2), wci = w.dim(3), co = w.dim(0);
    const int oh = y.dim(1), ow = y.dim(2);
    const int cog = co / groups_;
    const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    std::vector<float> acc(static_cast<size_t>(co));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] = bias ? bias[o] : 0.0f;
          for (int ky = 0; ky < kh; ++ky) {
            const int iy = oy * a_.stride_h - pad_h_ + ky * a_.dilation_h;
            if (iy < 0 || iy >= ih) continue;
            for (int kx = 0; kx < kw; ++kx) {
              const int ix = ox * a_.stride_w - pad_w_ + kx * a_.dilation_w;
              if (ix < 0 || ix >= iw) continue;
              const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
              const float* wp = weights_.data() + static_cast<size_t>((ky * kw + kx) * wci) * static_cast<size_t>(co);
              for (int g = 0; g < groups_; ++g) {
                float* ag = acc.data() + g * cog;
                for (int c = 0; c < wci; ++c) {
                  const float xv = xp[g * wci + c];
                  const float* wr = wp + static_cast<size_t>(c) * static_cast<size_t>(co) + static_cast<size_t>(g * cog);
                  for (int o = 0; o < cog; ++o) ag[o] += xv * wr[o];
                }
              }
            }
          }
          float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
          for (int o = 0; o < co; ++o) yp[o] = act.Apply(acc[static_cast<size_t>(o)]);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // OHWI -> [Kh][Kw][Ci][Co] so the innermost loop runs over output channels
  // with independent accumulators (vectorizes without reassociating sums).
  void ReorderWeights(const TensorRef& w) {
    const int co = w.dim(0), kh = w.dim(1), kw = w.dim(2), ci = w.dim(3);
    weights_.resize(static_cast<size_t>(w.elements()));
    const float* src = w.as<float>();
    for (int o = 0; o < co; ++o)
      for (int y = 0; y < kh; ++y)
        for (int x = 0; x < kw; ++x)
          for (int c = 0; c < ci; ++c)
            weights_[static_cast<size_t>(((y * kw + x) * ci + c) * co + o)] = src[((o * kh + y) * kw + x) * ci + c];
  }

  Conv2dAttributes a_;
  int groups_ = 1, pad_h_ = 0, pad_w_ = 0;
  std::vector<float> weights_;
  bool reordered_ = false;  // weights_ holds the constant weights
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> Conv2d(const NodeContext& ctx) {
  const auto& a = AttributesOf<Conv2dAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const Shape& w = ctx.input(1).shape;
  if (w.size() != 4) return absl::UnimplementedError("unexpected filter rank");
  if (w[3] != in->channels) return absl::UnimplementedError("grouped convolution is not supported on the GPU");
  return Conv(ctx, Geometry(ctx, *in, a.padding, w[1], w[2], a.stride_h, a.stride_w, a.dilation_h, a.dilation_w),
              a.activation, *in, *out);
}

}  // namespace

std::vector<OpDefinition> Conv2dOps() {
  return {{.op = OpKind::kConv2d,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<Conv2dKernel>,
           .gpu = {Conv2d}}};
}

}  // namespace mgd::ops
