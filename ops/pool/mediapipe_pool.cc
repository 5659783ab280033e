// MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D (the custom ops of
// its segmentation models), whose options are a raw TfLitePoolParams.
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "interpreter/kernels/kernel_util.h"
#include "model/geometry.h"
#include "model/mediapipe_options.h"
#include "model/status_macros.h"
#include "ops/pool/pool.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// TfLitePoolParams: padding, stride_w, stride_h, filter_w, filter_h,
// activation, each an int32.
absl::StatusOr<OpAttributes> DecodePoolParams(const std::vector<uint8_t>& options) {
  auto ints = ReadCustomInts(options, 6, "TfLitePoolParams");
  if (!ints.ok()) return ints.status();
  const std::vector<int32_t>& v = *ints;
  auto padding = ReadTfLitePadding(v[0]);
  if (!padding.ok()) return padding.status();
  PoolAttributes p{*padding, v[1], v[2], v[3], v[4], Activation::kNone};
  if (p.stride_w < 1 || p.stride_h < 1 || p.filter_w < 1 || p.filter_h < 1) {
    return absl::InvalidArgumentError(fmt::format("custom_options: strides {}x{} and filter {}x{} must be at least 1",
                                                  p.stride_w, p.stride_h, p.filter_w, p.filter_h));
  }
  if (v[5] < 0 || v[5] > 4) {
    return absl::InvalidArgumentError(fmt::format("custom_options: activation {} is not supported", v[5]));
  }
  p.activation = static_cast<Activation>(v[5]);
  return p;
}

// The interpreter decoded them before making the kernel.
absl::StatusOr<PoolAttributes> Options(const KernelContext& ctx) {
  const auto* p = FindAttributes<PoolAttributes>(ctx.node->attributes);
  if (p == nullptr) return ctx.Error("custom_options were not decoded");
  return *p;
}

// Outputs: the max, and the argmax position inside the window as a float
// (y * filter_w + x + 0.1, as MediaPipe writes it).
class MaxPoolingWithArgmax2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 1, 2));
    MGD_ASSIGN_OR_RETURN(p_, Options(ctx));
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
            yd[o] = RangeOf(p_.activation).Apply(best);
            id[o] = static_cast<float>(best_y * p_.filter_w + best_x) + 0.1f;
          }
    return absl::OkStatus();
  }

 private:
  PoolAttributes p_{};
  int pad_h_ = 0, pad_w_ = 0;
};

// Inputs: values and argmax indices from MaxPoolingWithArgmax2D.
class MaxUnpooling2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 2, 1));
    MGD_ASSIGN_OR_RETURN(p_, Options(ctx));
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
  PoolAttributes p_{};
  int pad_h_ = 0, pad_w_ = 0;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

// Two outputs: the max and its position in the window + 0.1 (MediaPipe's
// encoding). The first maximum wins, as on the CPU.
absl::StatusOr<GeneratedShader> MaxPoolingWithArgmax(const NodeContext& ctx) {
  const auto* p = FindAttributes<PoolAttributes>(ctx.node->attributes);
  // Not decoded: a program's own kernel replaced mgd's, so the op is its own.
  if (p == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {0});
  g.code.buffers.push_back({"out1", "", BufferAccess::kWrite, true});
  g.linkable = false;
  ShaderParams& params = g.code.params;
  g.code.body = glsl::OutputPrologue(params, *out);
  g.code.body += "  vec4 best = vec4(-3.402823466e+38), position = vec4(0.0);\n";
  g.code.body += PoolLoops(params, ctx, *in, *p,
                           fmt::format("      bvec4 better = greaterThan(v, best);\n"
                                       "      best = mix(best, v, better);\n"
                                       "      position = mix(position, vec4(float(fy * {} + fx)), better);\n",
                                       params.Int("filter_w", p->filter_w)));
  g.code.body += glsl::Activation(p->activation, "best") + "  position += vec4(0.1);\n" +
                 glsl::MaskPadding(params, out->channels, "best") + glsl::MaskPadding(params, out->channels, "position") +
                 "  out0_set(out_index, best);\n  out1_set(out_index, position);\n";
  return g;
}

// Each output pixel takes the input that MediaPipe's scatter writes there
// last: candidates in the CPU's order (input rows, then columns, ascending).
absl::StatusOr<GeneratedShader> MaxUnpooling(const NodeContext& ctx) {
  const auto* p = FindAttributes<PoolAttributes>(ctx.node->attributes);
  // Not decoded: a program's own kernel replaced mgd's, so the op is its own.
  if (p == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const int pad_h = PaddingBefore(p->stride_h, 1, out->height, p->filter_h, in->height);
  const int pad_w = PaddingBefore(p->stride_w, 1, out->width, p->filter_w, in->width);
  GeneratedShader g = StartShader(ctx, *out, {0, 1});
  ShaderParams& params = g.code.params;
  const std::string fw = params.Int("filter_w", p->filter_w);
  const std::string inner = fmt::format(
      "      highp vec4 v = {value};\n"
      "      highp vec4 f = {index};\n"
      "      MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
      "        if (!(f[k] > -1e9 && f[k] < 1e9)) continue;\n"
      "        int n = int(f[k]);\n"
      "        int q = n >= 0 ? n / {fw} : -((-n) / {fw});\n"  // C++'s truncating division
      "        if (q == ky && n - q * {fw} == kx) value[k] = v[k];\n"
      "      }}\n",
      fmt::arg("fw", fw), fmt::arg("value", glsl::Read(params, "in0", *in, "b", "s", "iy", "ix")),
      fmt::arg("index", glsl::Read(params, "in1", *in, "b", "s", "iy", "ix")));
  g.code.body += "  vec4 value = vec4(0.0);\n" +
                 glsl::TransposedWindowLoops(params, *in, p->filter_h, p->filter_w, p->stride_h, p->stride_w, pad_h,
                                             pad_w, inner);
  return g;
}

}  // namespace

std::vector<OpDefinition> MediaPipePoolOps() {
  return {
      {.op = OpKind::kCustom,
       .custom_name = "MaxPoolingWithArgmax2D",
       .decode_custom = DecodePoolParams,
       .cpu_kernel = MakeKernel<MaxPoolingWithArgmax2dKernel>,
       .gpu = {MaxPoolingWithArgmax}},
      {.op = OpKind::kCustom,
       .custom_name = "MaxUnpooling2D",
       .decode_custom = DecodePoolParams,
       .cpu_kernel = MakeKernel<MaxUnpooling2dKernel>,
       .gpu = {MaxUnpooling}},
  };
}

}  // namespace mgd::ops
