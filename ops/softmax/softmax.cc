// SOFTMAX over the last dimension. Of int8 or uint8 tensors as TFLite's
// default kernel (optimized_ops::Softmax with its lookup table): exp of each
// value's distance below the row's max from a 256-entry float table, the
// sum in float, each share rounded to the output's parameters.
#include "ops/softmax/softmax.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/status_macros.h"
#include "ops/quantize/fixed_point.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::SoftmaxOptions>();
  if (!options.ok()) return options.status();
  return SoftmaxAttributes{*options ? (*options)->beta() : 1.0f};
}

void Encode(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSoftmaxOptions(file.builder, AttributesOf<SoftmaxAttributes>(node.attributes).beta));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  return quantized::FloatOr8Bit(c);
}

class SoftmaxKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    beta_ = AttributesOf<SoftmaxAttributes>(ctx.node->attributes).beta;
    if (ctx.in(0).rank() < 1) return ctx.Error("input must have rank 1 or more");
    exp_below_max_.clear();
    if (quantized::Is8Bit(ctx.in(0).type)) {
      MGD_ASSIGN_OR_RETURN(const quantized::Params in, quantized::PerTensor(ctx, ctx.in(0)));
      MGD_ASSIGN_OR_RETURN(out_, quantized::PerTensor(ctx, ctx.out(0)));
      for (int d = 0; d < 256; ++d) exp_below_max_.push_back(std::exp(-in.scale * beta_ * static_cast<float>(d)));
    }
    return ctx.ExpectOutputShape(0, ctx.in(0).shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const int depth = x.shape.back();
    if (depth == 0) return absl::OkStatus();
    const int64_t rows = x.elements() / depth;
    if (!exp_below_max_.empty()) {
      Invoke8Bit(x, ctx.out(0), rows, depth);
      return absl::OkStatus();
    }
    const float* xd = x.as<float>();
    float* yd = ctx.out(0).as<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = xd + r * depth;
      float* yr = yd + r * depth;
      float max = xr[0];
      for (int i = 1; i < depth; ++i) max = std::max(max, xr[i]);
      double sum = 0.0;
      for (int i = 0; i < depth; ++i) {
        yr[i] = std::exp((xr[i] - max) * beta_);
        sum += yr[i];
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int i = 0; i < depth; ++i) yr[i] *= inv;
    }
    return absl::OkStatus();
  }

 private:
  void Invoke8Bit(const TensorRef& x, const TensorRef& y, int64_t rows, int depth) const {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at = r * depth;
      int32_t max = quantized::Lowest(x.type);
      for (int i = 0; i < depth; ++i) max = std::max(max, quantized::Read(x, at + i));
      auto exp_of = [&](int i) { return exp_below_max_[static_cast<size_t>(max - quantized::Read(x, at + i))]; };
      float sum = 0.0f;
      for (int i = 0; i < depth; ++i) sum += exp_of(i);
      const float inverse = 1.0f / (sum * out_.scale);
      for (int i = 0; i < depth; ++i) {
        const int64_t q = int64_t{quantized::RoundHalfAwayFromZero(exp_of(i) * inverse)} + out_.zero_point;
        quantized::Write(y, at + i, static_cast<int32_t>(std::clamp<int64_t>(q, quantized::Lowest(y.type),
                                                                             quantized::Highest(y.type))));
      }
    }
  }

  float beta_ = 1.0f;
  std::vector<float> exp_below_max_;  // of an 8-bit input: exp(-scale * beta * d) for d in [0, 256)
  quantized::Params out_;
};

// Softmax over channels. Few slices: each invocation recomputes its pixel's
// max and sum (padding lanes excluded) and writes its own slice. Many slices
// (a classifier's 1001 classes): one 64-wide workgroup per pixel shares the
// work and reduces in shared memory, instead of each of hundreds of
// invocations walking all slices twice.
absl::StatusOr<shaders::GeneratedShader> SoftmaxShader(const shaders::NodeContext& ctx) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const float beta = AttributesOf<SoftmaxAttributes>(ctx.node->attributes).beta;
  auto in = InputBhwc(ctx, 0);
  if (!in.ok()) return in.status();
  GeneratedShader g = StartShader(ctx, *in, {0});
  ShaderParams& params = g.code.params;
  const int live = in->channels % 4 == 0 ? 4 : in->channels % 4;
  const std::string last_mask = fmt::format("bvec4({}, {}, {}, {})", live > 0 ? "true" : "false",
                                            live > 1 ? "true" : "false", live > 2 ? "true" : "false",
                                            live > 3 ? "true" : "false");
  const std::string slices = params.Int("in0_s", in->slices()), scaled_by = params.Float("beta", beta);
  const std::string live_lanes = fmt::format("bvec4 live = is == {} - 1 ? {} : bvec4(true);\n", slices, last_mask);
  if (in->slices() < 16) {
    g.code.body += fmt::format(
        "  highp float m = -3.402823466e+38;\n"
        "  MGD_LOOP for (int is = 0; is < {S}; ++is) {{\n"
        "    vec4 v = {read};\n"
        "    {live}"
        "    MGD_LOOP for (int k = 0; k < 4; ++k) if (live[k]) m = max(m, v[k]);\n"
        "  }}\n"
        "  highp float sum = 0.0;\n"
        "  MGD_LOOP for (int is = 0; is < {S}; ++is) {{\n"
        "    vec4 v = {read};\n"
        "    {live}"
        "    MGD_LOOP for (int k = 0; k < 4; ++k) if (live[k]) sum += exp((v[k] - m) * {beta});\n"
        "  }}\n"
        "  vec4 value = exp(({own} - vec4(m)) * {beta}) / sum;\n",
        fmt::arg("S", slices), fmt::arg("read", glsl::Read(params, "in0", *in, "b", "is", "y", "x")),
        fmt::arg("live", live_lanes), fmt::arg("beta", scaled_by),
        fmt::arg("own", glsl::Read(params, "in0", *in, "b", "s", "y", "x")));
    return g;
  }
  constexpr int kThreads = 64;
  g.linkable = false;
  g.code.workgroup = {kThreads, 1, 1};
  g.groups = {1, static_cast<uint32_t>(in->width), static_cast<uint32_t>(in->batch * in->height)};
  // Each reduction has its own shared array: with one array reused, the sum
  // overwrote it while, on NVIDIA's GLES driver, the max was still being
  // read from it (barriers between notwithstanding), and rows came out
  // wrong at random (SoftmaxGpuTest.AttentionRowsInBatchesMatchTheCpu).
  auto reduce = [&](const char* partial, const char* op) {
    return fmt::format(
        "  {p}[t] = r;\n"
        "  memoryBarrierShared(); barrier();\n"
        "  MGD_LOOP for (int k = {T} / 2; k > 0; k /= 2) {{\n"
        "    if (t < k) {p}[t] = {op}({p}[t], {p}[t + k]);\n"
        "    memoryBarrierShared(); barrier();\n"
        "  }}\n"
        "  r = {p}[0];\n",
        fmt::arg("p", partial), fmt::arg("T", kThreads), fmt::arg("op", op));
  };
  g.code.body = fmt::format(
      "  int t = int(gl_LocalInvocationID.x), x = int(gl_WorkGroupID.y), z = int(gl_WorkGroupID.z);\n"
      "{by}"
      "  highp float r = -3.402823466e+38;\n"
      "  MGD_LOOP for (int is = t; is < {S}; is += {T}) {{\n"
      "    vec4 v = {read};\n"
      "    {live}"
      "    MGD_LOOP for (int k = 0; k < 4; ++k) if (live[k]) r = max(r, v[k]);\n"
      "  }}\n"
      "{reduce_max}"
      "  highp float m = r;\n"
      "  r = 0.0;\n"
      "  MGD_LOOP for (int is = t; is < {S}; is += {T}) {{\n"
      "    vec4 v = {read};\n"
      "    {live}"
      "    MGD_LOOP for (int k = 0; k < 4; ++k) if (live[k]) r += exp((v[k] - m) * {beta});\n"
      "  }}\n"
      "{reduce_sum}"
      "  MGD_LOOP for (int is = t; is < {S}; is += {T}) {{\n"
      "    vec4 v = exp(({read} - vec4(m)) * {beta}) / r;\n"
      "    {live}"
      "    out0_set({index}, mix(vec4(0.0), v, live));\n"
      "  }}\n",
      fmt::arg("by", in->batch == 1 ? "  int b = 0, y = z;\n"
                                    : fmt::format("  int b = z / {H}, y = z - b * {H};\n",
                                                  fmt::arg("H", params.Int("in0_h", in->height)))),
      fmt::arg("S", slices), fmt::arg("T", kThreads),
      fmt::arg("read", glsl::Read(params, "in0", *in, "b", "is", "y", "x")), fmt::arg("live", live_lanes),
      fmt::arg("beta", scaled_by), fmt::arg("reduce_max", reduce("partial_max", "max")),
      fmt::arg("reduce_sum", reduce("partial_sum", "mgd_add")), fmt::arg("index", glsl::Index(params, "out0", *in, "b", "is", "y", "x")));
  g.code.shared = fmt::format(
      "shared highp float partial_max[{0}];\nshared highp float partial_sum[{0}];\n"
      "highp float mgd_add(highp float a, highp float b) {{ return a + b; }}\n",
      kThreads);
  return g;
}

}  // namespace

std::vector<OpDefinition> SoftmaxOps() {
  return {{.op = OpKind::kSoftmax,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<SoftmaxKernel>,
           .gpu = {SoftmaxShader},
           .quantize = {.output = QuantizeRule::Output::kFixed, .scale = 1.0f / 256, .zero_point = -128}}};
}

}  // namespace mgd::ops
