// FULLY_CONNECTED: weights [units, depth] over rows of `depth` input
// elements; on the GPU a 1x1 convolution when each pixel is a row; int8 and
// uint8 in conv_quantized.cc.
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "layout/weights.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_quantized.h"
#include "ops/conv/conv_shader.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::FullyConnectedOptions>();
  if (!options.ok()) return options.status();
  FullyConnectedAttributes a;
  if (const tflite::FullyConnectedOptions* o = *options) {
    if (o->weights_format() != tflite::FullyConnectedOptionsWeightsFormat_DEFAULT) {
      return file.Error("field weights_format: only DEFAULT is supported");
    }
    a.activation = ActivationFromTfl(o->fused_activation_function());
    a.keep_num_dims = o->keep_num_dims();
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<FullyConnectedAttributes>(node.attributes);
  file.Set(tflite::CreateFullyConnectedOptions(file.builder, ToTfl(a.activation),
                                               tflite::FullyConnectedOptionsWeightsFormat_DEFAULT, a.keep_num_dims));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 3, 1));
  MGD_RETURN_IF_ERROR(c.ActivationOk(AttributesOf<FullyConnectedAttributes>(c.node().attributes).activation));
  MGD_RETURN_IF_ERROR(c.InputRank(1, 2));
  if (c.In(0).shape.empty()) return c.Fail("input 0 is a scalar; it needs at least one dimension");
  return ValidateProductTypes(c);
}

class FullyConnectedKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<FullyConnectedAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int units = w.dim(0), depth = w.dim(1);
    if (depth <= 0 || x.elements() % depth != 0) {
      return ctx.Error(fmt::format("input {} does not split into rows of {} (weights {})",
                                   ShapeToString(x.shape), depth, ShapeToString(w.shape)));
    }
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, units));
    batches_ = static_cast<int>(x.elements() / depth);
    Shape expected;
    if (a_.keep_num_dims) {
      expected = x.shape;
      expected.back() = units;
    } else {
      expected = {batches_, units};
    }
    // TFLite converters also emit [units] or [1, units] shaped outputs: what
    // matters is the element count and the last dimension.
    const TensorRef& y = ctx.out(0);
    if (y.elements() != static_cast<int64_t>(batches_) * units || y.shape.empty() || y.shape.back() != units) {
      return ctx.ExpectOutputShape(0, expected);
    }
    quantized_.reset();
    if (x.type != DataType::kFloat32) {
      MGD_ASSIGN_OR_RETURN(quantized_, PrepareQuantizedFullyConnected(ctx, a_.activation, batches_));
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (quantized_ != nullptr) return quantized_->Invoke(ctx);
    const TensorRef& w = ctx.in(1);
    const int units = w.dim(0), depth = w.dim(1);
    const float* xd = ctx.in(0).as<float>();
    const float* wd = w.as<float>();
    const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
    float* yd = ctx.out(0).as<float>();
    const ActivationRange act = RangeOf(a_.activation);
    for (int b = 0; b < batches_; ++b) {
      const float* xr = xd + static_cast<int64_t>(b) * depth;
      for (int u = 0; u < units; ++u) {
        const float* wr = wd + static_cast<int64_t>(u) * depth;
        float sum = bias ? bias[u] : 0.0f;
        for (int k = 0; k < depth; ++k) sum += xr[k] * wr[k];
        yd[static_cast<int64_t>(b) * units + u] = act.Apply(sum);
      }
    }
    return absl::OkStatus();
  }

 private:
  FullyConnectedAttributes a_;
  std::unique_ptr<Kernel> quantized_;  // int8 and uint8 (conv_quantized.cc)
  int batches_ = 1;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> FullyConnected(const NodeContext& ctx) {
  const auto& a = AttributesOf<FullyConnectedAttributes>(ctx.node->attributes);
  if (absl::Status s = RequireConstant(ctx, 1, "the weights"); !s.ok()) return s;
  if (absl::Status s = RequireConstant(ctx, 2, "the bias"); !s.ok()) return s;
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const int units = ctx.input(1).shape[0], depth = ctx.input(1).shape[1];
  if (in->channels == depth && in->batch == out->batch && in->height == out->height && in->width == out->width) {
    // One row per pixel: a 1x1 convolution.
    return Conv(ctx, ConvGeometry{1, 1, 1, 1, 1, 1, 0, 0}, a.activation, *in, *out);
  }
  // Rows of `depth` consecutive BHWC elements (a flattening FC): gather each
  // input element by its flat index. Output row r is output pixel r.
  GeneratedShader g = StartConvShader(ctx, *out, 0);
  // As a 1x1 convolution over `depth` input channels: [os][is][i][o].
  g.constants = {PackUnlessSupportOnly(ctx, [&] {
    const std::vector<float> weights = ConstantFloats(ctx.input(1));  // [units][depth]
    return layout::ToConvWeightsO4I4(weights.data(), units, 1, 1, depth).values;
  })};
  const int depth_slices = (depth + 3) / 4;
  g.code.body += BiasInit(ctx, g, 2, out->channels);
  ShaderParams& params = g.code.params;
  g.code.body += fmt::format(
      "  int row = (b * {oh} + y) * {ow} + x;\n"
      "  MGD_LOOP for (int is = 0; is < {ds}; ++is) {{\n"
      "    vec4 v = vec4(0.0);\n"
      "    MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
      "      int d = is * 4 + k;\n"
      "      if (d >= {depth}) break;\n"
      "      int f = row * {depth} + d;\n"
      "      int c = f % {ic}, p = f / {ic};\n"
      "      int ix = p % {iw}, iy = (p / {iw}) % {ih}, ib = p / ({iw} * {ih});\n"
      "      v[k] = {read}[c % 4];\n"
      "    }}\n"
      "    int w = (s * {ds} + is) * 4;\n"
      "{mac}"
      "  }}\n",
      fmt::arg("oh", params.Int("out_h", out->height)), fmt::arg("ow", params.Int("out_w", out->width)),
      fmt::arg("ds", params.Int("depth_s", depth_slices)), fmt::arg("depth", params.Int("depth", depth)),
      fmt::arg("ic", params.Int("in0_c", in->channels)), fmt::arg("iw", params.Int("in0_w", in->width)),
      fmt::arg("ih", params.Int("in0_h", in->height)),
      fmt::arg("read", glsl::Read(params, "in0", *in, "ib", "c / 4", "iy", "ix")), fmt::arg("mac", MultiplyAccumulate("w", "v")));
  g.code.body += glsl::Activation(a.activation, "acc") + "  vec4 value = vec4(acc);\n";
  return g;
}

}  // namespace

std::vector<OpDefinition> FullyConnectedOps() {
  return {{.op = OpKind::kFullyConnected,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<FullyConnectedKernel>,
           .gpu = {FullyConnected},
           // Filters per tensor, as TFLite's converter writes them.
           .quantize = {.output = QuantizeRule::Output::kCalibrated, .filter = 1, .filter_axis = -1, .bias = 2}}};
}

}  // namespace mgd::ops
