// FAKE_QUANT (TFLite's FakeQuant, tensorflow's FakeQuantWithMinMaxArgs):
// min and max nudged so that 0 falls on the grid of 2^num_bits steps (one
// fewer with narrow_range), each value clamped to them and rounded to the
// nearest step, halves up. An elementwise op on the GPU, fused into its
// producer.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/quantize/quantize.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::FakeQuantOptions>();
  if (!options.ok()) return options.status();
  FakeQuantAttributes a;
  if (const tflite::FakeQuantOptions* o = *options) {
    a.min = o->min();
    a.max = o->max();
    a.num_bits = o->num_bits();
    a.narrow_range = o->narrow_range();
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<FakeQuantAttributes>(node.attributes);
  file.Set(tflite::CreateFakeQuantOptions(file.builder, a.min, a.max, a.num_bits, a.narrow_range));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  const auto& a = AttributesOf<FakeQuantAttributes>(c.node().attributes);
  if (a.num_bits < 2 || a.num_bits > 16) return c.Fail(fmt::format("field num_bits: {} is not in [2, 16]", a.num_bits));
  if (!(std::isfinite(a.min) && std::isfinite(a.max) && a.min < a.max)) {
    return c.Fail(fmt::format("fields min and max: [{}, {}] is not a finite range", a.min, a.max));
  }
  return c.OutputType(0, DataType::kFloat32);
}

class FakeQuantKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    grid_ = NudgedGrid(AttributesOf<FakeQuantAttributes>(ctx.node->attributes));
    return ctx.ExpectOutputShape(0, ctx.in(0).shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out(0).as<float>();
    const float inverse = 1.0f / grid_.scale;
    for (int64_t i = 0, n = ctx.in(0).elements(); i < n; ++i) {
      const float clamped = std::min(grid_.max, std::max(grid_.min, x[i]));
      y[i] = std::round((clamped - grid_.min) * inverse) * grid_.scale + grid_.min;
    }
    return absl::OkStatus();
  }

 private:
  FakeQuantGrid grid_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

// The update of `value` (fused into a producer), or of input 0 read at the
// output's place (a shader of its own).
absl::StatusOr<ElementwiseUpdate> FakeQuantUpdate(const NodeContext& ctx, int fused_input, const std::string& prefix) {
  ElementwiseUpdate u;
  std::string a = "value";
  if (fused_input != 0) {
    auto in = InputBhwc(ctx, 0);
    if (!in.ok()) return in.status();
    a = glsl::Read(u.params, prefix + "in0", *in, "b", "s", "y", "x");
    u.activation_inputs = {0};
  }
  const FakeQuantGrid grid = NudgedGrid(AttributesOf<FakeQuantAttributes>(ctx.node->attributes));
  const std::string lo = u.params.Float(prefix + "fq_min", grid.min), hi = u.params.Float(prefix + "fq_max", grid.max);
  const std::string step = u.params.Float(prefix + "fq_step", grid.scale);
  const std::string inverse = u.params.Float(prefix + "fq_inverse", 1.0f / grid.scale);
  // min / step, a whole number: the grid point is (steps above min + that)
  // x step, exact in fp16 but for the one rounding of the product (adding
  // min to the product instead would round at min's magnitude).
  const std::string offset = u.params.Float(prefix + "fq_offset", std::round(grid.min / grid.scale));
  // The clamped value is at or above min: floor(x + 0.5) rounds its halves
  // up, as std::round does for it.
  u.code = fmt::format(
      "  value = (floor((clamp({0}, vec4({1}), vec4({2})) - vec4({1})) * {3} + vec4(0.5)) + vec4({5})) * {4};\n", a, lo,
      hi, inverse, step, offset);
  return u;
}

absl::StatusOr<GeneratedShader> FakeQuantShader(const NodeContext& ctx) {
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return out.status();
  auto update = FakeQuantUpdate(ctx, -1, "");
  if (!update.ok()) return update.status();
  GeneratedShader g = StartShader(ctx, *out, update->activation_inputs);
  g.code.body += "  vec4 value = vec4(0.0);\n" + update->code;
  g.code.params.Append(update->params);
  return g;
}

}  // namespace

FakeQuantGrid NudgedGrid(const FakeQuantAttributes& a) {
  const float low = a.narrow_range ? 1.0f : 0.0f;
  const auto high = static_cast<float>((1 << a.num_bits) - 1);
  FakeQuantGrid g;
  g.scale = (a.max - a.min) / (high - low);
  const float zero_point_from_min = low - a.min / g.scale;
  const float zero_point = std::clamp(std::round(zero_point_from_min), low, high);
  g.min = (low - zero_point) * g.scale;
  g.max = (high - zero_point) * g.scale;
  return g;
}

std::vector<OpDefinition> FakeQuantOps() {
  return {{.op = OpKind::kFakeQuant,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<FakeQuantKernel>,
           .gpu = {FakeQuantShader},
           .elementwise = FakeQuantUpdate}};
}

}  // namespace mgd::ops
