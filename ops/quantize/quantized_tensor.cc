#include "ops/quantize/quantized_tensor.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "model/status_macros.h"
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

int32_t Quantize(float real, const Params& p, DataType type) {
  if (std::isnan(real)) return p.zero_point;
  const int64_t q = int64_t{RoundHalfAwayFromZero(real / p.scale)} + p.zero_point;
  return static_cast<int32_t>(std::clamp<int64_t>(q, Lowest(type), Highest(type)));
}

absl::Status FloatOr8Bit(const NodeChecker& c, size_t input) {
  MGD_RETURN_IF_ERROR(c.InputType(input, {DataType::kFloat32, DataType::kInt8, DataType::kUInt8}));
  return c.OutputType(0, c.In(input).type);
}

absl::Status KeepsQuantization(const NodeChecker& c, size_t input) {
  if (!Is8Bit(c.In(input).type)) return absl::OkStatus();
  const std::optional<Quantization>&in = c.In(input).quantization, &out = c.Out(0).quantization;
  auto text = [](const std::optional<Quantization>& q) {
    return q.has_value() ? fmt::format("scale {} and zero point {}", fmt::join(q->scale, ","),
                                       fmt::join(q->zero_point, ","))
                         : std::string("no quantization parameters");
  };
  if (in.has_value() && out.has_value() && in->scale == out->scale && in->zero_point == out->zero_point) {
    return absl::OkStatus();
  }
  return c.Fail(fmt::format("output 0 has {}, input {} {}: {} keeps an 8-bit tensor's parameters", text(out), input,
                            text(in), OpName(c.node().op)));
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
