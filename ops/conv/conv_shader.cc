#include "ops/conv/conv_shader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "layout/weights.h"
#include "model/constants.h"
#include "model/geometry.h"
#include "shaders/ops.h"

namespace mgd::ops {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

namespace {

// The bias of output slice s rides at the end of the weights buffer: as a
// const array in the source it made every convolution its own program (see
// shaders/parameters.h), and software GPUs spend seconds compiling big ones.
bool HasBias(const NodeContext& ctx, int bias_input) {
  return bias_input >= 0 && ctx.has_input(static_cast<size_t>(bias_input));
}

// 8-bit filters (NodeContext::int8_filters): the integers in an i8vec4
// buffer, and after them in a vec4 one each output slice's scales, then the
// bias.
constexpr const char* kFilterInts = "filter_q";
constexpr const char* kFilterScales = "filter_scale";

// Appends the bias to float constants `buffer` (the weights, or an 8-bit
// filter's scales) and returns where it starts (a parameter), or "" without
// one.
std::string AppendBias(const NodeContext& ctx, GeneratedShader& g, size_t buffer, int bias_input, int channels) {
  if (!HasBias(ctx, bias_input)) return "";
  const std::vector<float> padded = PaddedBias(ctx, bias_input, channels);
  std::vector<float>& weights = g.constants.at(buffer);
  const size_t offset = weights.size() / 4;
  weights.insert(weights.end(), padded.begin(), padded.end());
  return g.code.params.Int("bias_at", static_cast<int64_t>(offset));
}

// A convolution's filter and bias as AddConvFilter stored them. Sums over
// an 8-bit filter's integers are scaled once, at the end: a multiply per
// output instead of per weight. Such sums are the output over the scale,
// and can pass fp16's range, so they are always highp.
struct ConvFilter {
  bool int8 = false;
  std::string bias;  // where the bias starts in its buffer (a parameter), "" without one

  std::string Bias(const std::string& slice) const {
    if (bias.empty()) return "vec4(0.0)";
    return fmt::format("{}_at({} + {})", int8 ? kFilterScales : "weights", bias, slice);
  }
  // An accumulator's start for output slice `slice`: its bias, added first
  // as the CPU reference does, or zero for a sum scaled at the end.
  std::string Start(const std::string& slice) const { return int8 ? "vec4(0.0)" : Bias(slice); }
  // A sum started at zero, finished: scaled if 8-bit, then the bias.
  std::string Finished(const std::string& sum, const std::string& slice) const {
    const std::string scaled = int8 ? fmt::format("{} * {}_at({})", sum, kFilterScales, slice) : sum;
    return bias.empty() ? scaled : fmt::format("{} + {}", scaled, Bias(slice));
  }
  // The statement that ends accumulator `acc` begun at Start(slice).
  std::string End(const std::string& acc, const std::string& slice) const {
    return int8 ? fmt::format("  {} = {};\n", acc, Finished(acc, slice)) : "";
  }
  std::string Precision(const NodeContext& ctx) const { return int8 ? "highp " : glsl::AccumulatorPrecision(ctx); }
};

// "vec4 acc = <the start of output slice s>;".
std::string AccumulatorStart(const NodeContext& ctx, const ConvFilter& f) {
  return "  " + f.Precision(ctx) + "vec4 acc = " + f.Start("s") + ";\n";
}


// Node input `filter`'s OHWI weights packed O4I4 in `order` as the
// shader's first constants, and node input `bias_input`'s bias after them:
// 8-bit where the context asks and the filter is an int8 model's, else
// floats. Either way weights_at(i) is vec4 i of the packed filter.
ConvFilter AddConvFilter(const NodeContext& ctx, GeneratedShader& g, int filter, int bias_input, int out_channels,
                         int kh, int kw, int in_channels,
                         layout::BlockOrder order = layout::BlockOrder::kInputColumns) {
  const Tensor& w = ctx.input(static_cast<size_t>(filter));
  std::optional<Int8Filter> int8;
  if (ctx.int8_filters && !ctx.support_only) int8 = Int8FilterOf(w, out_channels);
  ConvFilter f;
  if (!int8) {
    g.constants = {PackUnlessSupportOnly(ctx, [&] {
      const std::vector<float> ohwi = ConstantFloats(w);
      return layout::ToConvWeightsO4I4(ohwi.data(), out_channels, kh, kw, in_channels, order).values;
    })};
    f.bias = AppendBias(ctx, g, 0, bias_input, out_channels);
    return f;
  }
  f.int8 = true;
  g.code.buffers.back() = {kFilterInts, kInt8Vec4, BufferAccess::kRead};
  g.code.buffers.push_back({kFilterScales, "vec4", BufferAccess::kRead});
  // In the body, not in ShaderCode::shared: a shader without shared
  // memory may take any workgroup (the tables').
  g.code.body.insert(0, fmt::format("#define weights_at(i) {}_at(i)\n", kFilterInts));
  g.constants = {layout::ToConvWeightsO4I4(int8->ints.data(), out_channels, kh, kw, in_channels, order).values,
                 layout::PadToSlices(int8->scales.data(), out_channels)};
  f.bias = AppendBias(ctx, g, 1, bias_input, out_channels);
  return f;
}

// A tap's sum over input slices of in0 at (iy, ix), O4I4 weights of a
// kh x kw filter: `first` and `advance` deal the slices out (a split
// convolution's invocations take every kSplitInvocations-th).
std::string InputSlices(ShaderParams& params, const layout::Bhwc& in, int kh, int kw, const std::string& first,
                        const std::string& advance) {
  return fmt::format(
      "      MGD_LOOP for (int is = {first}; is < {is}; {advance}) {{\n"
      "        vec4 v = {read};\n"
      "        int w = (((s * {kh} + ky) * {kw} + kx) * {is} + is) * 4;\n"
      "{mac}"
      "      }}\n",
      fmt::arg("first", first), fmt::arg("advance", advance), fmt::arg("is", params.Int("in0_s", in.slices())),
      fmt::arg("read", glsl::Read(params, "in0", in, "b", "is", "iy", "ix")),
      fmt::arg("kh", params.Int("filter_h", kh)), fmt::arg("kw", params.Int("filter_w", kw)),
      fmt::arg("mac", MultiplyAccumulate("w", "v")));
}

}  // namespace

std::vector<float> PaddedBias(const NodeContext& ctx, int bias_input, int channels) {
  if (!HasBias(ctx, bias_input)) return std::vector<float>(static_cast<size_t>((channels + 3) / 4 * 4), 0.0f);
  const std::vector<float> bias = ConstantFloats(ctx.input(static_cast<size_t>(bias_input)));
  return layout::PadToSlices(bias.data(), channels);
}

std::optional<Int8Filter> Int8FilterOf(const Tensor& w, int out_channels) {
  if (w.type != DataType::kFloat32 || !w.quantization.has_value() || w.shape.empty()) return std::nullopt;
  const Quantization& q = *w.quantization;
  const bool per_channel = q.scale.size() > 1;
  if (q.scale.empty() || (per_channel && (q.quantized_dimension != 0 || static_cast<int>(q.scale.size()) != out_channels))) {
    return std::nullopt;
  }
  Int8Filter f;
  f.ints = ConstantFloats(w);
  const size_t per_output = f.ints.size() / static_cast<size_t>(out_channels);
  for (int o = 0; o < out_channels; ++o) f.scales.push_back(q.scale[per_channel ? static_cast<size_t>(o) : 0]);
  for (size_t i = 0; i < f.ints.size(); ++i) {
    const float scale = f.scales[i / per_output];
    const float k = std::nearbyint(f.ints[i] / scale);
    if (!(k >= -128.0f && k <= 127.0f) || k * scale != f.ints[i]) return std::nullopt;
    f.ints[i] = k;
  }
  return f;
}

ConvGeometry Geometry(const NodeContext& ctx, const layout::Bhwc& in, Padding padding, int kh, int kw, int sh, int sw,
                      int dh, int dw) {
  const int h = in.height + ctx.pad.top + ctx.pad.bottom, w = in.width + ctx.pad.left + ctx.pad.right;
  return {kh, kw, sh, sw, dh, dw, WindowAlong(padding, h, kh, sh, dh).pad + ctx.pad.top,
          WindowAlong(padding, w, kw, sw, dw).pad + ctx.pad.left};
}

absl::Status RequireConstant(const NodeContext& ctx, size_t input, const char* what) {
  if (ctx.has_input(input) && !ctx.input(input).is_constant) {
    return absl::UnimplementedError(fmt::format("{} must be constant for the GPU", what));
  }
  return absl::OkStatus();
}

int64_t AppendVec4s(std::vector<float>& weights, const std::vector<float>& values) {
  const auto offset = static_cast<int64_t>(weights.size() / 4);
  weights.insert(weights.end(), values.begin(), values.end());
  weights.resize((weights.size() + 3) / 4 * 4, 0.0f);
  return offset;
}

absl::StatusOr<ConvShapes> ConstantConvShapes(const NodeContext& ctx) {
  if (absl::Status s = RequireConstant(ctx, 1, "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  return ConvShapes{*in, *out};
}

GeneratedShader StartConvShader(const NodeContext& ctx, const layout::Bhwc& out, int input) {
  GeneratedShader g = StartShader(ctx, out, {input});
  g.code.buffers.push_back({"weights", "vec4", BufferAccess::kRead});
  return g;
}

std::string BiasInit(const NodeContext& ctx, GeneratedShader& g, int bias_input, int channels) {
  const ConvFilter weights{false, AppendBias(ctx, g, 0, bias_input, channels)};
  return AccumulatorStart(ctx, weights);
}

std::string WindowLoops(ShaderParams& params, const layout::Bhwc& in, const ConvGeometry& g, const std::string& inner,
                        TapOrder order) {
  // One axis of the window: `k` the tap, `i` the input coordinate, `o` the
  // output's; `hw` picks the parameters' suffix.
  struct Axis {
    const char *k, *i, *o, *hw;
    int filter, stride, pad, dilation, size;
  };
  auto loop = [&](const std::string& indent, const Axis& a) {
    const std::string h = a.hw;
    return fmt::format(
        "{n}MGD_LOOP for (int {k} = 0; {k} < {kn}; ++{k}) {{\n"
        "{n}  int {i} = {o} * {s} - {p} + {k} * {d};\n"
        "{n}  if ({i} < 0 || {i} >= {in}) continue;\n",
        fmt::arg("n", indent), fmt::arg("k", a.k), fmt::arg("i", a.i), fmt::arg("o", a.o),
        fmt::arg("kn", params.Int("filter_" + h, a.filter)), fmt::arg("s", params.Int("stride_" + h, a.stride)),
        fmt::arg("p", params.Int("pad_" + h, a.pad)), fmt::arg("d", params.Int("dilation_" + h, a.dilation)),
        fmt::arg("in", params.Int("in0_" + h, a.size)));
  };
  const Axis rows{"ky", "iy", "y", "h", g.kh, g.stride_h, g.pad_h, g.dilation_h, in.height};
  const Axis columns{"kx", "ix", "x", "w", g.kw, g.stride_w, g.pad_w, g.dilation_w, in.width};
  const bool rows_outer = order == TapOrder::kRowsOuter;
  return loop("  ", rows_outer ? rows : columns) + loop("    ", rows_outer ? columns : rows) + inner + "    }\n  }\n";
}

std::string MultiplyAccumulate(const std::string& w, const std::string& v, const std::string& acc) {
  return fmt::format(
      "        {2} += weights_at({0}) * {1}.x;\n"
      "        {2} += weights_at({0} + 1) * {1}.y;\n"
      "        {2} += weights_at({0} + 2) * {1}.z;\n"
      "        {2} += weights_at({0} + 3) * {1}.w;\n",
      w, v, acc);
}

std::string Finish(const std::string& body, Activation activation) {
  return body + glsl::Activation(activation, "acc") + "  vec4 value = vec4(acc);\n";
}

std::vector<float> PackedConvWeights(const Tensor& w, int out_channels, int kh, int kw, int in_channels) {
  const std::vector<float> ohwi = ConstantFloats(w);
  return layout::ToConvWeightsO4I4(ohwi.data(), out_channels, kh, kw, in_channels).values;
}

namespace {

// A convolution's shader over `out` with node input 1's OHWI weights packed
// O4I4 and input 2's bias (AddConvFilter).
GeneratedShader StartPlainConv(const NodeContext& ctx, const ConvGeometry& geometry, const layout::Bhwc& in,
                               const layout::Bhwc& out, ConvFilter& filter) {
  GeneratedShader g = StartConvShader(ctx, out, 0);
  filter = AddConvFilter(ctx, g, 1, 2, out.channels, geometry.kh, geometry.kw, in.channels);
  return g;
}

// Few output vec4s, each a long sum (the 7x7 and 14x14 layers of a
// classifier): a thread per output leaves the GPU mostly idle and waiting on
// one long chain of loads, so several threads share each output vec4 and
// meet in shared memory. With fp16 storage, kSplitInvocations threads share each
// output's input slices and add their partial sums (in thread order); in
// fp32, where a sum taken in another order than the CPU reference's is off
// by roundings that deep networks amplify past the fp32 bound
// (docs/numerics.md), each of four threads sums one output channel in the
// reference's order instead.
constexpr int kOutputsPerGroup = 8;
constexpr int kLaneOutputsPerGroup = 16;

// The prologue of a shader whose workgroup holds `per_group` outputs along
// y (l), each shared by the invocations along x (t): inactive invocations
// read a valid output's inputs and take part in the barrier; they return
// before the store.
std::string SharedOutputPrologue(ShaderParams& params, const layout::Bhwc& out, int per_group) {
  const int n = out.batch * out.height * out.width * out.slices();
  return fmt::format(
      "  int t = int(gl_LocalInvocationID.x), l = int(gl_LocalInvocationID.y);\n"
      "  int o = int(gl_WorkGroupID.x) * {per} + l;\n"
      "  bool in_range = o < {n};\n"
      "  int out_index = min(o, {n} - 1);\n"
      "  int x = out_index % {W}, y = (out_index / {W}) % {H}, z = out_index / ({W} * {H});\n"
      "{bs}",
      fmt::arg("per", per_group), fmt::arg("n", params.Int("out_n", n)), fmt::arg("W", params.Int("out_w", out.width)),
      fmt::arg("H", params.Int("out_h", out.height)), fmt::arg("bs", glsl::BatchAndSlice(params, out)));
}

std::array<uint32_t, 3> SharedOutputGroups(const layout::Bhwc& out, int per_group) {
  const int n = out.batch * out.height * out.width * out.slices();
  return {static_cast<uint32_t>((n + per_group - 1) / per_group), 1, 1};
}

absl::StatusOr<GeneratedShader> LaneConv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                                         const layout::Bhwc& in, const layout::Bhwc& out) {
  GeneratedShader g = StartConvShader(ctx, out, 0);
  const ConvFilter filter =
      AddConvFilter(ctx, g, 1, 2, out.channels, geometry.kh, geometry.kw, in.channels, layout::BlockOrder::kOutputRows);
  g.code.workgroup = {4, kLaneOutputsPerGroup, 1};
  g.groups = SharedOutputGroups(out, kLaneOutputsPerGroup);
  g.code.shared = fmt::format("shared highp float partial[{}][4];\n", kLaneOutputsPerGroup);
  ShaderParams& params = g.code.params;
  g.prologue = SharedOutputPrologue(params, out, kLaneOutputsPerGroup);
  // Output channel 4s + t: from its bias, over the taps, input channels
  // innermost, as the reference sums it; its weights from one input slice
  // are one vec4 (the blocks' output rows).
  const std::string inner = fmt::format(
      "      MGD_LOOP for (int is = 0; is < {is}; ++is) {{\n"
      "        vec4 v = {read};\n"
      "        vec4 w = weights_at((((s * {kh} + ky) * {kw} + kx) * {is} + is) * 4 + t);\n"
      "        sum += w.x * v.x;\n"
      "        sum += w.y * v.y;\n"
      "        sum += w.z * v.z;\n"
      "        sum += w.w * v.w;\n"
      "      }}\n",
      fmt::arg("is", params.Int("in0_s", in.slices())), fmt::arg("read", glsl::Read(params, "in0", in, "b", "is", "iy", "ix")),
      fmt::arg("kh", params.Int("filter_h", geometry.kh)), fmt::arg("kw", params.Int("filter_w", geometry.kw)));
  g.code.body += "  highp vec4 start = " + filter.Start("s") + ";\n  highp float sum = start[t];\n" +
                 WindowLoops(params, in, geometry, inner);
  g.code.body +=
      "  partial[l][t] = sum;\n"
      "  memoryBarrierShared();\n"
      "  barrier();\n"
      "  if (t != 0 || !in_range) return;\n"
      "  highp vec4 acc = vec4(partial[l][0], partial[l][1], partial[l][2], partial[l][3]);\n";
  g.code.body += filter.End("acc", "s") + glsl::Activation(activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

absl::StatusOr<GeneratedShader> SplitConv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                                          const layout::Bhwc& in, const layout::Bhwc& out) {
  ConvFilter filter;
  GeneratedShader g = StartPlainConv(ctx, geometry, in, out, filter);
  g.code.workgroup = {kSplitInvocations, kOutputsPerGroup, 1};
  g.groups = SharedOutputGroups(out, kOutputsPerGroup);
  g.code.shared = fmt::format("shared highp vec4 partial[{}][{}];\n", kOutputsPerGroup, kSplitInvocations);
  g.prologue = SharedOutputPrologue(g.code.params, out, kOutputsPerGroup);
  const std::string inner =
      InputSlices(g.code.params, in, geometry.kh, geometry.kw, "t", fmt::format("is += {}", kSplitInvocations));
  g.code.body += "  " + filter.Precision(ctx) + "vec4 acc = vec4(0.0);\n" + WindowLoops(g.code.params, in, geometry, inner);
  g.code.body += fmt::format(
      "  partial[l][t] = acc;\n"
      "  memoryBarrierShared();\n"
      "  barrier();\n"
      "  if (t != 0 || !in_range) return;\n"
      "  acc = vec4(0.0);\n"
      "  MGD_LOOP for (int k = 0; k < {split}; ++k) acc += partial[l][k];\n",
      fmt::arg("split", kSplitInvocations));
  g.code.body += "  acc = " + filter.Finished("acc", "s") + ";\n";
  g.code.body += glsl::Activation(activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

// A 1x1 convolution that keeps its input's size: each output pixel reads
// its own input pixel, so a block's pixels past the row's end may read the
// last one (and are never stored) instead of being checked.
bool KeepsPixels(const ConvGeometry& g, const layout::Bhwc& in, const layout::Bhwc& out) {
  return g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0 &&
         in.width == out.width && in.height == out.height;
}

// A convolution whose invocations compute a block of outputs, each summed
// over the same taps in the same order as one output alone (filter rows,
// columns, input slices): each weight vec4 is read once for the block's
// pixels, each input vec4 once for its slices.
GeneratedShader BlockedConv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                            const layout::Bhwc& in, const layout::Bhwc& out, OutputBlock block) {
  ConvFilter filter;
  GeneratedShader g = StartPlainConv(ctx, geometry, in, out, filter);
  g.block = block;
  g.groups = GridFor(out, g.code.workgroup, block);
  ShaderParams& params = g.code.params;
  g.prologue = glsl::BlockPrologue(params, out, block);
  auto acc = [](int j, int i) { return fmt::format("acc{}_{}", j, i); };
  std::string& body = g.code.body;
  for (int j = 0; j < block.slices; ++j) {
    for (int i = 0; i < block.x; ++i) {
      body += fmt::format("  {}vec4 {} = {};\n", filter.Precision(ctx), acc(j, i), filter.Start(fmt::format("s + {}", j)));
    }
  }
  const std::string is = params.Int("in0_s", in.slices()), kh = params.Int("filter_h", geometry.kh),
                    kw = params.Int("filter_w", geometry.kw), iw = params.Int("in0_w", in.width);
  const bool keeps_pixels = KeepsPixels(geometry, in, out);
  // Pixel i's input column at tap kx, and whether it lies inside the input
  // (else the tap is skipped, as for a single output).
  std::string columns;
  for (int i = 0; i < block.x; ++i) {
    if (keeps_pixels) {
      columns += fmt::format("      int ix{0} = min(x + {0}, {1} - 1);\n", i, iw);
    } else {
      columns += fmt::format("      int ix{0} = (x + {0}) * {1} - {2} + kx * {3};\n", i,
                             params.Int("stride_w", geometry.stride_w), params.Int("pad_w", geometry.pad_w),
                             params.Int("dilation_w", geometry.dilation_w));
    }
  }
  std::string slices_loop = fmt::format("      MGD_LOOP for (int is = 0; is < {}; ++is) {{\n", is);
  for (int j = 0; j < block.slices; ++j) {
    slices_loop += fmt::format(
        "        int w{j} = ((((s + {j}) * {kh} + ky) * {kw} + kx) * {is} + is) * 4;\n"
        "        vec4 w{j}x = weights_at(w{j}), w{j}y = weights_at(w{j} + 1), w{j}z = weights_at(w{j} + 2), "
        "w{j}w = weights_at(w{j} + 3);\n",
        fmt::arg("j", j), fmt::arg("kh", kh), fmt::arg("kw", kw), fmt::arg("is", is));
  }
  for (int i = 0; i < block.x; ++i) {
    const std::string inside = keeps_pixels ? "true" : fmt::format("ix{0} >= 0 && ix{0} < {1}", i, iw);
    slices_loop += fmt::format("        if ({}) {{\n          vec4 v = {};\n", inside,
                               glsl::Read(params, "in0", in, "b", "is", "iy", fmt::format("ix{}", i)));
    for (int j = 0; j < block.slices; ++j) {
      slices_loop += fmt::format(
          "          {0} += w{1}x * v.x;\n"
          "          {0} += w{1}y * v.y;\n"
          "          {0} += w{1}z * v.z;\n"
          "          {0} += w{1}w * v.w;\n",
          acc(j, i), j);
    }
    slices_loop += "        }\n";
  }
  slices_loop += "      }\n";
  body += fmt::format(
      "  MGD_LOOP for (int ky = 0; ky < {kh}; ++ky) {{\n"
      "    int iy = y * {sh} - {ph} + ky * {dh};\n"
      "    if (iy < 0 || iy >= {ih}) continue;\n"
      "    MGD_LOOP for (int kx = 0; kx < {kw}; ++kx) {{\n"
      "{columns}{slices}"
      "    }}\n"
      "  }}\n",
      fmt::arg("kh", kh), fmt::arg("sh", params.Int("stride_h", geometry.stride_h)),
      fmt::arg("ph", params.Int("pad_h", geometry.pad_h)), fmt::arg("dh", params.Int("dilation_h", geometry.dilation_h)),
      fmt::arg("ih", params.Int("in0_h", in.height)), fmt::arg("kw", kw), fmt::arg("columns", columns),
      fmt::arg("slices", slices_loop));
  for (int j = 0; j < block.slices; ++j) {
    for (int i = 0; i < block.x; ++i) {
      body += filter.End(acc(j, i), fmt::format("s + {}", j)) + glsl::Activation(activation, acc(j, i));
      body += fmt::format("  vec4 value{} = vec4({});\n", j * block.x + i, acc(j, i));
    }
  }
  return g;
}

}  // namespace

OutputBlock ConvBlock(const NodeContext& ctx, const layout::Bhwc& out) {
  if (!ctx.workgroup_reduction) return {};
  OutputBlock block = ctx.conv_block;
  block.x = std::max(1, std::min(block.x, out.width));
  block.slices = std::max(1, std::min(block.slices, out.slices()));
  while (out.slices() % block.slices != 0) --block.slices;
  // A row that the block's width divides wastes no invocations (a 14- or
  // 28-pixel row in blocks of 7, not 8): the widest such block from half
  // the asked width up.
  for (int x = block.x; 2 * x >= block.x; --x) {
    if (out.width % x == 0) {
      block.x = x;
      break;
    }
  }
  // A flat grid of blocks must fit the 65535 workgroups every device
  // allows in x with any workgroup; rows of that many blocks fill a SIMD
  // vector's lanes without it.
  block.flat = block.flat && !block.single() && BlockedExtent(out, {block.x, block.slices, true})[0] <= 65535;
  return block;
}

bool SplitPays(const NodeContext& ctx, const layout::Bhwc& in, const layout::Bhwc& out) {
  const int64_t outputs = static_cast<int64_t>(out.batch) * out.height * out.width * out.slices();
  return ctx.workgroup_reduction && outputs <= ctx.split_conv_outputs && in.slices() >= 2 * kSplitInvocations;
}

absl::StatusOr<GeneratedShader> Conv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                                     const layout::Bhwc& in, const layout::Bhwc& out) {
  if (SplitPays(ctx, in, out)) {
    return ctx.precision.half_storage() ? SplitConv(ctx, geometry, activation, in, out)
                                        : LaneConv(ctx, geometry, activation, in, out);
  }
  if (std::optional<GeneratedShader> dot = DotConv(ctx, geometry, activation, in, out)) return *std::move(dot);
  if (const OutputBlock block = ConvBlock(ctx, out); !block.single()) {
    return BlockedConv(ctx, geometry, activation, in, out, block);
  }
  ConvFilter filter;
  GeneratedShader g = StartPlainConv(ctx, geometry, in, out, filter);
  const std::string inner = InputSlices(g.code.params, in, geometry.kh, geometry.kw, "0", "++is");
  g.code.body += Finish(AccumulatorStart(ctx, filter) + WindowLoops(g.code.params, in, geometry, inner) +
                            filter.End("acc", "s"),
                        activation);
  return g;
}

// Transposed convolution as a gather: output (y, x) sums the input pixels
// whose window covers it. Taps are taken in the CPU kernel's order (input
// rows, then columns, ascending: kernel indices descending).
absl::StatusOr<GeneratedShader> TransposeConvolution(const NodeContext& ctx, int input, int weights_input,
                                                     int bias_input, int stride_h, int stride_w, int pad_h, int pad_w,
                                                     Activation activation) {
  if (absl::Status s = RequireConstant(ctx, static_cast<size_t>(weights_input), "the filter"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, static_cast<size_t>(bias_input), "the bias"); !s.ok()) return s;
  auto in = InputBhwc(ctx, static_cast<size_t>(input));
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const Shape& w = ctx.input(static_cast<size_t>(weights_input)).shape;
  const int kh = w[1], kw = w[2];
  GeneratedShader g = StartConvShader(ctx, *out, input);
  const ConvFilter filter = AddConvFilter(ctx, g, weights_input, bias_input, out->channels, kh, kw, in->channels);
  g.code.body += AccumulatorStart(ctx, filter);
  ShaderParams& params = g.code.params;
  const std::string inner = InputSlices(params, *in, kh, kw, "0", "++is");
  g.code.body += glsl::TransposedWindowLoops(params, *in, kh, kw, stride_h, stride_w, pad_h, pad_w, inner) +
                 filter.End("acc", "s");
  g.code.body += glsl::Activation(activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

}  // namespace mgd::ops
