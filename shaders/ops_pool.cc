// MAX_POOL_2D, AVERAGE_POOL_2D and MediaPipe's MaxPoolingWithArgmax2D
// and MaxUnpooling2D over PHWC4.
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "model/geometry.h"
#include "model/mediapipe_options.h"
#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

// A builtin pool's attributes and a MediaPipe pool's options are alike.
using PoolParams = MediaPipePoolOptions;

// The window loops of a pool. TFLite's own padding is skipped; the margins of
// a fused PAD are zeros that take part (as they would in the padded tensor).
// `inner` sees `v` (the input vec4 or zero) and fy, fx.
std::string PoolLoops(const NodeContext& ctx, const layout::Bhwc& in, const PoolParams& p, const std::string& inner) {
  const int padded_h = in.height + ctx.pad.top + ctx.pad.bottom;
  const int padded_w = in.width + ctx.pad.left + ctx.pad.right;
  return fmt::format(
      "  for (int fy = 0; fy < {fh}; ++fy) {{\n"
      "    int py = y * {sh} - {ph} + fy;\n"
      "    if (py < 0 || py >= {PH}) continue;\n"
      "    int iy = py - {top};\n"
      "    for (int fx = 0; fx < {fw}; ++fx) {{\n"
      "      int px = x * {sw} - {pw} + fx;\n"
      "      if (px < 0 || px >= {PW}) continue;\n"
      "      int ix = px - {left};\n"
      "      vec4 v = (iy >= 0 && iy < {ih} && ix >= 0 && ix < {iw}) ? vec4({read}) : vec4(0.0);\n"
      "{inner}"
      "    }}\n"
      "  }}\n",
      fmt::arg("fh", p.filter_h), fmt::arg("fw", p.filter_w), fmt::arg("sh", p.stride_h), fmt::arg("sw", p.stride_w),
      fmt::arg("ph", WindowAlong(p.padding, padded_h, p.filter_h, p.stride_h, 1).pad),
      fmt::arg("pw", WindowAlong(p.padding, padded_w, p.filter_w, p.stride_w, 1).pad), fmt::arg("PH", padded_h),
      fmt::arg("PW", padded_w), fmt::arg("top", ctx.pad.top), fmt::arg("left", ctx.pad.left), fmt::arg("ih", in.height),
      fmt::arg("iw", in.width), fmt::arg("read", glsl::Read("in0", in, "b", "s", "iy", "ix")), fmt::arg("inner", inner));
}

// Large windows over few outputs (a global average pool: selfie_segmentation
// spent 2.1 of its 3.7 ms of H200 GPU time in one, 16384 values summed by
// each of 4 invocations): kPoolThreads invocations share each output's
// window and combine their partial results through shared memory, as a tree.
constexpr int kPoolThreads = 128;  // GLES 3.1's least maximum workgroup size

bool SplitPoolPays(const NodeContext& ctx, const layout::Bhwc& out, const PoolParams& p) {
  const int64_t outputs = static_cast<int64_t>(out.batch) * out.height * out.width * out.slices();
  return ctx.workgroup_reduction && outputs <= 8192 && p.filter_h * p.filter_w >= 2 * kPoolThreads;
}

absl::StatusOr<GeneratedShader> SplitPool2d(const NodeContext& ctx, const layout::Bhwc& in, const layout::Bhwc& out,
                                            const PoolParams& p) {
  const bool is_max = ctx.node->op == OpKind::kMaxPool2d;
  GeneratedShader g = StartShader(ctx, out, {0});
  const int n = out.batch * out.height * out.width * out.slices();
  g.code.workgroup = {kPoolThreads, 1, 1};
  g.groups = {static_cast<uint32_t>(n), 1, 1};
  g.code.shared = fmt::format("shared highp vec4 partial[{0}];\nshared int partial_count[{0}];\n", kPoolThreads);
  g.prologue = fmt::format(
      "  int t = int(gl_LocalInvocationID.x);\n"
      "  int out_index = int(gl_WorkGroupID.x);\n"
      "  int x = out_index % {W}, y = (out_index / {W}) % {H}, z = out_index / ({W} * {H});\n"
      "{bs}",
      fmt::arg("W", out.width), fmt::arg("H", out.height), fmt::arg("bs", glsl::BatchAndSlice(out)));
  // The window as one range of positions, dealt to the invocations in turn.
  const int padded_h = in.height + ctx.pad.top + ctx.pad.bottom;
  const int padded_w = in.width + ctx.pad.left + ctx.pad.right;
  g.code.body += fmt::format(
      "  highp vec4 acc = vec4({init});\n"
      "  int count = 0;\n"
      "  for (int k = t; k < {area}; k += {T}) {{\n"
      "    int fy = k / {fw}, fx = k - fy * {fw};\n"
      "    int py = y * {sh} - {ph} + fy, px = x * {sw} - {pw} + fx;\n"
      "    if (py < 0 || py >= {PH} || px < 0 || px >= {PW}) continue;\n"
      "    int iy = py - {top}, ix = px - {left};\n"
      "    vec4 v = (iy >= 0 && iy < {ih} && ix >= 0 && ix < {iw}) ? vec4({read}) : vec4(0.0);\n"
      "    acc = {combine_v};\n"
      "    ++count;\n"
      "  }}\n"
      "  partial[t] = acc;\n"
      "  partial_count[t] = count;\n"
      "  for (int k = {T} / 2; k > 0; k /= 2) {{\n"
      "    memoryBarrierShared(); barrier();\n"
      "    if (t < k) {{\n"
      "      partial[t] = {combine_k};\n"
      "      partial_count[t] += partial_count[t + k];\n"
      "    }}\n"
      "  }}\n"
      "  memoryBarrierShared(); barrier();\n"
      "  if (t != 0) return;\n"
      "  acc = partial[0];\n",
      fmt::arg("init", is_max ? glsl::Float(-std::numeric_limits<float>::infinity()) : "0.0"), fmt::arg("area", p.filter_h * p.filter_w),
      fmt::arg("T", kPoolThreads), fmt::arg("fw", p.filter_w), fmt::arg("sh", p.stride_h), fmt::arg("sw", p.stride_w),
      fmt::arg("ph", WindowAlong(p.padding, padded_h, p.filter_h, p.stride_h, 1).pad),
      fmt::arg("pw", WindowAlong(p.padding, padded_w, p.filter_w, p.stride_w, 1).pad), fmt::arg("PH", padded_h),
      fmt::arg("PW", padded_w), fmt::arg("top", ctx.pad.top), fmt::arg("left", ctx.pad.left), fmt::arg("ih", in.height),
      fmt::arg("iw", in.width), fmt::arg("read", glsl::Read("in0", in, "b", "s", "iy", "ix")),
      fmt::arg("combine_v", is_max ? glsl::MaxKeepingNan("acc", "v") : "acc + v"),
      fmt::arg("combine_k", is_max ? glsl::MaxKeepingNan("partial[t]", "partial[t + k]") : "partial[t] + partial[t + k]"));
  if (!is_max) g.code.body += "  acc = acc / float(max(partial_count[0], 1));\n";
  g.code.body += glsl::Activation(p.activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

absl::StatusOr<GeneratedShader> Pool2d(const NodeContext& ctx) {
  const auto& a = std::get<Pool2dAttributes>(ctx.node->attributes);
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const PoolParams p{a.padding, a.stride_w, a.stride_h, a.filter_w, a.filter_h, a.activation};
  if (SplitPoolPays(ctx, *out, p)) return SplitPool2d(ctx, *in, *out, p);
  GeneratedShader g = StartShader(ctx, *out, {0});
  // Sums of whole windows stay fp32 even in fp16: a half float holds 11
  // bits, and a window of hundreds of values would lose most of them.
  const std::string acc = std::string(ctx.node->op == OpKind::kMaxPool2d ? "" : "highp ") + "vec4 acc";
  if (ctx.node->op == OpKind::kMaxPool2d) {
    // From -Inf, and NaN wins (as TFLite's max pools): a window of -Inf is
    // -Inf, one with a NaN is NaN.
    g.code.body += "  " + acc + " = vec4(" + glsl::Float(-std::numeric_limits<float>::infinity()) + ");\n" +
                   PoolLoops(ctx, *in, p, "      acc = " + glsl::MaxKeepingNan("acc", "v") + ";\n");
  } else {
    g.code.body += "  " + acc + " = vec4(0.0);\n  int count = 0;\n" +
                   PoolLoops(ctx, *in, p, "      acc += v;\n      ++count;\n") +
                   "  acc = acc / float(max(count, 1));\n";
  }
  g.code.body += glsl::Activation(a.activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

// A MediaPipe pool's custom options (model/mediapipe_options.h).
absl::StatusOr<PoolParams> ReadPoolParams(const NodeContext& ctx) {
  auto o = DecodePoolOptions(std::get<CustomAttributes>(ctx.node->attributes).options);
  if (!o.ok()) return absl::UnimplementedError(o.status().message());
  return *o;
}

// Two outputs: the max and its position in the window + 0.1 (MediaPipe's
// encoding). The first maximum wins, as on the CPU.
absl::StatusOr<GeneratedShader> MaxPoolingWithArgmax(const NodeContext& ctx) {
  auto p = ReadPoolParams(ctx);
  if (!p.ok()) return p.status();
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {0});
  g.code.buffers.push_back({"out1", "", BufferAccess::kWrite, true});
  g.linkable = false;
  g.code.body = glsl::OutputPrologue(*out);
  g.code.body += "  vec4 best = vec4(-3.402823466e+38), position = vec4(0.0);\n";
  g.code.body += PoolLoops(ctx, *in, *p,
                           fmt::format("      bvec4 better = greaterThan(v, best);\n"
                                       "      best = mix(best, v, better);\n"
                                       "      position = mix(position, vec4(float(fy * {} + fx)), better);\n",
                                       p->filter_w));
  g.code.body += glsl::Activation(p->activation, "best") + "  position += vec4(0.1);\n" +
                 glsl::MaskPadding(out->channels, "best") + glsl::MaskPadding(out->channels, "position") +
                 "  out0_set(out_index, best);\n  out1_set(out_index, position);\n";
  return g;
}

// Each output pixel takes the input that MediaPipe's scatter writes there
// last: candidates in the CPU's order (input rows, then columns, ascending).
absl::StatusOr<GeneratedShader> MaxUnpooling(const NodeContext& ctx) {
  auto p = ReadPoolParams(ctx);
  if (!p.ok()) return p.status();
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const int pad_h = std::max(0, ((in->height - 1) * p->stride_h + p->filter_h - out->height) / 2);
  const int pad_w = std::max(0, ((in->width - 1) * p->stride_w + p->filter_w - out->width) / 2);
  GeneratedShader g = StartShader(ctx, *out, {0, 1});
  g.code.body += fmt::format(
      "  vec4 value = vec4(0.0);\n"
      "  for (int ky = {fh} - 1; ky >= 0; --ky) {{\n"
      "    int ty = y + {ph} - ky;\n"
      "    if (ty < 0 || ty % {sh} != 0 || ty / {sh} >= {ih}) continue;\n"
      "    int iy = ty / {sh};\n"
      "    for (int kx = {fw} - 1; kx >= 0; --kx) {{\n"
      "      int tx = x + {pw} - kx;\n"
      "      if (tx < 0 || tx % {sw} != 0 || tx / {sw} >= {iw}) continue;\n"
      "      int ix = tx / {sw};\n"
      "      highp vec4 v = {value};\n"
      "      highp vec4 f = {index};\n"
      "      for (int k = 0; k < 4; ++k) {{\n"
      "        if (!(f[k] > -1e9 && f[k] < 1e9)) continue;\n"
      "        int n = int(f[k]);\n"
      "        int q = n >= 0 ? n / {fw} : -((-n) / {fw});\n"  // C++'s truncating division
      "        if (q == ky && n - q * {fw} == kx) value[k] = v[k];\n"
      "      }}\n"
      "    }}\n"
      "  }}\n",
      fmt::arg("fh", p->filter_h), fmt::arg("fw", p->filter_w), fmt::arg("ph", pad_h), fmt::arg("pw", pad_w),
      fmt::arg("sh", p->stride_h), fmt::arg("sw", p->stride_w), fmt::arg("ih", in->height), fmt::arg("iw", in->width),
      fmt::arg("value", glsl::Read("in0", *in, "b", "s", "iy", "ix")),
      fmt::arg("index", glsl::Read("in1", *in, "b", "s", "iy", "ix")));
  return g;
}

}  // namespace

void AddPoolGenerators(Generators& g) {
  g.builtin[OpKind::kMaxPool2d] = Pool2d;
  g.builtin[OpKind::kAveragePool2d] = Pool2d;
  g.custom["MaxPoolingWithArgmax2D"] = MaxPoolingWithArgmax;
  g.custom["MaxUnpooling2D"] = MaxUnpooling;
}

}  // namespace mgd::shaders
