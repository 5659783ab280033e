// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED over PHWC4, with weights in
// the vec4/mat4 layouts of layout/weights.h and bias inlined. Sizes, strides,
// padding and dilation are constants in the source, so the compiler unrolls
// and folds the index arithmetic.
#include <fmt/format.h>

#include <cstring>

#include "layout/weights.h"
#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

constexpr std::array<uint32_t, 3> kWorkgroup{8, 8, 1};

std::vector<float> Floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(NumElements(t.shape)));
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}

int Pad(Padding padding, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  const int out = padding == Padding::kSame ? (in + stride - 1) / stride : (in - effective + stride) / stride;
  return std::max(0, ((out - 1) * stride + effective - in) / 2);
}

struct ConvGeometry {
  int kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
};

GeneratedShader Skeleton(const NodeContext& ctx, const layout::Bhwc& out) {
  GeneratedShader g;
  g.code.name = fmt::format("node{}_{}", ctx.node_index, OpName(ctx.node->op));
  g.code.workgroup = kWorkgroup;
  g.code.buffers = {{"in0", Vec4Type(ctx.fp16), BufferAccess::kRead},
                    {"out0", Vec4Type(ctx.fp16), BufferAccess::kWrite},
                    {"weights", "vec4", BufferAccess::kRead}};
  g.code.uses_fp16 = ctx.fp16;
  g.activation_inputs = {0};
  g.groups = GridFor(out, kWorkgroup);
  return g;
}

std::string BiasInit(const NodeContext& ctx, size_t input, int channels) {
  if (!ctx.has_input(input)) return "  vec4 acc = vec4(0.0);\n";
  const std::vector<float> bias = Floats(ctx.input(input));
  return glsl::ConstVec4Array("bias", layout::PadToSlices(bias.data(), channels)) + "  vec4 acc = bias[s];\n";
}

// The loops over the filter window, skipping taps outside the input.
std::string WindowLoops(const layout::Bhwc& in, const ConvGeometry& g, const std::string& inner) {
  return fmt::format(
      "  for (int ky = 0; ky < {kh}; ++ky) {{\n"
      "    int iy = y * {sh} - {ph} + ky * {dh};\n"
      "    if (iy < 0 || iy >= {ih}) continue;\n"
      "    for (int kx = 0; kx < {kw}; ++kx) {{\n"
      "      int ix = x * {sw} - {pw} + kx * {dw};\n"
      "      if (ix < 0 || ix >= {iw}) continue;\n"
      "{inner}"
      "    }}\n"
      "  }}\n",
      fmt::arg("kh", g.kh), fmt::arg("kw", g.kw), fmt::arg("sh", g.stride_h), fmt::arg("sw", g.stride_w),
      fmt::arg("ph", g.pad_h), fmt::arg("pw", g.pad_w), fmt::arg("dh", g.dilation_h), fmt::arg("dw", g.dilation_w),
      fmt::arg("ih", in.height), fmt::arg("iw", in.width), fmt::arg("inner", inner));
}

absl::Status RequireConstant(const NodeContext& ctx, size_t input, const char* what) {
  if (ctx.has_input(input) && !ctx.input(input).is_constant) {
    return absl::UnimplementedError(fmt::format("{} must be constant for the GPU", what));
  }
  return absl::OkStatus();
}

absl::StatusOr<GeneratedShader> Conv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                                     const layout::Bhwc& in, const layout::Bhwc& out) {
  const Tensor& w = ctx.input(1);
  if (w.shape.size() != 4 && w.shape.size() != 2) return absl::UnimplementedError("unexpected weight rank");
  const int in_channels = w.shape.back();
  if (in_channels != in.channels) return absl::UnimplementedError("grouped convolution is not supported on the GPU");
  const std::vector<float> ohwi = Floats(w);
  const layout::ConvWeightsO4I4 packed = layout::ToConvWeightsO4I4(ohwi.data(), out.channels, geometry.kh, geometry.kw, in.channels);
  GeneratedShader g = Skeleton(ctx, out);
  g.constants = {packed.values};
  const std::string inner = fmt::format(
      "      for (int is = 0; is < {is}; ++is) {{\n"
      "        vec4 v = vec4(in0[((b * {is} + is) * {ih} + iy) * {iw} + ix]);\n"
      "        int w = (((s * {kh} + ky) * {kw} + kx) * {is} + is) * 4;\n"
      // One column at a time: the same summation order as the CPU kernels
      // (input channels in sequence), which keeps deep models closer to them
      // than mat4 * vec4's dot-product-first order.
      "        acc += weights[w] * v.x;\n"
      "        acc += weights[w + 1] * v.y;\n"
      "        acc += weights[w + 2] * v.z;\n"
      "        acc += weights[w + 3] * v.w;\n"
      "      }}\n",
      fmt::arg("is", in.slices()), fmt::arg("ih", in.height), fmt::arg("iw", in.width), fmt::arg("kh", geometry.kh),
      fmt::arg("kw", geometry.kw));
  g.code.body = glsl::OutputPrologue(out) + BiasInit(ctx, 2, out.channels) + WindowLoops(in, geometry, inner) +
                glsl::Activation(activation, "acc") + fmt::format("  out0[out_index] = {}(acc);\n", Vec4Type(ctx.fp16));
  return g;
}

absl::StatusOr<GeneratedShader> Conv2d(const NodeContext& ctx) {
  const auto& a = std::get<Conv2dAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = ToBhwc(ctx.input(0).shape);
  auto out = ToBhwc(ctx.output(0).shape);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const Shape& w = ctx.input(1).shape;
  const ConvGeometry geometry{w[1], w[2], a.stride_h, a.stride_w, a.dilation_h, a.dilation_w,
                              Pad(a.padding, in->height, w[1], a.stride_h, a.dilation_h),
                              Pad(a.padding, in->width, w[2], a.stride_w, a.dilation_w)};
  return Conv(ctx, geometry, a.activation, *in, *out);
}

absl::StatusOr<GeneratedShader> FullyConnected(const NodeContext& ctx) {
  const auto& a = std::get<FullyConnectedAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the weights"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  const Tensor& x = ctx.input(0);
  const int depth = ctx.input(1).shape[1];
  // A 1x1 convolution over a [batch, depth] view: only when the PHWC4 form of
  // the input is that view, i.e. its spatial size is 1.
  auto in = ToBhwc(x.shape);
  if (!in.ok() || in->height != 1 || in->width != 1 || in->channels != depth) {
    return absl::UnimplementedError(
        fmt::format("FULLY_CONNECTED over a spatial input {} is not supported on the GPU", ShapeToString(x.shape)));
  }
  layout::Bhwc out{in->batch, 1, 1, ctx.input(1).shape[0]};
  return Conv(ctx, ConvGeometry{1, 1, 1, 1, 1, 1, 0, 0}, a.activation, *in, out);
}

absl::StatusOr<GeneratedShader> DepthwiseConv2d(const NodeContext& ctx) {
  const auto& a = std::get<DepthwiseConv2dAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = ToBhwc(ctx.input(0).shape);
  auto out = ToBhwc(ctx.output(0).shape);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  if (in->channels != out->channels) return absl::UnimplementedError("depth multiplier > 1 is not supported on the GPU");
  const Shape& ws = ctx.input(1).shape;
  const ConvGeometry geometry{ws[1], ws[2], a.stride_h, a.stride_w, a.dilation_h, a.dilation_w,
                              Pad(a.padding, in->height, ws[1], a.stride_h, a.dilation_h),
                              Pad(a.padding, in->width, ws[2], a.stride_w, a.dilation_w)};
  const std::vector<float> weights = Floats(ctx.input(1));
  GeneratedShader g = Skeleton(ctx, *out);
  g.constants = {layout::ToDepthwiseWeights4(weights.data(), ws[1], ws[2], out->channels).values};
  const std::string inner = fmt::format(
      "      acc += vec4(in0[((b * {S} + s) * {ih} + iy) * {iw} + ix]) * weights[(s * {kh} + ky) * {kw} + kx];\n",
      fmt::arg("S", in->slices()), fmt::arg("ih", in->height), fmt::arg("iw", in->width), fmt::arg("kh", ws[1]),
      fmt::arg("kw", ws[2]));
  g.code.body = glsl::OutputPrologue(*out) + BiasInit(ctx, 2, out->channels) + WindowLoops(*in, geometry, inner) +
                glsl::Activation(a.activation, "acc") + fmt::format("  out0[out_index] = {}(acc);\n", Vec4Type(ctx.fp16));
  return g;
}

}  // namespace

void AddConvolutionGenerators(std::map<OpKind, Generator>& g) {
  g[OpKind::kConv2d] = Conv2d;
  g[OpKind::kDepthwiseConv2d] = DepthwiseConv2d;
  g[OpKind::kFullyConnected] = FullyConnected;
}

}  // namespace mgd::shaders
