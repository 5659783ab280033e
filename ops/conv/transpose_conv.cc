// TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias: one
// transposed convolution (OHWI weights [Co,Kh,Kw,Ci], optional bias [Co])
// with TFLite's output size and padding, or MediaPipe's (model/geometry.h).
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/geometry.h"
#include "model/mediapipe_options.h"
#include "model/status_macros.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::TransposeConvOptions>();
  if (!options.ok()) return options.status();
  TransposeConvAttributes a;
  if (const tflite::TransposeConvOptions* o = *options) {
    a.padding = PaddingFromTfl(o->padding());
    a.stride_w = o->stride_w();
    a.stride_h = o->stride_h();
    a.activation = ActivationFromTfl(o->fused_activation_function());
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<TransposeConvAttributes>(node.attributes);
  file.Set(tflite::CreateTransposeConvOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h,
                                              ToTfl(a.activation)));
}

// Inputs: output_shape (int32 [4]), weights OHWI, input, optional bias.
absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(3, 4, 1));
  const auto& a = AttributesOf<TransposeConvAttributes>(c.node().attributes);
  MGD_RETURN_IF_ERROR(c.Positive("stride_w", a.stride_w));
  MGD_RETURN_IF_ERROR(c.Positive("stride_h", a.stride_h));
  MGD_RETURN_IF_ERROR(c.ActivationOk(a.activation));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kInt32}));
  MGD_RETURN_IF_ERROR(c.Constant(0));
  for (size_t i = 1; i < 4; ++i) MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kFloat32}));
  MGD_RETURN_IF_ERROR(c.InputRank(1, 4));
  MGD_RETURN_IF_ERROR(c.InputRank(2, 4));
  return c.OutputType(0, DataType::kFloat32);
}

// TfLiteTransposeConvParams: padding, stride_w, stride_h, each an int32.
absl::StatusOr<OpAttributes> DecodeTransposeConvParams(const std::vector<uint8_t>& options) {
  auto ints = ReadCustomInts(options, 3, "TfLiteTransposeConvParams");
  if (!ints.ok()) return ints.status();
  auto padding = ReadTfLitePadding((*ints)[0]);
  if (!padding.ok()) return padding.status();
  MediaPipeTransposeConvAttributes a{*padding, (*ints)[1], (*ints)[2]};
  if (a.stride_w < 1 || a.stride_h < 1) {
    return absl::InvalidArgumentError(
        fmt::format("custom_options: strides {}x{} must be at least 1", a.stride_w, a.stride_h));
  }
  return a;
}

struct TransposeConvParams {
  int stride_w = 1, stride_h = 1;
  int pad_w = 0, pad_h = 0;  // output positions cut from the top/left
  ActivationRange activation;
};

absl::Status CheckTransposeConv(const KernelContext& ctx, const TensorRef& input, const TensorRef& weights,
                                const TensorRef* bias, const TensorRef& output) {
  if (input.rank() != 4 || weights.rank() != 4 || output.rank() != 4) {
    return ctx.Error("input, weights and output must all have rank 4");
  }
  if (weights.dim(3) != input.dim(3)) {
    return ctx.Error(fmt::format("weights {} have {} input channels, the input has {}",
                                 ShapeToString(weights.shape), weights.dim(3), input.dim(3)));
  }
  if (output.dim(3) != weights.dim(0) || output.dim(0) != input.dim(0)) {
    return ctx.Error(fmt::format("output {} does not match input {} and weights {}", ShapeToString(output.shape),
                                 ShapeToString(input.shape), ShapeToString(weights.shape)));
  }
  if (bias != nullptr && bias->elements() != weights.dim(0)) {
    return ctx.Error(fmt::format("bias has {} elements, expected {}", bias->elements(), weights.dim(0)));
  }
  return absl::OkStatus();
}

void TransposeConvReference(const TransposeConvParams& p, const TensorRef& input, const TensorRef& weights,
                   const TensorRef* bias, TensorRef& output) {
  const int n = input.dim(0), ih = input.dim(1), iw = input.dim(2), ci = input.dim(3);
  const int co = weights.dim(0), kh = weights.dim(1), kw = weights.dim(2);
  const int oh = output.dim(1), ow = output.dim(2);
  const int pad_h = p.pad_h, pad_w = p.pad_w;
  const float* xd = input.as<float>();
  const float* wd = weights.as<float>();
  float* yd = output.as<float>();
  // Accumulators start at the bias and take the taps in order, as XNNPACK's
  // deconvolution sums them.
  const float* bd = bias != nullptr ? bias->as<float>() : nullptr;
  const int64_t pixels = static_cast<int64_t>(n) * oh * ow;
  for (int64_t i = 0; i < pixels; ++i) {
    for (int o = 0; o < co; ++o) yd[i * co + o] = bd ? bd[o] : 0.0f;
  }
  for (int b = 0; b < n; ++b) {
    for (int iy = 0; iy < ih; ++iy) {
      for (int ix = 0; ix < iw; ++ix) {
        const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
        for (int ky = 0; ky < kh; ++ky) {
          const int oy = iy * p.stride_h - pad_h + ky;
          if (oy < 0 || oy >= oh) continue;
          for (int kx = 0; kx < kw; ++kx) {
            const int ox = ix * p.stride_w - pad_w + kx;
            if (ox < 0 || ox >= ow) continue;
            float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
            for (int o = 0; o < co; ++o) {
              const float* wp = wd + ((static_cast<int64_t>(o) * kh + ky) * kw + kx) * ci;
              float acc = yp[o];
              for (int c = 0; c < ci; ++c) acc += xp[c] * wp[c];
              yp[o] = acc;
            }
          }
        }
      }
    }
  }
  for (int64_t i = 0; i < pixels * co; ++i) yd[i] = p.activation.Apply(yd[i]);
}

class TransposeConvKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const auto& a = AttributesOf<TransposeConvAttributes>(ctx.node->attributes);
    const TensorRef& shape = ctx.in(0);
    if (shape.elements() != 4) return ctx.Error("output_shape input must have 4 elements");
    Shape expected(shape.as<int32_t>(), shape.as<int32_t>() + 4);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, expected));
    const TensorRef* bias = ctx.has_input(3) ? &ctx.in(3) : nullptr;
    MGD_RETURN_IF_ERROR(CheckTransposeConv(ctx, ctx.in(2), ctx.in(1), bias, ctx.out(0)));
    // TFLite: the padding of the forward convolution from the output back to
    // the input.
    const int oh = expected[1], ow = expected[2], kh = ctx.in(1).dim(1), kw = ctx.in(1).dim(2);
    params_.stride_w = a.stride_w;
    params_.stride_h = a.stride_h;
    params_.pad_h = WindowAlong(a.padding, oh, kh, a.stride_h, 1).pad;
    params_.pad_w = WindowAlong(a.padding, ow, kw, a.stride_w, 1).pad;
    params_.activation = RangeOf(a.activation);
    return absl::OkStatus();
  }
  absl::Status Invoke(KernelContext& ctx) override {
    TransposeConvReference(params_, ctx.in(2), ctx.in(1), ctx.has_input(3) ? &ctx.in(3) : nullptr, ctx.out(0));
    return absl::OkStatus();
  }

 private:
  TransposeConvParams params_;
};

// Inputs: x [N,H,W,Ci], weights OHWI [Co,Kh,Kw,Ci], bias [Co].
class Convolution2dTransposeBiasKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 3, 1));
    // The interpreter decoded the options before making the kernel.
    const auto* o = FindAttributes<MediaPipeTransposeConvAttributes>(ctx.node->attributes);
    if (o == nullptr) return ctx.Error("custom_options were not decoded");
    params_.stride_w = o->stride_w;
    params_.stride_h = o->stride_h;
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, x, "input"));
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, w, "weights"));
    // MediaPipe's own output size and padding (model/geometry.h).
    const int kh = w.dim(1), kw = w.dim(2);
    const int ph = MediaPipeTransposeOverhang(o->padding, x.dim(1), kh, params_.stride_h);
    const int pw = MediaPipeTransposeOverhang(o->padding, x.dim(2), kw, params_.stride_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), params_.stride_h * (x.dim(1) - 1) + kh - ph,
                                                 params_.stride_w * (x.dim(2) - 1) + kw - pw, w.dim(0)}));
    params_.pad_h = ph / 2;
    params_.pad_w = pw / 2;
    return CheckTransposeConv(ctx, x, w, &ctx.in(2), ctx.out(0));
  }

  absl::Status Invoke(KernelContext& ctx) override {
    TransposeConvReference(params_, ctx.in(0), ctx.in(1), &ctx.in(2), ctx.out(0));
    return absl::OkStatus();
  }

 private:
  TransposeConvParams params_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> TransposeConv(const NodeContext& ctx) {
  const auto& a = AttributesOf<TransposeConvAttributes>(ctx.node->attributes);
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok() || ctx.input(1).shape.size() != 4) return absl::UnimplementedError("unsupported rank");
  const Shape& w = ctx.input(1).shape;
  const int pad_h = WindowAlong(a.padding, out->height, w[1], a.stride_h, 1).pad;
  const int pad_w = WindowAlong(a.padding, out->width, w[2], a.stride_w, 1).pad;
  return TransposeConvolution(ctx, 2, 1, ctx.has_input(3) ? 3 : -1, a.stride_h, a.stride_w, pad_h, pad_w, a.activation);
}

// MediaPipe's Convolution2DTransposeBias, with its own output size
// (model/geometry.h).
absl::StatusOr<GeneratedShader> Convolution2dTransposeBias(const NodeContext& ctx) {
  const auto* o = FindAttributes<MediaPipeTransposeConvAttributes>(ctx.node->attributes);
  // Not decoded: a program's own kernel replaced mgd's, so the op is its own.
  if (o == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  auto in = InputBhwc(ctx, 0);
  if (!in.ok() || ctx.input(1).shape.size() != 4) return absl::UnimplementedError("unsupported rank");
  const int kh = ctx.input(1).shape[1], kw = ctx.input(1).shape[2];
  return TransposeConvolution(ctx, 0, 1, 2, o->stride_h, o->stride_w,
                              MediaPipeTransposeOverhang(o->padding, in->height, kh, o->stride_h) / 2,
                              MediaPipeTransposeOverhang(o->padding, in->width, kw, o->stride_w) / 2, Activation::kNone);
}

}  // namespace

std::vector<OpDefinition> TransposeConvOps() {
  return {{.op = OpKind::kTransposeConv,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<TransposeConvKernel>,
           .gpu = {TransposeConv}}};
}

std::vector<OpDefinition> MediaPipeTransposeConvOps() {
  return {{.op = OpKind::kCustom,
           .custom_name = "Convolution2DTransposeBias",
           .decode_custom = DecodeTransposeConvParams,
           .cpu_kernel = MakeKernel<Convolution2dTransposeBiasKernel>,
           .gpu = {Convolution2dTransposeBias}}};
}

}  // namespace mgd::ops
