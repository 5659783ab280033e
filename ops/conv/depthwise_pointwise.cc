// DEPTHWISE_CONV_2D then a 1x1 CONV_2D in one shader: MobileNet's separable
// convolutions, the projection of an inverted residual, blazeface's blocks.
// A workgroup first computes the depthwise outputs of a tile of pixels, every
// slice of them, into shared memory; after a barrier each invocation sums one
// output vec4 of one pixel from there. One dispatch instead of two, and the
// depthwise output never reaches memory. Where the table says the plain
// convolution's split sum pays (small, deep layers) and that fused pairs
// split theirs too (split_fused_sums), with fp16 storage each output vec4 is
// summed by kSplitInvocations invocations, each every kSplitInvocations-th
// depthwise slice, their parts added in order and the bias last, as the
// split convolution does, where that pays (SplitFusedPays); in fp32 that
// convolution sums a channel per lane instead, and the pair stays two
// dispatches, as it does without split_fused_sums.
//
// Without fp16 arithmetic both sums run in the CPU reference's order, as the
// two shaders alone do, and with fp16 storage the depthwise outputs are
// rounded to fp16 in shared memory as they would be in a buffer. With fp16
// arithmetic the pointwise sum, over every depthwise channel, adds each input
// slice's four products (an fp16 part) to an fp32 total, as TFLite's F32_F16
// precision does (an order of its own, unlike the plain 1x1 shader's): an
// fp16 total over hundreds of channels drifts by many of its roundings (on
// the H100's Vulkan driver, 600 channels: -1.4727 for -1.4406, 2.7 times the
// fp16 op bound; fusion_test's "separable, deep and wide").
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "layout/weights.h"
#include "model/constants.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "shaders/ops.h"

namespace mgd::ops {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

namespace {

// Output slices one workgroup computes per pixel. A tile's depthwise
// outputs are computed again for every group of them, so layers more than
// two groups wide stay unfused (on the H200, 14x14x512 layers redoing them
// 8 times took 80 us against 33 us for the two shaders).
constexpr int kMaxSlicesAcross = 16, kMaxRepeats = 2;

// Where the split fused pair pays against the two split shaders (H100,
// driver 580.159.04, 82 pairs of eight models, docs/perf.md): up to 37%
// faster where each pixel's pointwise work is small (output slices x
// depthwise slices under 512) or the layer's is (pixels x both under 200K),
// up to 1.7x slower past both, where every pixel's workgroup reads a large
// pointwise filter that the separate convolution shares between pixels;
// and with fewer than 16 workgroups the GPU idles (7: 1.33x slower).
constexpr int64_t kSmallPixelWork = 512, kSmallLayerWork = 200000, kMinSplitWorkgroups = 16;

bool SplitFusedPays(int64_t pixels, int64_t mid_slices, int64_t out_slices, int64_t workgroups) {
  const int64_t pixel_work = mid_slices * out_slices;
  return (pixel_work < kSmallPixelWork || pixels * pixel_work <= kSmallLayerWork) && workgroups >= kMinSplitWorkgroups;
}

// acc += the products of input slice `v` and its O4I4 weights from vec4
// `w` on. With fp16 arithmetic acc is highp and they are summed apart first.
std::string PointwiseSlice(const NodeContext& ctx, const std::string& w, const std::string& v) {
  if (!ctx.precision.half_arithmetic()) return MultiplyAccumulate(w, v);
  return "    vec4 part = vec4(0.0);\n" + MultiplyAccumulate(w, v, "part") + "    acc += part;\n";
}

}  // namespace

absl::StatusOr<GeneratedShader> DepthwisePointwise(const NodeContext& ctx) {
  if (ctx.producer == nullptr || ctx.producer->op != OpKind::kDepthwiseConv2d) {
    return absl::UnimplementedError("only a depthwise convolution is computed inside a convolution");
  }
  if (!ctx.workgroup_reduction) return absl::UnimplementedError("its workgroups share memory");
  NodeContext dw = ctx;
  dw.node = ctx.producer;
  dw.node_index = ctx.producer_index;
  dw.producer = nullptr;
  const std::pair<const NodeContext*, const char*> filters[] = {{&dw, "the depthwise filter"},
                                                                 {&ctx, "the pointwise filter"}};
  for (const auto& [node, what] : filters) {
    if (absl::Status s = RequireConstant(*node, 1, what); !s.ok()) return s;
    if (absl::Status s = RequireConstant(*node, 2, "the bias"); !s.ok()) return s;
  }
  const auto& dwa = AttributesOf<DepthwiseConv2dAttributes>(dw.node->attributes);
  const auto& pwa = AttributesOf<Conv2dAttributes>(ctx.node->attributes);
  auto in = InputBhwc(dw, 0);
  auto mid = OutputBhwc(dw, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !mid.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const Shape& dws = dw.input(1).shape;
  const Shape& pws = ctx.input(1).shape;
  if (dws.size() != 4 || pws.size() != 4 || pws[1] != 1 || pws[2] != 1 || pws[3] != mid->channels ||
      pwa.stride_h != 1 || pwa.stride_w != 1 || out->height != mid->height || out->width != mid->width ||
      out->batch != mid->batch) {
    return absl::UnimplementedError("not a 1x1 convolution with stride 1 over the depthwise output");
  }
  // A GPU that wants blocks of outputs per invocation keeps the plain
  // convolution's blocks: this shader sums one output (or a split part of
  // one) per invocation (on lavapipe, MobileNet v1's first such pair took
  // 26.6 ms fused against 3.7 + 4.1 unfused with 8 x 2 blocks,
  // docs/perf.md).
  const bool split = SplitPays(ctx, *mid, *out);
  if (split && !ctx.split_fused_sums) return absl::UnimplementedError("the split convolution runs apart on this GPU");
  if (split && !ctx.precision.half_storage()) return absl::UnimplementedError("fp32's split sums take a lane a channel");
  if (!split && !ConvBlock(ctx, *out).single()) {
    return absl::UnimplementedError("the plain convolution's blocks pay better");
  }
  const int parts = split ? kSplitInvocations : 1;
  const int mid_slices = mid->slices(), out_slices = out->slices();
  const int pixels = out->batch * out->height * out->width;
  const int repeats = (out_slices + kMaxSlicesAcross - 1) / kMaxSlicesAcross;
  if (repeats > kMaxRepeats) return absl::UnimplementedError("too many output channels to share the depthwise outputs");
  const int across = (out_slices + repeats - 1) / repeats;
  const int vec4_bytes = ctx.precision.half_storage() ? 8 : 16;
  const int partial_bytes = split ? across * parts * 16 : 0;  // a highp vec4 per invocation
  const int tile =
      std::min({kMaxInvocations / (across * parts), kSharedBytes / (mid_slices * vec4_bytes + partial_bytes), pixels});
  if (tile < 1) return absl::UnimplementedError("one pixel's depthwise outputs exceed shared memory");
  const int tiles = (pixels + tile - 1) / tile;
  if (tiles > 65535) return absl::UnimplementedError("too many pixels for one row of workgroups");
  if (split && !SplitFusedPays(pixels, mid_slices, out_slices, static_cast<int64_t>(tiles) * repeats)) {
    return absl::UnimplementedError("the split convolution's pointwise filter is shared better apart");
  }

  const ConvGeometry geometry = Geometry(dw, *in, dwa, dws[1], dws[2]);
  GeneratedShader g = StartConvShader(ctx, *out, 0);
  g.code.name = fmt::format("node{}_DEPTHWISE_CONV_2D_CONV_2D", dw.node_index);
  int64_t dw_bias = 0, pw_weights = 0, pw_bias = 0;
  g.constants = {PackUnlessSupportOnly(ctx, [&] {
    const std::vector<float> dww = ConstantFloats(dw.input(1));
    std::vector<float> weights = layout::ToDepthwiseWeights4(dww.data(), dws[1], dws[2], mid->channels).values;
    dw_bias = AppendVec4s(weights, PaddedBias(dw, 2, mid->channels));
    pw_weights = AppendVec4s(weights, PackedConvWeights(ctx.input(1), out->channels, 1, 1, mid->channels));
    pw_bias = AppendVec4s(weights, PaddedBias(ctx, 2, out->channels));
    return weights;
  })};
  // Pixels along x, so that neighbouring invocations read and write
  // neighbouring addresses of the PHWC4 planes and of `mid` ([slice][pixel]).
  g.code.workgroup = {static_cast<uint32_t>(tile), static_cast<uint32_t>(across), static_cast<uint32_t>(parts)};
  g.groups = {static_cast<uint32_t>(tiles), static_cast<uint32_t>((out_slices + across - 1) / across), 1};
  const bool half = ctx.precision.half_storage();
  g.code.shared = fmt::format("shared {} mid[{}];\n", half ? "uvec2" : "highp vec4", tile * mid_slices);
  if (split) g.code.shared += fmt::format("shared highp vec4 partial[{}];\n", tile * across * parts);
  ShaderParams& params = g.code.params;
  const std::string n = params.Int("out_n", pixels), w = params.Int("out_w", out->width),
                    h = params.Int("out_h", out->height), ms = params.Int("mid_s", mid_slices),
                    os = params.Int("out_s", out_slices);
  const std::string acc = glsl::AccumulatorPrecision(ctx) + "vec4 acc";
  // Item k of the tile: slice k / T, pixel k % T. Items past the last pixel
  // compute the last one again, and all invocations meet at the barrier.
  // Invocation (l, t, u) sums output slice t of pixel l (part u of it).
  g.prologue = fmt::format(
      "  int l = int(gl_LocalInvocationID.x), t = int(gl_LocalInvocationID.y), u = int(gl_LocalInvocationID.z);\n"
      "  int first = int(gl_WorkGroupID.x) * {T};\n"
      "  MGD_LOOP for (int k = int(gl_LocalInvocationIndex); k < {T} * {S}; k += {T} * {C} * {P}) {{\n"
      "    int ms = k / {T}, p = k - ms * {T};\n"
      "    int q = min(first + p, {N} - 1);\n"
      "    int x = q % {W}, y = (q / {W}) % {H}, b = q / ({W} * {H});\n"
      "    {acc} = weights_at({dw_bias} + ms);\n"
      "{sum}"
      "{activation}"
      "    mid[k] = {store};\n"
      "  }}\n"
      "  memoryBarrierShared();\n"
      "  barrier();\n"
      "  int o = first + l, s = int(gl_WorkGroupID.y) * {C} + t;\n"
      "{range}"
      "  int x = o % {W}, y = (o / {W}) % {H}, b = o / ({W} * {H}), z = b * {OS} + s;\n"
      "  int out_index = (z * {H} + y) * {W} + x;\n",
      fmt::arg("T", tile), fmt::arg("C", across), fmt::arg("P", parts), fmt::arg("S", ms), fmt::arg("N", n),
      fmt::arg("W", w), fmt::arg("H", h), fmt::arg("OS", os), fmt::arg("acc", acc),
      fmt::arg("range", split ? fmt::format("  bool in_range = o < {0} && s < {1};\n"
                                            "  o = min(o, {0} - 1);\n"
                                            "  s = min(s, {1} - 1);\n",
                                            n, os)
                              : fmt::format("  if (o >= {} || s >= {}) return;\n", n, os)),
      fmt::arg("dw_bias", params.Int("dw_bias_at", dw_bias)),
      fmt::arg("sum", DepthwiseSum(params, *in, geometry, mid->channels / std::max(1, in->channels), "ms")),
      fmt::arg("activation", glsl::Activation(dwa.activation, "acc")),
      fmt::arg("store", half ? "uvec2(packHalf2x16(acc.xy), packHalf2x16(acc.zw))" : "acc"));
  const std::string total = ctx.precision.half_arithmetic() ? "highp vec4 acc" : acc;
  const std::string bias = fmt::format("weights_at({} + s)", params.Int("bias_at", pw_bias));
  g.code.body = fmt::format(
      "  {acc} = {start};\n"
      "  MGD_LOOP for (int is = {first}; is < {S}; is += {P}) {{\n"
      "    {read}\n"
      "    int w = {pw} + (s * {S} + is) * 4;\n"
      "{mac}"
      "  }}\n",
      fmt::arg("acc", total), fmt::arg("start", split ? "vec4(0.0)" : bias), fmt::arg("first", split ? "u" : "0"),
      fmt::arg("P", parts), fmt::arg("S", ms),
      fmt::arg("read", half ? fmt::format("uvec2 m = mid[is * {} + l];\n    vec4 v = vec4(unpackHalf2x16(m.x), "
                                          "unpackHalf2x16(m.y));",
                                          tile)
                            : fmt::format("vec4 v = vec4(mid[is * {} + l]);", tile)),
      fmt::arg("pw", params.Int("pw_at", pw_weights)), fmt::arg("mac", PointwiseSlice(ctx, "w", "v")));
  // Part u's sum waits in partial[] until every part is done; invocation
  // u = 0 adds them in order, then the bias.
  if (split) {
    g.code.body += fmt::format(
        "  int parts_at = (t * {T} + l) * {P};\n"
        "  partial[parts_at + u] = acc;\n"
        "  memoryBarrierShared();\n"
        "  barrier();\n"
        "  if (u != 0 || !in_range) return;\n"
        "  acc = vec4(0.0);\n"
        "  MGD_LOOP for (int k = 0; k < {P}; ++k) acc += partial[parts_at + k];\n"
        "  acc += {bias};\n",
        fmt::arg("T", tile), fmt::arg("P", parts), fmt::arg("bias", bias));
  }
  g.code.body = Finish(g.code.body, pwa.activation);
  return g;
}

}  // namespace mgd::ops
