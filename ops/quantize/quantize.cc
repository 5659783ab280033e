#include "ops/quantize/quantize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/quantize/fixed_point.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"

namespace mgd::ops {
namespace {

using quantized::Is8Bit;

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32, DataType::kInt8, DataType::kUInt8}));
  const Tensor& out = c.Out(0);
  if (!Is8Bit(out.type)) {
    return c.Fail(fmt::format("output 0 has type {}, expected int8 or uint8", DataTypeName(out.type)));
  }
  if (!out.quantization.has_value()) return c.Fail("output 0 has no quantization parameters");
  if (Is8Bit(c.In(0).type)) {
    const Tensor& in = c.In(0);
    if (!in.quantization.has_value()) return c.Fail("input 0 is quantized but has no quantization parameters");
    if (in.quantization->scale.size() != 1 || out.quantization->scale.size() != 1) {
      return c.Fail("requantization is per tensor only: input 0 and output 0 need one scale each");
    }
  }
  if (c.In(0).shape != out.shape) {
    return c.Fail(fmt::format("output 0 has shape {}, expected the input's {}", ShapeToString(out.shape),
                              ShapeToString(c.In(0).shape)));
  }
  return absl::OkStatus();
}

void Encode(const Node&, EncodeContext& file) { file.Set(tflite::CreateQuantizeOptions(file.builder)); }

class QuantizeKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, x.shape));
    const Quantization& out = *ctx.graph->tensors[static_cast<size_t>(ctx.out(0).index)].quantization;
    scale_ = out.scale;
    zero_point_ = out.zero_point;
    inner_ = 1;
    if (scale_.size() > 1) {
      for (int d = out.quantized_dimension + 1; d < x.rank(); ++d) inner_ *= x.dim(d);
    }
    if (x.type != DataType::kFloat32) {
      const Quantization& in = *ctx.graph->tensors[static_cast<size_t>(x.index)].quantization;
      in_zero_point_ = static_cast<int32_t>(in.zero_point[0]);
      multiplier_ = quantized::QuantizeMultiplier(static_cast<double>(in.scale[0]) / static_cast<double>(scale_[0]));
      // XNNPACK's requantization (qs8-vcvt), LiteRT's CPU path where it
      // takes the ratio: the ratio with 8 fractional bits, rounded half up.
      const float ratio = in.scale[0] / scale_[0];
      xnnpack_multiplier_ = 0;
      if (x.type == ctx.out(0).type && ratio >= 0x1.0p-8f && ratio <= 0x1.0p+7f) {
        xnnpack_multiplier_ = static_cast<int32_t>(std::nearbyint(256.0f * ratio));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    const int32_t lo = quantized::Lowest(y.type), hi = quantized::Highest(y.type);
    const int64_t n = x.elements();
    const auto channels = static_cast<int64_t>(scale_.size());
    for (int64_t i = 0; i < n; ++i) {
      int32_t q = 0;
      if (x.type == DataType::kFloat32) {
        const size_t c = channels > 1 ? static_cast<size_t>((i / inner_) % channels) : 0;
        const quantized::Params p{scale_[c], static_cast<int32_t>(zero_point_[c])};
        const float v = x.as<float>()[i];
        if (channels > 1 || std::isnan(v)) {
          q = quantized::Quantize(v, p, y.type);
        } else {
          // XNNPACK's (f32-qs8-vcvt), LiteRT's CPU path: times the reciprocal
          // scale in float, rounded to nearest even.
          const float scaled = std::clamp(v * (1.0f / p.scale), static_cast<float>(lo - p.zero_point),
                                          static_cast<float>(hi - p.zero_point));
          q = static_cast<int32_t>(std::nearbyint(scaled)) + p.zero_point;
        }
      } else {
        const int32_t offset = quantized::Read(x, i) - in_zero_point_;
        const auto zero_point = static_cast<int32_t>(zero_point_[0]);
        const int32_t v = xnnpack_multiplier_ != 0
                              ? ((offset * xnnpack_multiplier_ + 0x80) >> 8) + zero_point
                              : quantized::MultiplyByQuantizedMultiplier(offset, multiplier_) + zero_point;
        q = std::clamp(v, lo, hi);
      }
      quantized::Write(y, i, q);
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> scale_;
  std::vector<int64_t> zero_point_;
  int64_t inner_ = 1;
  int32_t in_zero_point_ = 0;
  quantized::Multiplier multiplier_;
  int32_t xnnpack_multiplier_ = 0;  // 0: TFLite's fixed point
};

}  // namespace

std::vector<OpDefinition> QuantizeOps() {
  return {{.op = OpKind::kQuantize,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<QuantizeKernel>,
           .gpu = {}}};
}

}  // namespace mgd::ops
