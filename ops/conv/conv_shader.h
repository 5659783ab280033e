// The GLSL the convolution family shares, over PHWC4 with weights (bias at
// their end) in the vec4 layouts of layout/weights.h. Sizes, strides,
// padding and dilation are declared parameters, inlined so that the compiler
// unrolls and folds the index arithmetic unless dispatches share the program
// (shaders/parameters.h). Each sums input channels in sequence per tap, the
// CPU kernels' order, which keeps deep models closer to them than
// mat4 * vec4's dot-product-first order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shaders/generator.h"

namespace mgd::ops {

struct ConvGeometry {
  int kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
};

// The geometry of a windowed op over input `in` (the PAD's input when one is
// fused: TFLite's padding is then computed over the padded size).
ConvGeometry Geometry(const shaders::NodeContext& ctx, const layout::Bhwc& in, Padding padding, int kh, int kw, int sh,
                      int sw, int dh, int dw);
// The same for a kh x kw filter of a CONV_2D or DEPTHWISE_CONV_2D.
template <typename A>
ConvGeometry Geometry(const shaders::NodeContext& ctx, const layout::Bhwc& in, const A& a, int kh, int kw) {
  return Geometry(ctx, in, a.padding, kh, kw, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w);
}

// Unimplemented unless optional input `input` is absent or constant.
absl::Status RequireConstant(const shaders::NodeContext& ctx, size_t input, const char* what);

// The input and output, as PHWC4, of a convolution whose filter (input 1)
// and bias (input 2) are constant; unimplemented otherwise.
struct ConvShapes {
  layout::Bhwc in, out;
};
absl::StatusOr<ConvShapes> ConstantConvShapes(const shaders::NodeContext& ctx);

// A shader over `out` reading node input `input` as in0 and a `weights`
// buffer (the generator's constants[0]).
shaders::GeneratedShader StartConvShader(const shaders::NodeContext& ctx, const layout::Bhwc& out, int input);

// Packed weights, unless the context only asks whether the node is supported.
template <typename Pack>
std::vector<float> PackUnlessSupportOnly(const shaders::NodeContext& ctx, Pack pack) {
  return ctx.support_only ? std::vector<float>{} : pack();
}

// Appends `values`, padded to whole vec4s, to `weights` and returns their
// offset in vec4s: the parts of a fused shader's one weights buffer.
int64_t AppendVec4s(std::vector<float>& weights, const std::vector<float>& values);

// Bias input `bias_input` padded to whole slices (zeros without one).
std::vector<float> PaddedBias(const shaders::NodeContext& ctx, int bias_input, int channels);

// "vec4 acc = <the bias of output slice s>;": the bias rides at the end of
// the weights buffer (vec4(0.0) without one).
std::string BiasInit(const shaders::NodeContext& ctx, shaders::GeneratedShader& g, int bias_input, int channels);

// The order a window's taps are summed in: the CPU reference's (XNNPACK's),
// so that an fp32 sum rounds the same on both (docs/numerics.md).
enum class TapOrder {
  kRowsOuter,     // convolutions: filter rows, then columns
  kColumnsOuter,  // depthwise convolutions: filter columns, then rows
};

// The loops over the filter window in `order`, skipping taps outside the
// input (zero padding, fused PAD margins included).
std::string WindowLoops(shaders::ShaderParams& params, const layout::Bhwc& in, const ConvGeometry& g,
                        const std::string& inner, TapOrder order = TapOrder::kRowsOuter);

// `acc` += the 4x4 weight block at `w` times input slice vector `v`, one
// column at a time.
std::string MultiplyAccumulate(const std::string& w, const std::string& v, const std::string& acc = "acc");

// The body's end: the activation, then `value`.
std::string Finish(const std::string& body, Activation activation);

// A depthwise convolution's taps over in0 added to `acc` for output slice
// `slice` at (b, y, x), in the CPU reference's order; its weights
// (layout::ToDepthwiseWeights4) start the weights buffer. Defined with the
// op, in depthwise.cc.
std::string DepthwiseSum(shaders::ShaderParams& params, const layout::Bhwc& in, const ConvGeometry& geometry,
                         int multiplier, const std::string& slice);

// Whether a convolution from `in` to `out` is better split across several
// invocations per output vec4 (few outputs, long sums): with fp16 storage,
// kSplitInvocations of them, each every kSplitInvocations-th input slice.
constexpr int kSplitInvocations = 8;
bool SplitPays(const shaders::NodeContext& ctx, const layout::Bhwc& in, const layout::Bhwc& out);

// The block of outputs (shaders::OutputBlock) each invocation of a plain
// convolution over `out` computes: ctx.conv_block in slices that divide the
// output's (so that weight reads stay inside the filter) and, where it can,
// in a width that divides the rows; flat where ctx.conv_block is and the
// flat grid fits any workgroup.
shaders::OutputBlock ConvBlock(const shaders::NodeContext& ctx, const layout::Bhwc& out);

// A 1x1 CONV_2D computing its input's DEPTHWISE_CONV_2D (ctx.producer) in
// the same shader (depthwise_pointwise.cc).
absl::StatusOr<shaders::GeneratedShader> DepthwisePointwise(const shaders::NodeContext& ctx);

// A squeeze-and-excitation gate: a 1x1 CONV_2D over one pixel computing the
// one that makes its input (ctx.producer) and the global average pool before
// that (ctx.source, when given) in one workgroup (squeeze_excite.cc).
absl::StatusOr<shaders::GeneratedShader> SqueezeExcite(const shaders::NodeContext& ctx);

// The filter of an int8 model as 8-bit integers and a scale per output
// channel, when it is one: float values that are exactly (integer x scale)
// for the per-channel (axis 0) or per-tensor parameters it was dequantized
// with (kept by passes/int8_as_float.h), the integers within int8's range.
struct Int8Filter {
  std::vector<float> ints;    // OHWI, each an integer in [-128, 127]
  std::vector<float> scales;  // per output channel
};
std::optional<Int8Filter> Int8FilterOf(const Tensor& w, int out_channels);

// A CONV_2D (or a FULLY_CONNECTED as a 1x1 one) of an int8 model summed in
// integer dot products (shaders::NodeContext::int8_dot), when it is one:
// its input on an int8 grid, its filter 8-bit (conv_dot.cc).
std::optional<shaders::GeneratedShader> DotConv(const shaders::NodeContext& ctx, const ConvGeometry& geometry,
                                                Activation activation, const layout::Bhwc& in,
                                                const layout::Bhwc& out);

// OHWI weights [out_channels, kh, kw, in_channels] in the O4I4 layout.
std::vector<float> PackedConvWeights(const Tensor& w, int out_channels, int kh, int kw, int in_channels);

// A convolution over OHWI weights (node input 1) and optional bias (input 2).
absl::StatusOr<shaders::GeneratedShader> Conv(const shaders::NodeContext& ctx, const ConvGeometry& geometry,
                                              Activation activation, const layout::Bhwc& in, const layout::Bhwc& out);

// A transposed convolution as a gather: output (y, x) sums the input pixels
// whose window covers it; pad_h/pad_w are cut from the top/left.
absl::StatusOr<shaders::GeneratedShader> TransposeConvolution(const shaders::NodeContext& ctx, int input,
                                                              int weights_input, int bias_input, int stride_h,
                                                              int stride_w, int pad_h, int pad_w,
                                                              Activation activation);

}  // namespace mgd::ops
