// What the convolution family's definitions share: validation rules and the
// fused activation of CONV_2D and DEPTHWISE_CONV_2D nodes.
#include <fmt/format.h>

#include "model/status_macros.h"
#include "ops/conv/conv.h"

namespace mgd::ops {

absl::Status ValidateConvolution(const NodeChecker& c, int32_t stride_w, int32_t stride_h, int32_t dilation_w,
                                 int32_t dilation_h, Activation activation) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 3, 1));
  MGD_RETURN_IF_ERROR(c.Positive("stride_w", stride_w));
  MGD_RETURN_IF_ERROR(c.Positive("stride_h", stride_h));
  MGD_RETURN_IF_ERROR(c.Positive("dilation_w_factor", dilation_w));
  MGD_RETURN_IF_ERROR(c.Positive("dilation_h_factor", dilation_h));
  MGD_RETURN_IF_ERROR(c.ActivationOk(activation));
  MGD_RETURN_IF_ERROR(c.InputRank(0, 4));
  MGD_RETURN_IF_ERROR(c.InputRank(1, 4));
  MGD_RETURN_IF_ERROR(c.InputRank(2, 1));
  return ValidateProductTypes(c);
}

absl::Status ValidateProductTypes(const NodeChecker& c) {
  const DataType type = c.Out(0).type;
  if (type == DataType::kInt8 || type == DataType::kUInt8) {
    MGD_RETURN_IF_ERROR(c.InputType(0, {type}));
    MGD_RETURN_IF_ERROR(c.InputType(1, {type}));
    return c.InputType(2, {DataType::kInt32});
  }
  // A float layer with int8 or uint8 weights (TFLite's dynamic-range,
  // "hybrid" models): the interpreter dequantizes them at load
  // (passes/int8_as_float.h).
  if (c.Present(1) && (c.In(1).type == DataType::kInt8 || c.In(1).type == DataType::kUInt8)) {
    if (!c.In(1).is_constant || !c.In(1).quantization.has_value()) {
      return c.Fail("an 8-bit filter of a float layer must be a constant with quantization parameters");
    }
  } else {
    MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kFloat32}));
  }
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  MGD_RETURN_IF_ERROR(c.InputType(2, {DataType::kFloat32}));
  return c.OutputType(0, DataType::kFloat32);
}

absl::Status CheckBias(const KernelContext& ctx, size_t input, int channels) {
  if (!ctx.has_input(input)) return absl::OkStatus();
  if (ctx.in(input).elements() != channels) {
    return ctx.Error(
        fmt::format("bias has {} elements, expected {} (output channels)", ctx.in(input).elements(), channels));
  }
  return absl::OkStatus();
}

Activation ConvolutionActivation(const Node& node) {
  return node.op == OpKind::kConv2d ? AttributesOf<Conv2dAttributes>(node.attributes).activation
                                    : AttributesOf<DepthwiseConv2dAttributes>(node.attributes).activation;
}

// Attributes are immutable (copies of a graph share them): the node gets new ones.
template <typename A>
void WithActivation(Node& node, Activation activation) {
  A a = AttributesOf<A>(node.attributes);
  a.activation = activation;
  node.attributes = a;
}

void SetConvolutionActivation(Node& node, Activation activation) {
  if (node.op == OpKind::kConv2d) {
    WithActivation<Conv2dAttributes>(node, activation);
  } else {
    WithActivation<DepthwiseConv2dAttributes>(node, activation);
  }
}

}  // namespace mgd::ops
