#include "ops/conv/conv_quantized.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "ops/quantize/fixed_point.h"
#include "ops/quantize/quantized_tensor.h"

namespace mgd::ops {
namespace {

using quantized::Multiplier;
using quantized::Params;

// What every 8-bit product-sum kernel (convolutions, FULLY_CONNECTED)
// prepares the same way: the types, the zero points, the activation's range,
// and per output channel the filter's zero point and the factor
// input scale * filter scale / output scale.
//
// The sum is brought to the output as LiteRT's CPU path does, XNNPACK's
// "fp32" requantization: the int32 sum as a float times that factor in
// float, rounded to nearest even. Where XNNPACK refuses the layer (a factor
// of 256 or more) LiteRT runs TFLite's kernel, and so does mgd: the factor
// as a fixed-point multiplier, rounded as TFLite rounds.
struct QuantizedProducts {
  int32_t input_zero_point = 0, output_zero_point = 0;
  quantized::IntRange range{0, 0};
  std::vector<float> scales;  // per output channel, in float as XNNPACK computes them
  bool fixed_point = false;   // TFLite's arithmetic instead
  std::vector<Multiplier> multipliers;
  std::vector<int32_t> filter_zero_points;

  // `channels` output channels along the filter's dimension `channel_axis`.
  absl::Status Prepare(const KernelContext& ctx, Activation activation, int channels, int channel_axis) {
    const TensorRef &x = ctx.in(0), &w = ctx.in(1), &y = ctx.out(0);
    if (w.type != x.type || y.type != x.type) {
      return ctx.Error(fmt::format("input, filter and output must have one type, not {}, {} and {}",
                                   DataTypeName(x.type), DataTypeName(w.type), DataTypeName(y.type)));
    }
    if (ctx.has_input(2) && ctx.in(2).type != DataType::kInt32) {
      return ctx.Error(fmt::format("the bias of a quantized {} is int32, not {}", OpName(ctx.node->op),
                                   DataTypeName(ctx.in(2).type)));
    }
    if (activation == Activation::kTanh) return ctx.Error("a fused TANH on quantized tensors is not TFLite's");
    MGD_ASSIGN_OR_RETURN(const Params in, quantized::PerTensor(ctx, x));
    MGD_ASSIGN_OR_RETURN(const Params out, quantized::PerTensor(ctx, y));
    input_zero_point = in.zero_point;
    output_zero_point = out.zero_point;
    range = quantized::ActivationRangeOf(activation, y.type, out);
    const Tensor& filter = ctx.graph->tensors[static_cast<size_t>(w.index)];
    if (!filter.quantization.has_value()) return ctx.Error("the filter has no quantization parameters");
    const Quantization& q = *filter.quantization;
    if (q.scale.size() != 1 &&
        (q.scale.size() != static_cast<size_t>(channels) || q.quantized_dimension != channel_axis)) {
      return ctx.Error(fmt::format("the filter has {} scales along dimension {}; expected 1, or {} along dimension {}",
                                   q.scale.size(), q.quantized_dimension, channels, channel_axis));
    }
    multipliers.clear();
    scales.clear();
    filter_zero_points.clear();
    fixed_point = false;
    for (int o = 0; o < channels; ++o) {
      const size_t c = q.scale.size() == 1 ? 0 : static_cast<size_t>(o);
      multipliers.push_back(
          quantized::QuantizeMultiplier(static_cast<double>(in.scale) * q.scale[c] / static_cast<double>(out.scale)));
      scales.push_back(in.scale * q.scale[c] / out.scale);
      fixed_point = fixed_point || !(scales.back() < 256.0f);
      filter_zero_points.push_back(static_cast<int32_t>(q.zero_point[c]));
    }
    return absl::OkStatus();
  }

  // Output channel o of a sum (int64, saturated to int32) plus the bias.
  int32_t Output(int64_t sum, const int32_t* bias, int o) const {
    const int64_t total = sum + (bias != nullptr ? bias[o] : 0);
    const auto saturated = static_cast<int32_t>(std::clamp<int64_t>(total, INT32_MIN, INT32_MAX));
    if (!fixed_point) {
      const float v = static_cast<float>(saturated) * scales[static_cast<size_t>(o)];
      const float clamped = std::clamp(v, static_cast<float>(range.lo - output_zero_point),
                                       static_cast<float>(range.hi - output_zero_point));
      return static_cast<int32_t>(std::nearbyint(clamped)) + output_zero_point;
    }
    const int32_t v = quantized::MultiplyByQuantizedMultiplier(saturated, multipliers[static_cast<size_t>(o)]) +
                      output_zero_point;
    return std::clamp(v, range.lo, range.hi);
  }
};

class QuantizedConvKernel : public Kernel {
 public:
  explicit QuantizedConvKernel(const QuantizedWindow& window) : window_(window) {}

  absl::Status Prepare(KernelContext& ctx) override {
    // Output channels along dimension 0 of a CONV_2D filter, 3 of a
    // depthwise one.
    return p_.Prepare(ctx, window_.activation, ctx.out(0).dim(3), window_.depthwise ? 3 : 0);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef &x = ctx.in(0), &w = ctx.in(1), &y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
    const int kh = w.dim(1), kw = w.dim(2), wci = window_.depthwise ? 1 : w.dim(3);
    const int oh = y.dim(1), ow = y.dim(2), co = y.dim(3);
    const int cog = co / window_.groups;
    const int32_t* bias = ctx.has_input(2) ? ctx.in(2).as<int32_t>() : nullptr;
    // int64 sums, saturated to int32 at the end: TFLite's int32 sums overflow
    // (undefined) only for filters no real model has.
    std::vector<int64_t> acc(static_cast<size_t>(co));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          std::fill(acc.begin(), acc.end(), 0);
          for (int ky = 0; ky < kh; ++ky) {
            const int iy = oy * window_.stride_h - window_.pads.h + ky * window_.dilation_h;
            if (iy < 0 || iy >= ih) continue;
            for (int kx = 0; kx < kw; ++kx) {
              const int ix = ox * window_.stride_w - window_.pads.w + kx * window_.dilation_w;
              if (ix < 0 || ix >= iw) continue;
              const int64_t pixel = ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
              for (int o = 0; o < co; ++o) {
                const int32_t fz = p_.filter_zero_points[static_cast<size_t>(o)];
                int64_t sum = 0;
                if (window_.depthwise) {
                  const int32_t v = quantized::Read(x, pixel + o / window_.multiplier) - p_.input_zero_point;
                  sum = int64_t{quantized::Read(w, (ky * kw + kx) * co + o) - fz} * v;
                } else {
                  const int64_t first = pixel + static_cast<int64_t>(o / cog) * wci;
                  const int64_t row = ((static_cast<int64_t>(o) * kh + ky) * kw + kx) * wci;
                  for (int c = 0; c < wci; ++c) {
                    const int32_t v = quantized::Read(x, first + c) - p_.input_zero_point;
                    sum += int64_t{quantized::Read(w, row + c) - fz} * v;
                  }
                }
                acc[static_cast<size_t>(o)] += sum;
              }
            }
          }
          const int64_t at = ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
          for (int o = 0; o < co; ++o) quantized::Write(y, at + o, p_.Output(acc[static_cast<size_t>(o)], bias, o));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  QuantizedWindow window_;
  QuantizedProducts p_;
};

// FULLY_CONNECTED: rows of `depth` inputs against [units, depth] filters.
class QuantizedFullyConnectedKernel : public Kernel {
 public:
  QuantizedFullyConnectedKernel(Activation activation, int batches) : activation_(activation), batches_(batches) {}

  absl::Status Prepare(KernelContext& ctx) override {
    return p_.Prepare(ctx, activation_, ctx.in(1).dim(0), 0);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef &x = ctx.in(0), &w = ctx.in(1), &y = ctx.out(0);
    const int units = w.dim(0), depth = w.dim(1);
    const int32_t* bias = ctx.has_input(2) ? ctx.in(2).as<int32_t>() : nullptr;
    for (int b = 0; b < batches_; ++b) {
      const int64_t row = static_cast<int64_t>(b) * depth;
      for (int u = 0; u < units; ++u) {
        const int32_t fz = p_.filter_zero_points[static_cast<size_t>(u)];
        int64_t sum = 0;
        for (int k = 0; k < depth; ++k) {
          const int32_t v = quantized::Read(x, row + k) - p_.input_zero_point;
          sum += int64_t{quantized::Read(w, static_cast<int64_t>(u) * depth + k) - fz} * v;
        }
        quantized::Write(y, static_cast<int64_t>(b) * units + u, p_.Output(sum, bias, u));
      }
    }
    return absl::OkStatus();
  }

 private:
  Activation activation_;
  int batches_;
  QuantizedProducts p_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedConv(KernelContext& ctx, const QuantizedWindow& window) {
  auto kernel = std::make_unique<QuantizedConvKernel>(window);
  MGD_RETURN_IF_ERROR(kernel->Prepare(ctx));
  return kernel;
}

absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedFullyConnected(KernelContext& ctx, Activation activation,
                                                                       int batches) {
  auto kernel = std::make_unique<QuantizedFullyConnectedKernel>(activation, batches);
  MGD_RETURN_IF_ERROR(kernel->Prepare(ctx));
  return kernel;
}

}  // namespace mgd::ops
