// MAX_POOL_2D and AVERAGE_POOL_2D: TFLite's window arithmetic
// (model/geometry.h), averages over the window's part inside the input.
// Of int8 or uint8 tensors as TFLite's integer kernels: the output keeps the
// input's parameters, an average is of the stored values, rounded half away
// from zero, and the fused activation clamps in the integers.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/geometry.h"
#include "model/status_macros.h"
#include "ops/pool/pool.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::Pool2DOptions>();
  if (!options.ok()) return options.status();
  PoolAttributes a;
  if (const tflite::Pool2DOptions* o = *options) {
    a.padding = PaddingFromTfl(o->padding());
    a.stride_w = o->stride_w();
    a.stride_h = o->stride_h();
    a.filter_w = o->filter_width();
    a.filter_h = o->filter_height();
    a.activation = ActivationFromTfl(o->fused_activation_function());
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<PoolAttributes>(node.attributes);
  file.Set(tflite::CreatePool2DOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h, a.filter_w, a.filter_h,
                                       ToTfl(a.activation)));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  const auto& a = AttributesOf<PoolAttributes>(c.node().attributes);
  MGD_RETURN_IF_ERROR(c.Positive("stride_w", a.stride_w));
  MGD_RETURN_IF_ERROR(c.Positive("stride_h", a.stride_h));
  MGD_RETURN_IF_ERROR(c.Positive("filter_width", a.filter_w));
  MGD_RETURN_IF_ERROR(c.Positive("filter_height", a.filter_h));
  MGD_RETURN_IF_ERROR(c.ActivationOk(a.activation));
  MGD_RETURN_IF_ERROR(quantized::FloatOr8Bit(c));
  MGD_RETURN_IF_ERROR(quantized::KeepsQuantization(c));
  return c.InputRank(0, 4);
}

class Pool2dKernel : public Kernel {
 public:
  explicit Pool2dKernel(bool max) : max_(max) {}

  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<PoolAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const Window wy = WindowAlong(a_.padding, x.dim(1), a_.filter_h, a_.stride_h, 1);
    const Window wx = WindowAlong(a_.padding, x.dim(2), a_.filter_w, a_.stride_w, 1);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, x.dim(3)}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    if (quantized::Is8Bit(x.type)) {
      MGD_ASSIGN_OR_RETURN(const quantized::Params out, quantized::PerTensor(ctx, ctx.out(0)));
      range_ = quantized::ActivationRangeOf(a_.activation, x.type, out);
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    if (quantized::Is8Bit(x.type)) return Invoke8Bit(x, y);
    const int c = x.dim(3);
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    std::vector<double> acc(static_cast<size_t>(c));
    ForEachWindow(x, y, [&](const Window2d& w, int64_t at) {
      std::fill(acc.begin(), acc.end(), max_ ? -std::numeric_limits<double>::infinity() : 0.0);
      w.ForEachPixel([&](int64_t pixel) {
        for (int ch = 0; ch < c; ++ch) {
          double& v = acc[static_cast<size_t>(ch)];
          v = max_ ? MaxKeepingNan(v, static_cast<double>(xd[pixel + ch])) : v + xd[pixel + ch];
        }
      });
      // TFLite averages over the window's elements inside the input only.
      const int64_t count = w.count();
      for (int ch = 0; ch < c; ++ch) {
        const double v = acc[static_cast<size_t>(ch)];
        yd[at + ch] = act.Apply(static_cast<float>(max_ ? v : v / static_cast<double>(count)));
      }
    });
    return absl::OkStatus();
  }

 private:
  // reference_integer_ops::MaxPool and AveragePool: the stored values' max,
  // or their sum over the window's part inside the input divided with
  // rounding half away from zero.
  absl::Status Invoke8Bit(const TensorRef& x, const TensorRef& y) const {
    const int c = x.dim(3);
    std::vector<int64_t> acc(static_cast<size_t>(c));  // int64: a window's sum of any size
    ForEachWindow(x, y, [&](const Window2d& w, int64_t at) {
      std::fill(acc.begin(), acc.end(), max_ ? quantized::Lowest(x.type) : 0);
      w.ForEachPixel([&](int64_t pixel) {
        for (int ch = 0; ch < c; ++ch) {
          int64_t& v = acc[static_cast<size_t>(ch)];
          const int64_t q = quantized::Read(x, pixel + ch);
          v = max_ ? std::max(v, q) : v + q;
        }
      });
      const int64_t count = w.count();
      for (int ch = 0; ch < c; ++ch) {
        int64_t v = acc[static_cast<size_t>(ch)];
        if (!max_) v = v > 0 ? (v + count / 2) / count : (v - count / 2) / count;
        quantized::Write(y, at + ch, static_cast<int32_t>(std::clamp<int64_t>(v, range_.lo, range_.hi)));
      }
    });
    return absl::OkStatus();
  }

  // An output pixel's window: its rows [y0, y1) and columns [x0, x1) inside
  // the input, in batch b.
  struct Window2d {
    int b, y0, y1, x0, x1, ih, iw, c;
    int64_t count() const { return std::max<int64_t>(1, int64_t{y1 - y0} * (x1 - x0)); }
    // f(offset of pixel's first channel) for each input pixel in it.
    template <typename F>
    void ForEachPixel(F f) const {
      for (int iy = y0; iy < y1; ++iy) {
        for (int ix = x0; ix < x1; ++ix) f(((static_cast<int64_t>(b) * ih + iy) * iw + ix) * c);
      }
    }
  };

  // f(window, offset of the output pixel's first channel) for each output
  // pixel, in TFLite's window arithmetic.
  template <typename F>
  void ForEachWindow(const TensorRef& x, const TensorRef& y, F f) const {
    const int ih = x.dim(1), iw = x.dim(2), c = x.dim(3), oh = y.dim(1), ow = y.dim(2);
    for (int b = 0; b < x.dim(0); ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const Window2d w{b,
                           std::max(0, oy * a_.stride_h - pad_h_),
                           std::min(ih, oy * a_.stride_h - pad_h_ + a_.filter_h),
                           std::max(0, ox * a_.stride_w - pad_w_),
                           std::min(iw, ox * a_.stride_w - pad_w_ + a_.filter_w),
                           ih,
                           iw,
                           c};
          f(w, ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c);
        }
      }
    }
  }

  bool max_;
  PoolAttributes a_;
  int pad_h_ = 0, pad_w_ = 0;
  quantized::IntRange range_{0, 0};  // of an 8-bit output
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

// Large windows over few outputs (a global average pool: selfie_segmentation
// spent 2.1 of its 3.7 ms of H200 GPU time in one, 16384 values summed by
// each of 4 invocations; the classifiers' 7x7 ones took 16 us with one
// invocation walking 49 values per output): a warp's worth of invocations
// or more share each output's window (four values or more each where the
// window allows) and combine their partial results through shared memory,
// as a tree. Up to kMaxInvocations, or as many as the device's table gives
// a squeeze-and-excitation gate (ctx.gate_invocations) within shared memory:
// on the H100 selfie's 128 x 128 x 16 pool, 4 workgroups, waited on 32
// rounds of loads in each of 128 invocations.
constexpr int kMinPoolThreads = 32;  // a warp on most GPUs
constexpr int kPartialBytes = 16 + 4;  // an invocation's partial sum and count

int PoolThreads(const NodeContext& ctx, const PoolAttributes& p) {
  const int area = p.filter_h * p.filter_w;
  const int most = std::max(kMaxInvocations, WithinSharedMemory(ctx.gate_invocations, [](int n) { return n * kPartialBytes; }));
  int threads = kMinPoolThreads;
  while (threads * 2 <= most && threads * 8 <= area) threads *= 2;
  return threads;
}

bool SplitPoolPays(const NodeContext& ctx, const layout::Bhwc& out, const PoolAttributes& p) {
  const int64_t outputs = static_cast<int64_t>(out.batch) * out.height * out.width * out.slices();
  return ctx.workgroup_reduction && outputs <= 8192 && p.filter_h * p.filter_w >= kMinPoolThreads;
}

// A window's numbers, declared in `params`: filter, stride, TFLite's padding
// (over the input with a fused PAD's margins), the fused margins and the
// input's size.
struct WindowNames {
  std::string fh, fw, sh, sw, ph, pw, PH, PW, top, left, ih, iw;
};

WindowNames DeclareWindow(ShaderParams& params, const NodeContext& ctx, const layout::Bhwc& in, const PoolAttributes& p) {
  const int padded_h = in.height + ctx.pad.top + ctx.pad.bottom;
  const int padded_w = in.width + ctx.pad.left + ctx.pad.right;
  return {params.Int("filter_h", p.filter_h),
          params.Int("filter_w", p.filter_w),
          params.Int("stride_h", p.stride_h),
          params.Int("stride_w", p.stride_w),
          params.Int("pad_h", WindowAlong(p.padding, padded_h, p.filter_h, p.stride_h, 1).pad),
          params.Int("pad_w", WindowAlong(p.padding, padded_w, p.filter_w, p.stride_w, 1).pad),
          params.Int("padded_h", padded_h),
          params.Int("padded_w", padded_w),
          params.Int("fused_top", ctx.pad.top),
          params.Int("fused_left", ctx.pad.left),
          params.Int("in0_h", in.height),
          params.Int("in0_w", in.width)};
}

absl::StatusOr<GeneratedShader> SplitPool2d(const NodeContext& ctx, const layout::Bhwc& in, const layout::Bhwc& out,
                                            const PoolAttributes& p) {
  const bool is_max = ctx.node->op == OpKind::kMaxPool2d;
  GeneratedShader g = StartShader(ctx, out, {0});
  const int n = out.batch * out.height * out.width * out.slices();
  const int threads = PoolThreads(ctx, p);
  g.code.workgroup = {static_cast<uint32_t>(threads), 1, 1};
  g.groups = {static_cast<uint32_t>(n), 1, 1};
  g.code.shared = fmt::format("shared highp vec4 partial[{0}];\nshared int partial_count[{0}];\n", threads);
  g.prologue = fmt::format(
      "  int t = int(gl_LocalInvocationID.x);\n"
      "  int out_index = int(gl_WorkGroupID.x);\n"
      "  int x = out_index % {W}, y = (out_index / {W}) % {H}, z = out_index / ({W} * {H});\n"
      "{bs}",
      fmt::arg("W", g.code.params.Int("out_w", out.width)), fmt::arg("H", g.code.params.Int("out_h", out.height)),
      fmt::arg("bs", glsl::BatchAndSlice(g.code.params, out)));
  // The window as one range of positions, dealt to the invocations in turn.
  const WindowNames w = DeclareWindow(g.code.params, ctx, in, p);
  // Four positions per turn, each into a sum of its own, so that four
  // loads are in flight at once (one sum waits on each load in turn: on the
  // H100, selfie's 128 x 128 x 16 average pool took 37 us).
  std::string take;
  for (int j = 0; j < 4; ++j) {
    take += fmt::format(
        "    {{{{\n"
        "      int k = k0 + {j} * {{T}}, fy = k / {{fw}}, fx = k - fy * {{fw}};\n"
        "      int py = y * {{sh}} - {{ph}} + fy, px = x * {{sw}} - {{pw}} + fx;\n"
        "      if (k < {{area}} && py >= 0 && py < {{PH}} && px >= 0 && px < {{PW}}) {{{{\n"
        "        int iy = py - {{top}}, ix = px - {{left}};\n"
        "        vec4 v = (iy >= 0 && iy < {{ih}} && ix >= 0 && ix < {{iw}}) ? vec4({{read}}) : vec4(0.0);\n"
        "        acc{j} = {combine};\n"
        "        ++count;\n"
        "      }}}}\n"
        "    }}}}\n",
        fmt::arg("j", j), fmt::arg("combine", is_max ? glsl::MaxKeepingNan("acc" + std::to_string(j), "v") : fmt::format("acc{} + v", j)));
  }
  g.code.body += fmt::format(
      fmt::runtime("  highp vec4 acc0 = vec4({init}), acc1 = acc0, acc2 = acc0, acc3 = acc0;\n"
                   "  int count = 0;\n"
                   "  MGD_LOOP for (int k0 = t; k0 < {area}; k0 += 4 * {T}) {{\n" +
                   take +
                   "  }}\n"
                   "  highp vec4 acc01 = {combine01}, acc23 = {combine23};\n"
                   "  highp vec4 acc = {combine_all};\n"
                   "  partial[t] = acc;\n"
                   "  partial_count[t] = count;\n"
                   "  MGD_LOOP for (int k = {T} / 2; k > 0; k /= 2) {{\n"
                   "    memoryBarrierShared(); barrier();\n"
                   "    if (t < k) {{\n"
                   "      partial[t] = {combine_k};\n"
                   "      partial_count[t] += partial_count[t + k];\n"
                   "    }}\n"
                   "  }}\n"
                   "  memoryBarrierShared(); barrier();\n"
                   "  if (t != 0) return;\n"
                   "  acc = partial[0];\n"),
      fmt::arg("init", is_max ? glsl::Float(-std::numeric_limits<float>::infinity()) : "0.0"),
      fmt::arg("area", g.code.params.Int("area", p.filter_h * p.filter_w)), fmt::arg("T", threads),
      fmt::arg("fw", w.fw), fmt::arg("sh", w.sh), fmt::arg("sw", w.sw), fmt::arg("ph", w.ph), fmt::arg("pw", w.pw),
      fmt::arg("PH", w.PH), fmt::arg("PW", w.PW), fmt::arg("top", w.top), fmt::arg("left", w.left), fmt::arg("ih", w.ih),
      fmt::arg("iw", w.iw), fmt::arg("read", glsl::Read(g.code.params, "in0", in, "b", "s", "iy", "ix")),
      fmt::arg("combine01", is_max ? glsl::MaxKeepingNan("acc0", "acc1") : "acc0 + acc1"),
      fmt::arg("combine23", is_max ? glsl::MaxKeepingNan("acc2", "acc3") : "acc2 + acc3"),
      fmt::arg("combine_all", is_max ? glsl::MaxKeepingNan("acc01", "acc23") : "acc01 + acc23"),
      fmt::arg("combine_k", is_max ? glsl::MaxKeepingNan("partial[t]", "partial[t + k]") : "partial[t] + partial[t + k]"));
  if (!is_max) g.code.body += "  acc = acc / float(max(partial_count[0], 1));\n";
  g.code.body += glsl::Activation(p.activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

absl::StatusOr<GeneratedShader> Pool2d(const NodeContext& ctx) {
  const auto& a = AttributesOf<PoolAttributes>(ctx.node->attributes);
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  if (SplitPoolPays(ctx, *out, a)) return SplitPool2d(ctx, *in, *out, a);
  GeneratedShader g = StartShader(ctx, *out, {0});
  // Sums of whole windows stay fp32 even in fp16: a half float holds 11
  // bits, and a window of hundreds of values would lose most of them.
  const std::string acc = std::string(ctx.node->op == OpKind::kMaxPool2d ? "" : "highp ") + "vec4 acc";
  if (ctx.node->op == OpKind::kMaxPool2d) {
    // From -Inf, and NaN wins (as TFLite's max pools): a window of -Inf is
    // -Inf, one with a NaN is NaN.
    g.code.body += "  " + acc + " = vec4(" + glsl::Float(-std::numeric_limits<float>::infinity()) + ");\n" +
                   PoolLoops(g.code.params, ctx, *in, a, "      acc = " + glsl::MaxKeepingNan("acc", "v") + ";\n");
  } else {
    g.code.body += "  " + acc + " = vec4(0.0);\n  int count = 0;\n" +
                   PoolLoops(g.code.params, ctx, *in, a, "      acc += v;\n      ++count;\n") +
                   "  acc = acc / float(max(count, 1));\n";
  }
  g.code.body += glsl::Activation(a.activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

}  // namespace

std::string PoolLoops(shaders::ShaderParams& params, const shaders::NodeContext& ctx, const layout::Bhwc& in,
                      const PoolAttributes& p, const std::string& inner) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const WindowNames w = DeclareWindow(params, ctx, in, p);
  return fmt::format(
      "  MGD_LOOP for (int fy = 0; fy < {fh}; ++fy) {{\n"
      "    int py = y * {sh} - {ph} + fy;\n"
      "    if (py < 0 || py >= {PH}) continue;\n"
      "    int iy = py - {top};\n"
      "    MGD_LOOP for (int fx = 0; fx < {fw}; ++fx) {{\n"
      "      int px = x * {sw} - {pw} + fx;\n"
      "      if (px < 0 || px >= {PW}) continue;\n"
      "      int ix = px - {left};\n"
      "      vec4 v = (iy >= 0 && iy < {ih} && ix >= 0 && ix < {iw}) ? vec4({read}) : vec4(0.0);\n"
      "{inner}"
      "    }}\n"
      "  }}\n",
      fmt::arg("fh", w.fh), fmt::arg("fw", w.fw), fmt::arg("sh", w.sh), fmt::arg("sw", w.sw), fmt::arg("ph", w.ph),
      fmt::arg("pw", w.pw), fmt::arg("PH", w.PH), fmt::arg("PW", w.PW), fmt::arg("top", w.top), fmt::arg("left", w.left),
      fmt::arg("ih", w.ih), fmt::arg("iw", w.iw), fmt::arg("read", glsl::Read(params, "in0", in, "b", "s", "iy", "ix")),
      fmt::arg("inner", inner));
}

std::optional<Activation> GlobalAverage(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1) return std::nullopt;
  const Shape& in = graph.tensors[static_cast<size_t>(node.inputs[0])].shape;
  const Shape& out = graph.tensors[static_cast<size_t>(node.outputs[0])].shape;
  if (in.size() != 4 || out != Shape{in[0], 1, 1, in[3]}) return std::nullopt;
  if (node.op == OpKind::kAveragePool2d) {
    const auto& a = AttributesOf<PoolAttributes>(node.attributes);
    if (a.filter_h != in[1] || a.filter_w != in[2]) return std::nullopt;
    return a.activation;
  }
  if (node.op != OpKind::kMean || node.inputs.size() != 2) return std::nullopt;
  const Tensor& axes = graph.tensors[static_cast<size_t>(node.inputs[1])];
  if (!axes.is_constant) return std::nullopt;
  std::set<int64_t> reduced;
  for (int64_t axis : ConstantInts(axes)) reduced.insert(axis < 0 ? axis + 4 : axis);
  if (reduced != std::set<int64_t>{1, 2}) return std::nullopt;
  return Activation::kNone;
}

std::vector<OpDefinition> PoolOps() {
  return {
      {.op = OpKind::kMaxPool2d,
       .decode = Decode,
       .encode = Encode,
       .validate = Validate,
       .cpu_kernel = MakeKernel<Pool2dKernel, true>,
       .gpu = {Pool2d},
       .quantize = {.output = QuantizeRule::Output::kInput, .moves_values = ClampsOnTheGrid<PoolAttributes>}},
      {.op = OpKind::kAveragePool2d,
       .decode = Decode,
       .encode = Encode,
       .validate = Validate,
       .cpu_kernel = MakeKernel<Pool2dKernel, false>,
       .gpu = {Pool2d},
       .quantize = {.output = QuantizeRule::Output::kInput}},
  };
}

}  // namespace mgd::ops
