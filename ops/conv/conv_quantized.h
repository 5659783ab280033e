// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of int8 or uint8 tensors
// (the float kernels hand them here at prepare), in TFLite's integer
// arithmetic (reference_integer_ops::ConvPerChannel, DepthwiseConvPerChannel
// and FullyConnected, and the uint8 reference ops): products of zero-point-offset inputs and
// filters summed in int32, plus the int32 bias, scaled to the output per
// output channel in fixed point, offset and clamped to the activation.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"
#include "ops/conv/conv_window.h"

namespace mgd::ops {

// The window the float kernel has set up.
struct QuantizedWindow {
  int stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  WindowPads pads;
  Activation activation = Activation::kNone;
  bool depthwise = false;
  int groups = 1;      // CONV_2D: input channels / filter channels
  int multiplier = 1;  // DEPTHWISE_CONV_2D: output channels per input channel
};

template <typename A>
QuantizedWindow WindowOf(const A& a, WindowPads pads) {
  return {a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, pads, a.activation};
}

// The kernel for a node whose input is 8-bit, prepared: checks the types and
// parameters and precomputes each output channel's multiplier.
absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedConv(KernelContext& ctx, const QuantizedWindow& window);

// The same for FULLY_CONNECTED over `batches` rows (filters per tensor, or
// per channel along dimension 0).
absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedFullyConnected(KernelContext& ctx, Activation activation,
                                                                       int batches);

}  // namespace mgd::ops
