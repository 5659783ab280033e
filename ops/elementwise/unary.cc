// The unary elementwise ops: RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH,
// HARD_SWISH, EXP, RSQRT, ELU and LEAKY_RELU.
#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
#include "ops/tflite_io.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  return c.OutputType(0, DataType::kFloat32);
}

absl::StatusOr<Attributes> DecodeLeakyRelu(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::LeakyReluOptions>();
  if (!options.ok()) return options.status();
  return LeakyReluAttributes{*options != nullptr ? (*options)->alpha() : 0.2f};
}

void EncodeLeakyRelu(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateLeakyReluOptions(file.builder, AttributesOf<LeakyReluAttributes>(node.attributes).alpha));
}

// HardSwishOptions is an empty table; it is written for TFLite's sake.
void EncodeHardSwish(const Node&, EncodeContext& file) { file.Set(tflite::CreateHardSwishOptions(file.builder)); }

class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(OpKind op) : op_(op) {}

  absl::Status Prepare(KernelContext& ctx) override {
    alpha_ = AttributesOf<LeakyReluAttributes>(ctx.node->attributes).alpha;
    return ctx.ExpectOutputShape(0, ctx.in(0).shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out(0).as<float>();
    const int64_t n = ctx.in(0).elements();
    const float alpha = alpha_;
    auto apply = [&](auto f) {
      for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
    };
    switch (op_) {
      case OpKind::kRelu: apply([](float v) { return std::max(v, 0.0f); }); break;
      case OpKind::kRelu6: apply([](float v) { return std::min(std::max(v, 0.0f), 6.0f); }); break;
      case OpKind::kReluN1To1: apply([](float v) { return std::min(std::max(v, -1.0f), 1.0f); }); break;
      case OpKind::kLogistic: apply([](float v) { return 1.0f / (1.0f + std::exp(-v)); }); break;
      case OpKind::kTanh: apply([](float v) { return std::tanh(v); }); break;
      case OpKind::kHardSwish:
        // x * relu6(x + 3) / 6, evaluated as TFLite's CPU path (XNNPACK) does,
        // clamp(x / 6 + 1/2, 0, 1) * x, so results match it bit for bit.
        apply([](float v) { return std::min(std::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f) * v; });
        break;
      case OpKind::kExp: apply([](float v) { return std::exp(v); }); break;
      case OpKind::kRsqrt: apply([](float v) { return 1.0f / std::sqrt(v); }); break;
      case OpKind::kElu: apply([](float v) { return v < 0.0f ? std::expm1(v) : v; }); break;
      case OpKind::kLeakyRelu: apply([alpha](float v) { return v >= 0.0f ? v : alpha * v; }); break;
      default: return ctx.Error("not a unary op");
    }
    return absl::OkStatus();
  }

 private:
  OpKind op_;
  float alpha_ = 0.2f;
};

std::unique_ptr<Kernel> MakeUnaryKernel(const Node& node) { return std::make_unique<UnaryKernel>(node.op); }

OpDefinition Unary(OpKind op, absl::StatusOr<Attributes> (*decode)(const DecodeContext&) = nullptr,
                   void (*encode)(const Node&, EncodeContext&) = nullptr) {
  return {.op = op,
          .decode = decode,
          .encode = encode,
          .validate = Validate,
          .cpu_kernel = MakeUnaryKernel,
          .gpu = {ElementwiseShader},
          .elementwise = ElementwiseUpdateOf};
}

}  // namespace

std::vector<OpDefinition> UnaryOps() {
  return {
      Unary(OpKind::kRelu),
      Unary(OpKind::kRelu6),
      Unary(OpKind::kReluN1To1),
      Unary(OpKind::kLogistic),
      Unary(OpKind::kTanh),
      Unary(OpKind::kHardSwish, nullptr, EncodeHardSwish),
      Unary(OpKind::kExp),
      Unary(OpKind::kRsqrt),
      Unary(OpKind::kElu),
      Unary(OpKind::kLeakyRelu, DecodeLeakyRelu, EncodeLeakyRelu),
  };
}

}  // namespace mgd::ops
