// The convolution family: CONV_2D (conv2d.cc), DEPTHWISE_CONV_2D
// (depthwise.cc), FULLY_CONNECTED (fully_connected.cc), TRANSPOSE_CONV and
// MediaPipe's Convolution2DTransposeBias (transpose_conv.cc). Their GPU code
// shares the window loops, weight packing and bias of conv_shader.h.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct Conv2dAttributes {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  Activation activation = Activation::kNone;
};

struct DepthwiseConv2dAttributes {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t depth_multiplier = 1;
  Activation activation = Activation::kNone;
};

struct TransposeConvAttributes {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  Activation activation = Activation::kNone;
};

struct FullyConnectedAttributes {
  Activation activation = Activation::kNone;
  bool keep_num_dims = false;
};

// Convolution2DTransposeBias's options, a raw TfLiteTransposeConvParams; its
// output size is MediaPipe's own (model/geometry.h).
struct MediaPipeTransposeConvAttributes {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
};

std::vector<OpDefinition> Conv2dOps();
std::vector<OpDefinition> DepthwiseConv2dOps();
std::vector<OpDefinition> FullyConnectedOps();
std::vector<OpDefinition> TransposeConvOps();
std::vector<OpDefinition> MediaPipeTransposeConvOps();

// CONV_2D or DEPTHWISE_CONV_2D: the convolutions with a window over an image
// and a fused activation, which the passes fold into and read through.
inline bool IsSpatialConvolution(OpKind op) { return op == OpKind::kConv2d || op == OpKind::kDepthwiseConv2d; }

// The fused activation of a CONV_2D or DEPTHWISE_CONV_2D node, and the node
// with another (graph passes fold a following op's into it).
Activation ConvolutionActivation(const Node& node);
void SetConvolutionActivation(Node& node, Activation activation);

// Shared by the family's definitions (conv_common.cc).
// CONV_2D's and DEPTHWISE_CONV_2D's rules: input, filter (both rank 4),
// optional bias of rank 1, float or 8-bit (ValidateProductTypes).
absl::Status ValidateConvolution(const NodeChecker& c, int32_t stride_w, int32_t stride_h, int32_t dilation_w,
                                 int32_t dilation_h, Activation activation);
// The types of a product-sum op (convolutions, FULLY_CONNECTED): input,
// filter and output float32 with a float32 bias, or all of one 8-bit type
// with an int32 bias (conv_quantized.cc).
absl::Status ValidateProductTypes(const NodeChecker& c);
// An error unless optional input `input`, when present, holds `channels`
// elements (one bias per output channel).
absl::Status CheckBias(const KernelContext& ctx, size_t input, int channels);

}  // namespace mgd::ops
