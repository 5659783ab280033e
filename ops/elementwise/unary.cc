// The unary elementwise ops: RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH,
// HARD_SWISH, EXP, RSQRT, ELU, LEAKY_RELU, GELU, and the math of TFLite's
// elementwise kernels: ABS, NEG, SQUARE, SQRT, LOG, SIN, COS, FLOOR, CEIL
// and SIGN (TFLite's results for any float: LOG and SQRT of negatives are
// NaN, LOG(0) is -inf, SIGN(0) is 0). Of int8 or uint8 tensors, each op is
// a table of its 256 results, as TFLite's LOGISTIC and TANH are
// (PopulateLookupTable): the input dequantized, the function in float, the
// result quantized to the output's parameters.
#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
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

// The function's parameter, read from the node's attributes: none (0),
// LEAKY_RELU's alpha, GELU's approximate flag (1 or 0).
using UnaryParameter = float (*)(const Attributes&);
float NoParameter(const Attributes&) { return 0.0f; }
float LeakyReluAlpha(const Attributes& a) { return AttributesOf<LeakyReluAttributes>(a).alpha; }
float GeluApproximate(const Attributes& a) { return AttributesOf<GeluAttributes>(a).approximate ? 1.0f : 0.0f; }

// The function is a template argument, so that the loop inlines it.
template <UnaryFunction kFunction, UnaryParameter kParameter>
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

template <UnaryFunction kFunction, UnaryParameter kParameter = NoParameter>
OpDefinition Unary(OpKind op, QuantizeRule quantize = {},
                   absl::StatusOr<Attributes> (*decode)(const DecodeContext&) = nullptr,
                   void (*encode)(const Node&, EncodeContext&) = nullptr) {
  return {.op = op,
          .decode = decode,
          .encode = encode,
          .validate = Validate,
          .cpu_kernel = MakeKernel<UnaryKernel<kFunction, kParameter>>,
          .gpu = {ElementwiseShader},
          .elementwise = ElementwiseUpdateOf,
          .quantize = quantize};
}

}  // namespace

std::vector<OpDefinition> UnaryOps() {
  return {
      Unary<Relu>(OpKind::kRelu, kCalibrated),
      Unary<Relu6>(OpKind::kRelu6, kCalibrated),
      Unary<ReluN1To1>(OpKind::kReluN1To1, kCalibrated),
      Unary<Logistic>(OpKind::kLogistic, kProbability),
      Unary<Tanh>(OpKind::kTanh, kSigned),
      Unary<HardSwish>(OpKind::kHardSwish, kCalibrated, nullptr, EncodeHardSwish),
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
