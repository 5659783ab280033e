// Convolution-family reference kernels, shared with the MediaPipe custom ops.
#pragma once

#include "interpreter/kernel.h"
#include "interpreter/kernels/kernel_util.h"

namespace mgd {

// Transposed convolution, TFLite semantics: input [N,H,W,Ci], weights OHWI
// [Co,Kh,Kw,Ci], optional bias [Co], output [N,Ho,Wo,Co].
struct TransposeConvParams {
  int stride_w = 1, stride_h = 1;
  int pad_w = 0, pad_h = 0;  // output positions cut from the top/left
  ActivationRange activation;
};
absl::Status CheckTransposeConv(const KernelContext& ctx, const TensorRef& input, const TensorRef& weights,
                                const TensorRef* bias, const TensorRef& output);
void TransposeConv(const TransposeConvParams& p, const TensorRef& input, const TensorRef& weights,
                   const TensorRef* bias, TensorRef& output);

std::unique_ptr<Kernel> CreateConv2dKernel();
std::unique_ptr<Kernel> CreateDepthwiseConv2dKernel();
std::unique_ptr<Kernel> CreateTransposeConvKernel();
std::unique_ptr<Kernel> CreateFullyConnectedKernel();

}  // namespace mgd
