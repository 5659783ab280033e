// Convolutions of int8 models summed in integers, four products to an
// instruction (VK_KHR_shader_integer_dot_product's OpSDot on four packed
// 8-bit lanes; shaders::ShaderCode::int8_dot). The input's float values lie
// on an int8 grid (passes/int8_as_float.h), so each becomes its integer q
// again as it is read: round(value / scale) + zero point. The sums are
// TFLite's own, exact: sum(q x w) - zero point x sum(w), out-of-range taps
// reading as the zero point (a real 0); the result is scaled once, by input
// scale x filter scale, and the bias added in fp32, before the activation
// and the FAKE_QUANT that rounds onto the output's grid.
#include <fmt/format.h>

#include <cstdint>

#include "layout/weights.h"
#include "ops/conv/conv_shader.h"
#include "shaders/ops.h"

namespace mgd::ops {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

namespace {

struct Grid {
  float scale;
  int zero_point;
};

// The int8 grid that passes/int8_as_float.h says a float activation's values
// lie on.
std::optional<Grid> GridOf(const Tensor& t) {
  if (t.type != DataType::kFloat32 || t.is_constant || !t.quantization.has_value()) return std::nullopt;
  const Quantization& q = *t.quantization;
  if (q.scale.size() != 1 || q.zero_point.size() != 1 || !(q.scale[0] > 0.0f)) return std::nullopt;
  if (q.zero_point[0] < -128 || q.zero_point[0] > 127) return std::nullopt;
  return Grid{q.scale[0], static_cast<int>(q.zero_point[0])};
}

// Products of two int8 values are at most 2^14 in size; sums of this many
// (and the zero point's correction) stay inside int32, and a filter's sum
// of integers is exact as a float.
constexpr int64_t kMaxTerms = int64_t{1} << 16;

}  // namespace

std::optional<GeneratedShader> DotConv(const NodeContext& ctx, const ConvGeometry& geometry, Activation activation,
                                       const layout::Bhwc& in, const layout::Bhwc& out) {
  if (!ctx.int8_dot || !ctx.int8_filters || ctx.support_only || ctx.producer != nullptr) return std::nullopt;
  const std::optional<Grid> grid = GridOf(ctx.input(0));
  if (!grid || int64_t{geometry.kh} * geometry.kw * in.slices() * 4 > kMaxTerms) return std::nullopt;
  std::optional<Int8Filter> filter = Int8FilterOf(ctx.input(1), out.channels);
  if (!filter) return std::nullopt;

  GeneratedShader g = StartShader(ctx, out, {0});
  g.code.int8_dot = true;
  g.code.buffers.push_back({"filter_q", kInt8Vec4, BufferAccess::kRead});
  // fp32 even with fp16 storage: scales of about 1e-5 are subnormal in fp16.
  g.code.buffers.push_back({"filter_real", "highp vec4", BufferAccess::kRead});
  // Each int of filter_q holds one output channel's weights for an input
  // slice (the blocks' output rows), the operand of one dot product.
  const int kh = geometry.kh, kw = geometry.kw;
  g.constants.push_back(
      layout::ToConvWeightsO4I4(filter->ints.data(), out.channels, kh, kw, in.channels, layout::BlockOrder::kOutputRows)
          .values);
  // filter_real: per output slice its scales (input's x filter's), then its
  // filter's sums of integers, then its bias.
  const size_t per_output = filter->ints.size() / static_cast<size_t>(out.channels);
  std::vector<float> scales(filter->scales.size()), sums(filter->scales.size(), 0.0f);
  for (size_t o = 0; o < scales.size(); ++o) {
    scales[o] = static_cast<float>(static_cast<double>(grid->scale) * filter->scales[o]);
    for (size_t i = 0; i < per_output; ++i) sums[o] += filter->ints[o * per_output + i];
  }
  std::vector<float> real = layout::PadToSlices(scales.data(), out.channels);
  for (const std::vector<float>& more : {layout::PadToSlices(sums.data(), out.channels), PaddedBias(ctx, 2, out.channels)}) {
    real.insert(real.end(), more.begin(), more.end());
  }
  g.constants.push_back(std::move(real));

  const OutputBlock block = ConvBlock(ctx, out);
  ShaderParams& params = g.code.params;
  if (!block.single()) {
    g.block = block;
    g.groups = GridFor(out, g.code.workgroup, block);
    g.prologue = glsl::BlockPrologue(params, out, block);
  }
  const std::string os = params.Int("out_s", out.slices()), is = params.Int("in0_s", in.slices()),
                    kh_param = params.Int("filter_h", kh), kw_param = params.Int("filter_w", kw),
                    iw = params.Int("in0_w", in.width), zp = params.Int("in0_zero_point", grid->zero_point),
                    inv_scale = params.Float("in0_inv_scale", 1.0f / grid->scale);
  // The zero point in all four lanes: an out-of-range tap, a real 0.
  const uint32_t zp_byte = static_cast<uint32_t>(grid->zero_point) & 0xffu;
  const std::string padding = params.Int("in0_zero_packed", static_cast<int32_t>(zp_byte * 0x01010101u));
  auto acc = [](int j, int i) { return fmt::format("acc{}_{}", j, i); };
  std::string& body = g.code.body;
  for (int j = 0; j < block.slices; ++j) {
    for (int i = 0; i < block.x; ++i) {
      body += fmt::format("  highp ivec4 {} = -ivec4(filter_real[{} + s + {}]) * ({});\n", acc(j, i), os, j, zp);
    }
  }
  std::string columns;
  for (int i = 0; i < block.x; ++i) {
    columns += fmt::format(
        "      int ix{0} = (x + {0}) * {1} - {2} + kx * {3};\n"
        "      bool inside{0} = row_inside && ix{0} >= 0 && ix{0} < {4};\n",
        i, params.Int("stride_w", geometry.stride_w), params.Int("pad_w", geometry.pad_w),
        params.Int("dilation_w", geometry.dilation_w), iw);
  }
  std::string slices = fmt::format("      MGD_LOOP for (int is = 0; is < {}; ++is) {{\n", is);
  for (int j = 0; j < block.slices; ++j) {
    slices += fmt::format(
        "        int w{j} = ((((s + {j}) * {kh} + ky) * {kw} + kx) * {is} + is) * 4;\n"
        "        int w{j}x = filter_q[w{j}], w{j}y = filter_q[w{j} + 1], w{j}z = filter_q[w{j} + 2], "
        "w{j}w = filter_q[w{j} + 3];\n",
        fmt::arg("j", j), fmt::arg("kh", kh_param), fmt::arg("kw", kw_param), fmt::arg("is", is));
  }
  for (int i = 0; i < block.x; ++i) {
    slices += fmt::format("        int q{0} = {1};\n        if (inside{0}) q{0} = mgd_quantized({2}, {3}, {4});\n", i,
                          padding, glsl::Read(params, "in0", in, "b", "is", "iy", fmt::format("ix{}", i)), inv_scale,
                          zp);
    for (int j = 0; j < block.slices; ++j) {
      slices += fmt::format(
          "        {0} += ivec4(mgd_dot4x8(w{1}x, q{2}), mgd_dot4x8(w{1}y, q{2}), mgd_dot4x8(w{1}z, q{2}), "
          "mgd_dot4x8(w{1}w, q{2}));\n",
          acc(j, i), j, i);
    }
  }
  slices += "      }\n";
  body += fmt::format(
      "  MGD_LOOP for (int ky = 0; ky < {kh}; ++ky) {{\n"
      "    int iy = y * {sh} - {ph} + ky * {dh};\n"
      "    bool row_inside = iy >= 0 && iy < {ih};\n"
      "    MGD_LOOP for (int kx = 0; kx < {kw}; ++kx) {{\n"
      "{columns}{slices}"
      "    }}\n"
      "  }}\n",
      fmt::arg("kh", kh_param), fmt::arg("sh", params.Int("stride_h", geometry.stride_h)),
      fmt::arg("ph", params.Int("pad_h", geometry.pad_h)), fmt::arg("dh", params.Int("dilation_h", geometry.dilation_h)),
      fmt::arg("ih", params.Int("in0_h", in.height)), fmt::arg("kw", kw_param), fmt::arg("columns", columns),
      fmt::arg("slices", slices));
  for (int j = 0; j < block.slices; ++j) {
    for (int i = 0; i < block.x; ++i) {
      const std::string real = fmt::format("r{}_{}", j, i);
      body += fmt::format("  highp vec4 {0} = vec4({1}) * filter_real[s + {2}] + filter_real[2 * {3} + s + {2}];\n",
                          real, acc(j, i), j, os);
      body += glsl::Activation(activation, real);
      body += block.single() ? fmt::format("  vec4 value = vec4({});\n", real)
                             : fmt::format("  vec4 value{} = vec4({});\n", j * block.x + i, real);
    }
  }
  return g;
}

}  // namespace mgd::ops
