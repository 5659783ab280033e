#include "interpreter/kernels/conv.h"

#include <fmt/format.h>

#include <cstring>

#include "model/status_macros.h"

namespace mgd {
namespace {

absl::Status CheckBias(const KernelContext& ctx, size_t input, int channels) {
  if (!ctx.has_input(input)) return absl::OkStatus();
  if (ctx.in(input).elements() != channels) {
    return ctx.Error(fmt::format("bias has {} elements, expected {} (output channels)",
                                 ctx.in(input).elements(), channels));
  }
  return absl::OkStatus();
}

class Conv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = std::get<Conv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(0), wci = w.dim(3);
    if (wci <= 0 || ci % wci != 0) {
      return ctx.Error(fmt::format("input has {} channels, not a multiple of the filter's {}", ci, wci));
    }
    groups_ = ci / wci;
    if (co % groups_ != 0) {
      return ctx.Error(fmt::format("{} output channels do not split into {} groups", co, groups_));
    }
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    const Window wy = WindowAlong(a_.padding, x.dim(1), w.dim(1), a_.stride_h, a_.dilation_h);
    const Window wx = WindowAlong(a_.padding, x.dim(2), w.dim(2), a_.stride_w, a_.dilation_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, co}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    // Constant weights are reordered at the first invoke, not here: when a
    // delegate takes the node (the usual case), that invoke never comes, and
    // reordering every filter of a model would slow each start.
    reordered_ = false;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    TensorRef& y = ctx.out(0);
    if (!w.is_constant || !reordered_) ReorderWeights(w);
    reordered_ = w.is_constant;
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
    const int kh = w.dim(1), kw = w.dim(2), wci = w.dim(3), co = w.dim(0);
    const int oh = y.dim(1), ow = y.dim(2);
    const int cog = co / groups_;
    const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    std::vector<float> acc(static_cast<size_t>(co));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] = bias ? bias[o] : 0.0f;
          for (int ky = 0; ky < kh; ++ky) {
            const int iy = oy * a_.stride_h - pad_h_ + ky * a_.dilation_h;
            if (iy < 0 || iy >= ih) continue;
            for (int kx = 0; kx < kw; ++kx) {
              const int ix = ox * a_.stride_w - pad_w_ + kx * a_.dilation_w;
              if (ix < 0 || ix >= iw) continue;
              const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
              const float* wp = weights_.data() + static_cast<size_t>((ky * kw + kx) * wci) * static_cast<size_t>(co);
              for (int g = 0; g < groups_; ++g) {
                float* ag = acc.data() + g * cog;
                for (int c = 0; c < wci; ++c) {
                  const float xv = xp[g * wci + c];
                  const float* wr = wp + static_cast<size_t>(c) * static_cast<size_t>(co) + static_cast<size_t>(g * cog);
                  for (int o = 0; o < cog; ++o) ag[o] += xv * wr[o];
                }
              }
            }
          }
          float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
          for (int o = 0; o < co; ++o) yp[o] = act.Apply(acc[static_cast<size_t>(o)]);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // OHWI -> [Kh][Kw][Ci][Co] so the innermost loop runs over output channels
  // with independent accumulators (vectorizes without reassociating sums).
  void ReorderWeights(const TensorRef& w) {
    const int co = w.dim(0), kh = w.dim(1), kw = w.dim(2), ci = w.dim(3);
    weights_.resize(static_cast<size_t>(w.elements()));
    const float* src = w.as<float>();
    for (int o = 0; o < co; ++o)
      for (int y = 0; y < kh; ++y)
        for (int x = 0; x < kw; ++x)
          for (int c = 0; c < ci; ++c)
            weights_[static_cast<size_t>(((y * kw + x) * ci + c) * co + o)] = src[((o * kh + y) * kw + x) * ci + c];
  }

  Conv2dAttributes a_;
  int groups_ = 1, pad_h_ = 0, pad_w_ = 0;
  std::vector<float> weights_;
  bool reordered_ = false;  // weights_ holds the constant weights
};

class DepthwiseConv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = std::get<DepthwiseConv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(3);
    if (w.dim(0) != 1) return ctx.Error(fmt::format("filter shape {} must start with 1", ShapeToString(w.shape)));
    if (ci <= 0 || co % ci != 0) {
      return ctx.Error(fmt::format("filter has {} channels, not a multiple of the input's {}", co, ci));
    }
    multiplier_ = co / ci;
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    const Window wy = WindowAlong(a_.padding, x.dim(1), w.dim(1), a_.stride_h, a_.dilation_h);
    const Window wx = WindowAlong(a_.padding, x.dim(2), w.dim(2), a_.stride_w, a_.dilation_w);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, co}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    TensorRef& y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
    const int kh = w.dim(1), kw = w.dim(2), co = w.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    const float* wd = w.as<float>();
    float* yd = y.as<float>();
    std::vector<float> acc(static_cast<size_t>(co));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] = bias ? bias[o] : 0.0f;
          // Taps column by column (kx outer), the order XNNPACK sums them in,
          // so results agree with TFLite's CPU path to the last bits more often.
          for (int kx = 0; kx < kw; ++kx) {
            const int ix = ox * a_.stride_w - pad_w_ + kx * a_.dilation_w;
            if (ix < 0 || ix >= iw) continue;
            for (int ky = 0; ky < kh; ++ky) {
              const int iy = oy * a_.stride_h - pad_h_ + ky * a_.dilation_h;
              if (iy < 0 || iy >= ih) continue;
              const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
              const float* wp = wd + static_cast<size_t>((ky * kw + kx) * co);
              if (multiplier_ == 1) {
                for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] += xp[o] * wp[o];
              } else {
                for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] += xp[o / multiplier_] * wp[o];
              }
            }
          }
          float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
          for (int o = 0; o < co; ++o) yp[o] = act.Apply(acc[static_cast<size_t>(o)]);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  DepthwiseConv2dAttributes a_;
  int multiplier_ = 1, pad_h_ = 0, pad_w_ = 0;
};

class TransposeConvKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const auto& a = std::get<TransposeConvAttributes>(ctx.node->attributes);
    const TensorRef& shape = ctx.in(0);
    if (shape.elements() != 4) return ctx.Error("output_shape input must have 4 elements");
    Shape expected(shape.as<int32_t>(), shape.as<int32_t>() + 4);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, expected));
    const TensorRef* bias = ctx.has_input(3) ? &ctx.in(3) : nullptr;
    MGD_RETURN_IF_ERROR(CheckTransposeConv(ctx, ctx.in(2), ctx.in(1), bias, ctx.out(0)));
    // TFLite: the padding of the forward convolution from the output back to
    // the input.
    const int oh = expected[1], ow = expected[2], kh = ctx.in(1).dim(1), kw = ctx.in(1).dim(2);
    params_.stride_w = a.stride_w;
    params_.stride_h = a.stride_h;
    params_.pad_h = WindowAlong(a.padding, oh, kh, a.stride_h, 1).pad;
    params_.pad_w = WindowAlong(a.padding, ow, kw, a.stride_w, 1).pad;
    params_.activation = RangeOf(a.activation);
    return absl::OkStatus();
  }
  absl::Status Invoke(KernelContext& ctx) override {
    TransposeConv(params_, ctx.in(2), ctx.in(1), ctx.has_input(3) ? &ctx.in(3) : nullptr, ctx.out(0));
    return absl::OkStatus();
  }

 private:
  TransposeConvParams params_;
};

class FullyConnectedKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = std::get<FullyConnectedAttributes>(ctx.node->attributes);
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
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
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
  int batches_ = 1;
};

}  // namespace

absl::Status CheckTransposeConv(const KernelContext& ctx, const TensorRef& input, const TensorRef& weights,
                                const TensorRef* bias, const TensorRef& output) {
  if (input.rank() != 4 || weights.rank() != 4 || output.rank() != 4) {
    return ctx.Error("input, weights and output must all have rank 4");
  }
  if (weights.dim(3) != input.dim(3)) {
    return ctx.Error(fmt::format("weights {} have {} input channels, the input has {}",
                                 ShapeToString(weights.shape), weights.dim(3), input.dim(3)));
  }
  if (output.dim(3) != weights.dim(0) || output.dim(0) != input.dim(0)) {
    return ctx.Error(fmt::format("output {} does not match input {} and weights {}", ShapeToString(output.shape),
                                 ShapeToString(input.shape), ShapeToString(weights.shape)));
  }
  if (bias != nullptr && bias->elements() != weights.dim(0)) {
    return ctx.Error(fmt::format("bias has {} elements, expected {}", bias->elements(), weights.dim(0)));
  }
  return absl::OkStatus();
}

void TransposeConv(const TransposeConvParams& p, const TensorRef& input, const TensorRef& weights,
                   const TensorRef* bias, TensorRef& output) {
  const int n = input.dim(0), ih = input.dim(1), iw = input.dim(2), ci = input.dim(3);
  const int co = weights.dim(0), kh = weights.dim(1), kw = weights.dim(2);
  const int oh = output.dim(1), ow = output.dim(2);
  const int pad_h = p.pad_h, pad_w = p.pad_w;
  const float* xd = input.as<float>();
  const float* wd = weights.as<float>();
  float* yd = output.as<float>();
  // Accumulators start at the bias and take the taps in order, as XNNPACK's
  // deconvolution sums them.
  const float* bd = bias != nullptr ? bias->as<float>() : nullptr;
  const int64_t pixels = static_cast<int64_t>(n) * oh * ow;
  for (int64_t i = 0; i < pixels; ++i) {
    for (int o = 0; o < co; ++o) yd[i * co + o] = bd ? bd[o] : 0.0f;
  }
  for (int b = 0; b < n; ++b) {
    for (int iy = 0; iy < ih; ++iy) {
      for (int ix = 0; ix < iw; ++ix) {
        const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci;
        for (int ky = 0; ky < kh; ++ky) {
          const int oy = iy * p.stride_h - pad_h + ky;
          if (oy < 0 || oy >= oh) continue;
          for (int kx = 0; kx < kw; ++kx) {
            const int ox = ix * p.stride_w - pad_w + kx;
            if (ox < 0 || ox >= ow) continue;
            float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
            for (int o = 0; o < co; ++o) {
              const float* wp = wd + ((static_cast<int64_t>(o) * kh + ky) * kw + kx) * ci;
              float acc = yp[o];
              for (int c = 0; c < ci; ++c) acc += xp[c] * wp[c];
              yp[o] = acc;
            }
          }
        }
      }
    }
  }
  for (int64_t i = 0; i < pixels * co; ++i) yd[i] = p.activation.Apply(yd[i]);
}

std::unique_ptr<Kernel> CreateConv2dKernel() { return std::make_unique<Conv2dKernel>(); }
std::unique_ptr<Kernel> CreateDepthwiseConv2dKernel() { return std::make_unique<DepthwiseConv2dKernel>(); }
std::unique_ptr<Kernel> CreateTransposeConvKernel() { return std::make_unique<TransposeConvKernel>(); }
std::unique_ptr<Kernel> CreateFullyConnectedKernel() { return std::make_unique<FullyConnectedKernel>(); }

}  // namespace mgd
