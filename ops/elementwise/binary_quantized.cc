#include "ops/elementwise/binary_quantized.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
#include "ops/quantize/fixed_point.h"
#include "ops/quantize/quantized_tensor.h"

namespace mgd::ops {
namespace {

using quantized::Multiplier;
using quantized::MultiplyByQuantizedMultiplier;
using quantized::Params;

class QuantizedBinaryKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const OpKind op = ctx.node->op;
    const TensorRef &a = ctx.in(0), &b = ctx.in(1), &y = ctx.out(0);
    if (a.type != b.type || a.type != y.type) {
      return ctx.Error(fmt::format("inputs and output must have one type, not {}, {} and {}", DataTypeName(a.type),
                                   DataTypeName(b.type), DataTypeName(y.type)));
    }
    MGD_ASSIGN_OR_RETURN(a_, quantized::PerTensor(ctx, a));
    MGD_ASSIGN_OR_RETURN(b_, quantized::PerTensor(ctx, b));
    MGD_ASSIGN_OR_RETURN(const Params out, quantized::PerTensor(ctx, y));
    const Activation activation = AttributesOf<ElementwiseAttributes>(ctx.node->attributes).activation;
    if (activation == Activation::kTanh) return ctx.Error("a fused TANH on quantized tensors is not TFLite's");
    range_ = quantized::ActivationRangeOf(activation, y.type, out);
    out_zero_point_ = out.zero_point;
    mul_ = op == OpKind::kMul;
    subtract_ = op == OpKind::kSub;
    if (mul_) {
      output_ = quantized::QuantizeMultiplier(static_cast<double>(a_.scale) * b_.scale / out.scale);
      product_scale_ = a_.scale * b_.scale / out.scale;
      xnnpack_ = product_scale_ >= 0x1.0p-16f && product_scale_ < 0x1.0p+8f;
    } else {
      const double twice_max = 2.0 * std::max(a_.scale, b_.scale);
      a_multiplier_ = quantized::QuantizeMultiplier(a_.scale / twice_max);
      b_multiplier_ = quantized::QuantizeMultiplier(b_.scale / twice_max);
      output_ = quantized::QuantizeMultiplier(twice_max / ((1 << kLeftShift) * static_cast<double>(out.scale)));
      xnnpack_ = PrepareXnnpackAdd(a_.scale / out.scale, (subtract_ ? -b_.scale : b_.scale) / out.scale);
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef &a = ctx.in(0), &b = ctx.in(1), &y = ctx.out(0);
    if (xnnpack_) {
      InvokeXnnpack(a, b, y);
      return absl::OkStatus();
    }
    ForEachBroadcast(y.shape, {BroadcastStrides(a.shape, y.shape), BroadcastStrides(b.shape, y.shape)},
                     [&](int64_t i, const int64_t* o) {
      const int32_t p = quantized::Read(a, o[0]) - a_.zero_point, q = quantized::Read(b, o[1]) - b_.zero_point;
      int32_t v = 0;
      if (mul_) {
        v = MultiplyByQuantizedMultiplier(p * q, output_);
      } else {
        const int32_t sp = MultiplyByQuantizedMultiplier(p * (1 << kLeftShift), a_multiplier_);
        const int32_t sq = MultiplyByQuantizedMultiplier(q * (1 << kLeftShift), b_multiplier_);
        v = MultiplyByQuantizedMultiplier(subtract_ ? sp - sq : sp + sq, output_);
      }
      quantized::Write(y, i, std::clamp(v + out_zero_point_, range_.lo, range_.hi));
    });
    return absl::OkStatus();
  }

 private:
  // XNNPACK's ADD (qs8-vadd; SUB adds b of negated scale): each input's
  // scale over the output's as a multiplier of 21 bits at most, sharing one
  // shift, the rounding and the zero points folded into one bias. False
  // where XNNPACK refuses the scales.
  bool PrepareXnnpackAdd(float a_scale, float b_scale) {
    const float largest = std::max(std::fabs(a_scale), std::fabs(b_scale));
    if (!(std::fabs(a_scale) >= 0x1.0p-10f && std::fabs(b_scale) >= 0x1.0p-10f && largest < 0x1.0p+8f)) return false;
    shift_ = 20 - std::ilogb(largest);
    auto multiplier = [&](float s) {
      const auto m = static_cast<int32_t>(std::nearbyint(std::ldexp(std::fabs(s), shift_)));
      return std::signbit(s) ? -m : m;
    };
    a_add_ = multiplier(a_scale);
    b_add_ = multiplier(b_scale);
    bias_ = (1 << (shift_ - 1)) - a_add_ * a_.zero_point - b_add_ * b_.zero_point;
    return true;
  }

  void InvokeXnnpack(const TensorRef& a, const TensorRef& b, const TensorRef& y) const {
    ForEachBroadcast(y.shape, {BroadcastStrides(a.shape, y.shape), BroadcastStrides(b.shape, y.shape)},
                     [&](int64_t i, const int64_t* o) {
      const int32_t p = quantized::Read(a, o[0]), q = quantized::Read(b, o[1]);
      int32_t v = 0;
      if (mul_) {
        // qs8-vmul's fp32 requantization: rounded to nearest even.
        const float product = static_cast<float>((p - a_.zero_point) * (q - b_.zero_point)) * product_scale_;
        v = static_cast<int32_t>(std::nearbyint(std::clamp(product, static_cast<float>(range_.lo - out_zero_point_),
                                                           static_cast<float>(range_.hi - out_zero_point_))));
      } else {
        v = (bias_ + p * a_add_ + q * b_add_) >> shift_;  // arithmetic: rounds half up
      }
      quantized::Write(y, i, std::clamp(v + out_zero_point_, range_.lo, range_.hi));
    });
  }

  static constexpr int kLeftShift = 20;  // TFLite's headroom for 8-bit ADD and SUB
  Params a_, b_;
  Multiplier a_multiplier_, b_multiplier_, output_;
  int32_t out_zero_point_ = 0;
  quantized::IntRange range_{0, 0};
  bool mul_ = false, subtract_ = false;
  // XNNPACK's arithmetic (LiteRT's CPU path), where it takes the scales.
  bool xnnpack_ = false;
  float product_scale_ = 0.0f;
  int32_t a_add_ = 0, b_add_ = 0, bias_ = 0;
  int shift_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedBinary(KernelContext& ctx) {
  if (ctx.node->op != OpKind::kAdd && ctx.node->op != OpKind::kSub && ctx.node->op != OpKind::kMul) {
    return ctx.Error(fmt::format("{} of {} tensors is not supported (ADD, SUB and MUL are)", OpName(ctx.node->op),
                                 DataTypeName(ctx.in(0).type)));
  }
  auto kernel = std::make_unique<QuantizedBinaryKernel>();
  MGD_RETURN_IF_ERROR(kernel->Prepare(ctx));
  return kernel;
}

}  // namespace mgd::ops
