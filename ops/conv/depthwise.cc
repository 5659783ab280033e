// DEPTHWISE_CONV_2D: filters [1, kh, kw, channels * multiplier], output
// channel c reading input channel c / multiplier.
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "layout/weights.h"
#include "model/constants.h"
#include "model/geometry.h"
#include "model/status_macros.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::DepthwiseConv2DOptions>();
  if (!options.ok()) return options.status();
  DepthwiseConv2dAttributes a;
  if (const tflite::DepthwiseConv2DOptions* o = *options) {
    a.padding = PaddingFromTfl(o->padding());
    a.stride_w = o->stride_w();
    a.stride_h = o->stride_h();
    a.dilation_w = o->dilation_w_factor();
    a.dilation_h = o->dilation_h_factor();
    a.depth_multiplier = o->depth_multiplier();
    a.activation = ActivationFromTfl(o->fused_activation_function());
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<DepthwiseConv2dAttributes>(node.attributes);
  file.Set(tflite::CreateDepthwiseConv2DOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h,
                                                a.depth_multiplier, ToTfl(a.activation), a.dilation_w, a.dilation_h));
}

absl::Status Validate(const NodeChecker& c) {
  const auto& a = AttributesOf<DepthwiseConv2dAttributes>(c.node().attributes);
  return ValidateConvolution(c, a.stride_w, a.stride_h, a.dilation_w, a.dilation_h, a.activation);
}

class DepthwiseConv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<DepthwiseConv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(3);
    if (w.dim(0) != 1) return ctx.Error(fmt::format("filter shape {} must start with 1", ShapeToString(w.shape)));
    if (ci <= 0 || co % ci != 0) {
      return ctx.Error(fmt::format("filter has {} channels, not a multiple of the input's {}", co, ci));
    }
    multiplier_ = co / ci;
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    const Window wy = WindowAlong(a_.padding, x.dim(1), w.dim(1), a_.stride_h, a_.dilation_h);
    const Window wx = WindowAlong(a_.padding, x.dim(2), w.dim(2), a_.stride_w, a_.dilation_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, co}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    TensorRef& y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
    const int kh = w.dim(1), kw = w.dim(2), co = w.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    const float* wd = w.as<float>();
    float* yd = y.as<float>();
    std::vector<float> acc(static_cast<size_t>(co));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] = bias ? bias[o] : 0.0f;
          // Taps column by column (kx outer), the order XNNPACK sums them in,
          // so results agree with TFLite's CPU path to the last bits more often.
          for (int kx = 0; kx < kw; ++kx) {
            const int ix = ox * a_.stride_w - pad_w_ + kx * a_.dilation_w;
            if (ix < 0 || ix >= iw) continue;
            for (int ky = 0; ky < kh; ++ky) {
              const int iy = oy * a_.stride_h - pad_h_ + ky * a_.dilation_h;
              if (iy < 0 || iy >= ih) continue;
              const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
              const float* wp = wd + static_cast<size_t>((ky * kw + kx) * co);
              if (multiplier_ == 1) {
                for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] += xp[o] * wp[o];
              } else {
                for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] += xp[o / multiplier_] * wp[o];
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
  DepthwiseConv2dAttributes a_;
  int multiplier_ = 1, pad_h_ = 0, pad_w_ = 0;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> DepthwiseConv2d(const NodeContext& ctx) {
  const auto& a = AttributesOf<DepthwiseConv2dAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const Shape& ws = ctx.input(1).shape;
  const int multiplier = out->channels / std::max(1, in->channels);
  const ConvGeometry geometry = Geometry(ctx, *in, a.padding, ws[1], ws[2], a.stride_h, a.stride_w, a.dilation_h, a.dilation_w);
  GeneratedShader g = StartConvShader(ctx, *out, 0);
  g.constants = {PackUnlessSupportOnly(ctx, [&] {
    const std::vector<float> weights = ConstantFloats(ctx.input(1));
    return layout::ToDepthwiseWeights4(weights.data(), ws[1], ws[2], out->channels).values;
  })};
  std::string read;
  if (multiplier == 1) {
    read = glsl::Read("in0", *in, "b", "s", "iy", "ix");
  } else {
    // Output channel c reads input channel c / multiplier: gather per lane.
    read = "v";
    g.code.body += fmt::format("  ivec4 ic = min((ivec4(s * 4) + ivec4(0, 1, 2, 3)) / {}, ivec4({}));\n", multiplier,
                               in->channels - 1);
  }
  std::string inner;
  if (multiplier != 1) {
    inner += "      vec4 v;\n";
    for (int k = 0; k < 4; ++k) {
      inner += fmt::format("      v[{}] = {}[ic[{}] % 4];\n", k,
                           glsl::Read("in0", *in, "b", fmt::format("ic[{}] / 4", k), "iy", "ix"), k);
    }
  }
  inner += fmt::format("      acc += {} * weights_at((s * {} + ky) * {} + kx);\n", read == "v" ? "v" : "vec4(" + read + ")",
                       ws[1], ws[2]);
  g.code.body += Finish(BiasInit(ctx, g, 2, out->channels) + WindowLoops(*in, geometry, inner), a.activation);
  return g;
}

}  // namespace

std::vector<OpDefinition> DepthwiseConv2dOps() {
  return {{.op = OpKind::kDepthwiseConv2d,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<DepthwiseConv2dKernel>,
           .gpu = {DepthwiseConv2d}}};
}

}  // namespace mgd::ops
