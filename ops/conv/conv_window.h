// What CONV_2D's and DEPTHWISE_CONV_2D's definitions share: their options
// (padding, strides, dilations, fused activation) have the same fields in
// both TFLite tables and both attribute structs, and set up the same window
// over the input. Templates over the attribute and options types, so that
// each op's file keeps only what is its own.
#pragma once

#include <vector>

#include "interpreter/kernel.h"
#include "interpreter/kernels/kernel_util.h"
#include "model/geometry.h"
#include "model/status_macros.h"
#include "ops/conv/conv.h"
#include "ops/tflite_io.h"

namespace mgd::ops {

// The shared fields of a decoded Conv2DOptions or DepthwiseConv2DOptions.
template <typename A, typename Options>
void DecodeWindowOptions(const Options& o, A& a) {
  a.padding = PaddingFromTfl(o.padding());
  a.stride_w = o.stride_w();
  a.stride_h = o.stride_h();
  a.dilation_w = o.dilation_w_factor();
  a.dilation_h = o.dilation_h_factor();
  a.activation = ActivationFromTfl(o.fused_activation_function());
}

template <typename A>
absl::Status ValidateWindowed(const NodeChecker& c) {
  const auto& a = AttributesOf<A>(c.node().attributes);
  return ValidateConvolution(c, a.stride_w, a.stride_h, a.dilation_w, a.dilation_h, a.activation);
}

// TFLite's padding before the window along y and x, for a filter (input 1,
// [_, kh, kw, _]) over input 0; an error unless output 0 is
// [batch, out_h, out_w, channels].
struct WindowPads {
  int h = 0, w = 0;
};
template <typename A>
absl::StatusOr<WindowPads> PrepareWindow(KernelContext& ctx, const A& a, int channels) {
  const TensorRef& x = ctx.in(0);
  const TensorRef& w = ctx.in(1);
  const Window wy = WindowAlong(a.padding, x.dim(1), w.dim(1), a.stride_h, a.dilation_h);
  const Window wx = WindowAlong(a.padding, x.dim(2), w.dim(2), a.stride_w, a.dilation_w);
  MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, channels}));
  return WindowPads{wy.pad, wx.pad};
}

// The reference loop both CPU kernels run: for each output pixel, the
// accumulators start from the bias (zeros without one), `tap(acc, x_pixel,
// ky, kx)` adds each tap that lies inside the input (x_pixel: its ci input
// channels), and the activation writes the pixel's co outputs. Taps row by
// row, or column by column with `kx_outer` (XNNPACK's depthwise order, so
// that results agree with TFLite's CPU path to the last bits more often).
template <typename A, typename Tap>
void RunWindowed(KernelContext& ctx, const A& a, WindowPads pads, bool kx_outer, Tap tap) {
  const TensorRef& x = ctx.in(0);
  const TensorRef& w = ctx.in(1);
  TensorRef& y = ctx.out(0);
  const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), ci = x.dim(3);
  const int kh = w.dim(1), kw = w.dim(2);
  const int oh = y.dim(1), ow = y.dim(2), co = y.dim(3);
  const float* bias = ctx.has_input(2) ? ctx.in(2).as<float>() : nullptr;
  const ActivationRange act = RangeOf(a.activation);
  const float* xd = x.as<float>();
  float* yd = y.as<float>();
  std::vector<float> acc(static_cast<size_t>(co));
  for (int b = 0; b < n; ++b) {
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int o = 0; o < co; ++o) acc[static_cast<size_t>(o)] = bias ? bias[o] : 0.0f;
        auto visit = [&](int ky, int kx) {
          const int iy = oy * a.stride_h - pads.h + ky * a.dilation_h;
          const int ix = ox * a.stride_w - pads.w + kx * a.dilation_w;
          if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) return;
          tap(acc.data(), xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * ci, ky, kx);
        };
        for (int outer = 0; outer < (kx_outer ? kw : kh); ++outer) {
          for (int inner = 0; inner < (kx_outer ? kh : kw); ++inner) {
            if (kx_outer) {
              visit(inner, outer);
            } else {
              visit(outer, inner);
            }
          }
        }
        float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * co;
        for (int o = 0; o < co; ++o) yp[o] = act.Apply(acc[static_cast<size_t>(o)]);
      }
    }
  }
}

}  // namespace mgd::ops
