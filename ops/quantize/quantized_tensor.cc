#include "ops/quantize/quantized_tensor.h"

#include <fmt/format.h>

#include <algorithm>

#include "ops/quantize/fixed_point.h"

namespace mgd::ops::quantized {

absl::StatusOr<Params> PerTensor(const KernelContext& ctx, const TensorRef& t) {
  const Tensor& tensor = ctx.graph->tensors[static_cast<size_t>(t.index)];
  if (!tensor.quantization.has_value() || tensor.quantization->scale.size() != 1) {
    return ctx.Error(fmt::format("{} tensor '{}' needs one scale and zero point (per tensor)", DataTypeName(t.type),
                                 tensor.name));
  }
  return Params{tensor.quantization->scale[0], static_cast<int32_t>(tensor.quantization->zero_point[0])};
}

IntRange ActivationRangeOf(Activation a, DataType type, const Params& out) {
  const int32_t lo = Lowest(type), hi = Highest(type);
  auto q = [&](float v) { return out.zero_point + RoundHalfAwayFromZero(v / out.scale); };
  switch (a) {
    case Activation::kRelu: return {std::max(lo, out.zero_point), hi};
    case Activation::kRelu6: return {std::max(lo, out.zero_point), std::min(hi, q(6.0f))};
    case Activation::kReluN1To1: return {std::max(lo, q(-1.0f)), std::min(hi, q(1.0f))};
    default: return {lo, hi};
  }
}

}  // namespace mgd::ops::quantized
