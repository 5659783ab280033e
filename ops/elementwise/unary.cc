// The unary elementwise ops: RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH,
// HARD_SWISH, EXP, RSQRT, ELU, LEAKY_RELU, GELU, and the math of TFLite's
// elementwise kernels: ABS, NEG, SQUARE, SQRT, LOG, SIN, COS, FLOOR, CEIL
// and SIGN (TFLite's results for any float: LOG and SQRT of negatives are
// NaN, LOG(0) is -inf, SIGN(0) is 0). Of int8 or uint8 tensors, each op is
// a table of its 256 results: as TFLite's LOGISTIC and TANH are
// (PopulateLookupTable), the input dequantized, the function in float, the
// result quantized to the output's parameters; HARD_SWISH and the RELUs as
// TFLite's integer kernels compute them, which LiteRT runs.
#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <limits>
#include <optional>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
#include "ops/quantize/fixed_point.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  return quantized::FloatOr8Bit(c);
}

absl::StatusOr<Attributes> DecodeLeakyRelu(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::LeakyReluOptions>();
  if (!options.ok()) return options.status();
  return LeakyReluAttributes{*options != nullptr ? (*options)->alpha() : 0.2f};
}

void EncodeLeakyRelu(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateLeakyReluOptions(file.builder, AttributesOf<LeakyReluAttributes>(node.attributes).alpha));
}

absl::StatusOr<Attributes> DecodeGelu(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::GeluOptions>();
  if (!options.ok()) return options.status();
  return GeluAttributes{*options != nullptr && (*options)->approximate()};
}

void EncodeGelu(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateGeluOptions(file.builder, AttributesOf<GeluAttributes>(node.attributes).approximate));
}

// HardSwishOptions is an empty table; it is written for TFLite's sake.
void EncodeHardSwish(const Node&, EncodeContext& file) { file.Set(tflite::CreateHardSwishOptions(file.builder)); }

// Each op's function of one value and its parameter (UnaryParameter).
float Relu(float v, float) { return std::max(v, 0.0f); }
float Relu6(float v, float) { return std::min(std::max(v, 0.0f), 6.0f); }
float ReluN1To1(float v, float) { return std::min(std::max(v, -1.0f), 1.0f); }
float Logistic(float v, float) { return 1.0f / (1.0f + std::exp(-v)); }
float Tanh(float v, float) { return std::tanh(v); }
// x * relu6(x + 3) / 6, evaluated as TFLite's CPU path (XNNPACK) does,
// clamp(x / 6 + 1/2, 0, 1) * x, so results match it bit for bit.
float HardSwish(float v, float) { return std::min(std::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f) * v; }
float Exp(float v, float) { return std::exp(v); }
float Rsqrt(float v, float) { return 1.0f / std::sqrt(v); }
float Elu(float v, float) { return v < 0.0f ? std::expm1(v) : v; }
float LeakyRelu(float v, float alpha) { return v >= 0.0f ? v : alpha * v; }
// TFLite's forms: erfc is more exact than 1 + erf for negative x.
float Gelu(float v, float approximate) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  if (approximate != 0.0f) return 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
  return 0.5f * v * std::erfc(v * -0.7071067811865476f);
}
float Abs(float v, float) { return std::fabs(v); }
float Neg(float v, float) { return -v; }
float Square(float v, float) { return v * v; }
float Sqrt(float v, float) { return std::sqrt(v); }
float Log(float v, float) { return std::log(v); }
float Sin(float v, float) { return std::sin(v); }
float Cos(float v, float) { return std::cos(v); }
float Floor(float v, float) { return std::floor(v); }
float Ceil(float v, float) { return std::ceil(v); }
float Sign(float v, float) { return static_cast<float>((v > 0.0f) - (v < 0.0f)); }

using UnaryFunction = float (*)(float, float);

// An op's 8-bit result for one stored value where LiteRT does not compute
// the float function's table (UnaryKernel's default): its TFLite kernel's
// arithmetic, or nullopt where TFLite would refuse the parameters (the table
// then).
using QuantizedFunction = std::optional<int32_t> (*)(int32_t q, const quantized::Params& in,
                                                     const quantized::Params& out, DataType type);

// reference_ops::ReluX: the value requantized by in / out scale in fixed
// point, clamped to the activation's bounds rounded onto the output
// (roundf), for RELU (0, inf), RELU6 (0, 6) and RELU_N1_TO_1 (-1, 1).
template <int kLow, int kHigh>
std::optional<int32_t> ReluX(int32_t q, const quantized::Params& in, const quantized::Params& out, DataType type) {
  const quantized::Multiplier m = quantized::QuantizeMultiplier(static_cast<double>(in.scale) / out.scale);
  const int32_t lo = std::max(quantized::Lowest(type),
                              out.zero_point + static_cast<int32_t>(std::round(static_cast<float>(kLow) / out.scale)));
  const int32_t hi =
      kHigh == 0 ? quantized::Highest(type)
                 : std::min(quantized::Highest(type),
                            out.zero_point + static_cast<int32_t>(std::round(static_cast<float>(kHigh) / out.scale)));
  return std::clamp(out.zero_point + quantized::MultiplyByQuantizedMultiplier(q - in.zero_point, m), lo, hi);
}

// reference_ops::HardSwish of 8-bit tensors, in 16-bit fixed point: the
// input on a scale 128 times finer, once rescaled to the output's (before
// its shift) and once to a "relu-ish" factor in [0, 1], where 3.0 is 32768.
std::optional<int32_t> HardSwishFixedPoint(int32_t q, const quantized::Params& in, const quantized::Params& out,
                                           DataType type) {
  const float hires_scale = (1.0f / 128.0f) * in.scale;
  const quantized::Multiplier output = quantized::QuantizeMultiplier(hires_scale / out.scale);
  const quantized::Multiplier reluish = quantized::QuantizeMultiplier(hires_scale / (3.0f / 32768.0f));
  if (output.shift > 0) return std::nullopt;  // TFLite refuses such a layer
  // DownScaleInt32ToInt16Multiplier: the Q31 mantissas to Q15, rounded.
  auto q15 = [](int32_t m) {
    return m >= std::numeric_limits<int32_t>::max() - (1 << 15) ? std::numeric_limits<int16_t>::max()
                                                                 : static_cast<int16_t>((m + (1 << 15)) >> 16);
  };
  auto saturating_left_shift = [](int32_t v, int amount) {
    return static_cast<int16_t>(std::clamp<int64_t>(int64_t{v} * (int64_t{1} << amount), INT16_MIN, INT16_MAX));
  };
  const auto hires = static_cast<int16_t>((q - in.zero_point) * (1 << 7));
  const int16_t preshift = quantized::SaturatingRoundingDoublingHighMul(hires, q15(output.multiplier));
  int16_t relu = hires;
  if (reluish.shift > 0) relu = saturating_left_shift(relu, reluish.shift - 1);
  relu = quantized::SaturatingRoundingDoublingHighMul(relu, q15(reluish.multiplier));
  if (reluish.shift > 0) relu = saturating_left_shift(relu, 1);
  if (reluish.shift < 0) relu = static_cast<int16_t>(quantized::RoundingDivideByPOT(relu, -reluish.shift));
  relu = static_cast<int16_t>((relu + (1 << 15)) >> 1);
  const int16_t preshift_output = quantized::SaturatingDoublingHighMul(relu, preshift);
  const int32_t v = quantized::RoundingDivideByPOT(preshift_output, -output.shift) + out.zero_point;
  return std::clamp(v, quantized::Lowest(type), quantized::Highest(type));
}

// The function's parameter, read from the node's attributes: none (0),
// LEAKY_RELU's alpha, GELU's approximate flag (1 or 0).
using UnaryParameter = float (*)(const Attributes&);
float NoParameter(const Attributes&) { return 0.0f; }
float LeakyReluAlpha(const Attributes& a) { return AttributesOf<LeakyReluAttributes>(a).alpha; }
float GeluApproximate(const Attributes& a) { return AttributesOf<GeluAttributes>(a).approximate ? 1.0f : 0.0f; }

// The function is a template argument, so that the loop inlines it.
template <UnaryFunction kFunction, UnaryParameter kParameter, QuantizedFunction kQuantized>
class UnaryKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    parameter_ = kParameter(ctx.node->attributes);
    const TensorRef &x = ctx.in(0), &y = ctx.out(0);
    table_ = {};
    if (quantized::Is8Bit(x.type)) {
      MGD_ASSIGN_OR_RETURN(const quantized::Params in, quantized::PerTensor(ctx, x));
      MGD_ASSIGN_OR_RETURN(const quantized::Params out, quantized::PerTensor(ctx, y));
      const float parameter = parameter_;
      table_ = quantized::Table(x.type, [&](int32_t q) {
        if constexpr (kQuantized != nullptr) {
          if (const std::optional<int32_t> v = kQuantized(q, in, out, y.type)) return *v;
        }
        return quantized::Quantize(kFunction(quantized::Dequantize(q, in), parameter), out, y.type);
      });
    }
    return ctx.ExpectOutputShape(0, x.shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (!table_.empty()) {
      table_.Map(ctx.in(0), 0, ctx.out(0), 0, ctx.in(0).elements());
      return absl::OkStatus();
    }
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out(0).as<float>();
    const int64_t n = ctx.in(0).elements();
    const float parameter = parameter_;
    for (int64_t i = 0; i < n; ++i) y[i] = kFunction(x[i], parameter);
    return absl::OkStatus();
  }

 private:
  float parameter_ = 0.0f;
  quantized::Table table_;  // of an 8-bit input
};

// The quantizer's rules: the ops TFLite has int8 kernels for, LOGISTIC and
// TANH with its fixed output parameters; the others stay float in a
// quantized model.
constexpr QuantizeRule kCalibrated{.output = QuantizeRule::Output::kCalibrated};
constexpr QuantizeRule kProbability{.output = QuantizeRule::Output::kFixed, .scale = 1.0f / 256, .zero_point = -128};
constexpr QuantizeRule kSigned{.output = QuantizeRule::Output::kFixed, .scale = 1.0f / 128, .zero_point = 0};

template <UnaryFunction kFunction, UnaryParameter kParameter = NoParameter, QuantizedFunction kQuantized = nullptr>
OpDefinition Unary(OpKind op, QuantizeRule quantize = {},
                   absl::StatusOr<Attributes> (*decode)(const DecodeContext&) = nullptr,
                   void (*encode)(const Node&, EncodeContext&) = nullptr) {
  return {.op = op,
          .decode = decode,
          .encode = encode,
          .validate = Validate,
          .cpu_kernel = MakeKernel<UnaryKernel<kFunction, kParameter, kQuantized>>,
          .gpu = {ElementwiseShader},
          .elementwise = ElementwiseUpdateOf,
          .quantize = quantize};
}

// A clamp that a convolution's fused activation also computes.
OpDefinition AsActivation(OpDefinition definition, Activation activation) {
  definition.as_activation = activation;
  return definition;
}

}  // namespace

std::vector<OpDefinition> UnaryOps() {
  return {
      AsActivation(Unary<Relu, NoParameter, ReluX<0, 0>>(OpKind::kRelu, kCalibrated), Activation::kRelu),
      AsActivation(Unary<Relu6, NoParameter, ReluX<0, 6>>(OpKind::kRelu6, kCalibrated), Activation::kRelu6),
      AsActivation(Unary<ReluN1To1, NoParameter, ReluX<-1, 1>>(OpKind::kReluN1To1, kCalibrated),
                   Activation::kReluN1To1),
      Unary<Logistic>(OpKind::kLogistic, kProbability),
      Unary<Tanh>(OpKind::kTanh, kSigned),
      Unary<HardSwish, NoParameter, HardSwishFixedPoint>(OpKind::kHardSwish, kCalibrated, nullptr, EncodeHardSwish),
      Unary<Exp>(OpKind::kExp),
      Unary<Rsqrt>(OpKind::kRsqrt),
      Unary<Elu>(OpKind::kElu, kCalibrated),
      Unary<LeakyRelu, LeakyReluAlpha>(OpKind::kLeakyRelu, kCalibrated, DecodeLeakyRelu, EncodeLeakyRelu),
      Unary<Gelu, GeluApproximate>(OpKind::kGelu, {}, DecodeGelu, EncodeGelu),
      Unary<Abs>(OpKind::kAbs, kCalibrated),
      Unary<Neg>(OpKind::kNeg),
      Unary<Square>(OpKind::kSquare),
      Unary<Sqrt>(OpKind::kSqrt),
      Unary<Log>(OpKind::kLog),
      Unary<Sin>(OpKind::kSin),
      Unary<Cos>(OpKind::kCos),
      Unary<Floor>(OpKind::kFloor),
      Unary<Ceil>(OpKind::kCeil),
      Unary<Sign>(OpKind::kSign),
  };
}

}  // namespace mgd::ops
