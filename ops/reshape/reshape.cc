#include "ops/reshape/reshape.h"

#include <fmt/format.h>

#include <cstring>

#include "model/status_macros.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/gather.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> DecodeReshape(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::ReshapeOptions>();
  if (!options.ok()) return options.status();
  ReshapeAttributes a;
  if (const tflite::ReshapeOptions* o = *options; o != nullptr && o->new_shape() != nullptr) {
    a.new_shape = Shape(o->new_shape()->begin(), o->new_shape()->end());
  }
  return a;
}

void EncodeReshape(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<ReshapeAttributes>(node.attributes);
  file.Set(tflite::CreateReshapeOptions(file.builder, a.new_shape ? file.builder.CreateVector(*a.new_shape) : 0));
}

absl::StatusOr<Attributes> DecodeSqueeze(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::SqueezeOptions>();
  if (!options.ok()) return options.status();
  SqueezeAttributes a;
  if (const tflite::SqueezeOptions* o = *options; o != nullptr && o->squeeze_dims() != nullptr) {
    a.squeeze_dims.assign(o->squeeze_dims()->begin(), o->squeeze_dims()->end());
  }
  return a;
}

void EncodeSqueeze(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSqueezeOptions(
      file.builder, file.builder.CreateVector(AttributesOf<SqueezeAttributes>(node.attributes).squeeze_dims)));
}

// The data: float32, or 8-bit with the output keeping its parameters.
absl::Status ValidateData(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(quantized::FloatOr8Bit(c));
  return quantized::KeepsQuantization(c);
}

// RESHAPE: the data and an optional int32 shape input.
absl::Status ValidateReshape(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32}));
  return ValidateData(c);
}

absl::Status ValidateSqueeze(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  return ValidateData(c);
}

// EXPAND_DIMS: the data and the new axis, a constant.
absl::Status ValidateExpandDims(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32, DataType::kInt64}));
  MGD_RETURN_IF_ERROR(c.Constant(1));
  return ValidateData(c);
}

// The output shape comes from the shape input or the attributes (RESHAPE,
// with one -1 inferred) or is the declared one (SQUEEZE, EXPAND_DIMS); the
// element count must agree.
class ReshapeKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    if (ctx.node->op == OpKind::kReshape) {
      std::optional<Shape> requested;
      if (ctx.has_input(1) && ctx.in(1).is_constant && ctx.in(1).rank() == 1) {
        const TensorRef& s = ctx.in(1);
        requested = Shape(s.as<int32_t>(), s.as<int32_t>() + s.elements());
      } else if (const auto& a = AttributesOf<ReshapeAttributes>(ctx.node->attributes); a.new_shape) {
        requested = a.new_shape;
      }
      if (requested) {
        int64_t known = 1;
        int unknown = -1;
        for (size_t i = 0; i < requested->size(); ++i) {
          if ((*requested)[i] == -1) {
            if (unknown >= 0) return ctx.Error("new shape has more than one -1");
            unknown = static_cast<int>(i);
          } else if ((*requested)[i] < 0) {
            return ctx.Error(fmt::format("new shape {} has a negative dimension", ShapeToString(*requested)));
          } else {
            known *= (*requested)[i];
          }
        }
        if (unknown >= 0 && known > 0) (*requested)[static_cast<size_t>(unknown)] = static_cast<int32_t>(x.elements() / known);
        MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, *requested));
      }
    }
    if (y.elements() != x.elements()) {
      return ctx.Error(fmt::format("cannot reshape {} ({} elements) into {} ({} elements)", ShapeToString(x.shape),
                                   x.elements(), ShapeToString(y.shape), y.elements()));
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (ctx.out(0).data != ctx.in(0).data) std::memcpy(ctx.out(0).data, ctx.in(0).data, ctx.out(0).bytes);
    return absl::OkStatus();
  }
};

// A reshape moves no element of the flat BHWC order: a gather with stride 1.
absl::StatusOr<shaders::GeneratedShader> ReshapeShader(const shaders::NodeContext& ctx) {
  const int64_t n = NumElements(ctx.output(0).shape);
  return Gather(ctx, {{n}, {1}, 0});
}

}  // namespace

std::vector<OpDefinition> ReshapeOps() {
  return {
      {.op = OpKind::kReshape,
       .decode = DecodeReshape,
       .encode = EncodeReshape,
       .validate = ValidateReshape,
       .cpu_kernel = MakeKernel<ReshapeKernel>,
       .is_identity = AlwaysIdentity,
       .gpu = {ReshapeShader},
       .quantize = {.output = QuantizeRule::Output::kInput}},
      {.op = OpKind::kSqueeze,
       .decode = DecodeSqueeze,
       .encode = EncodeSqueeze,
       .validate = ValidateSqueeze,
       .cpu_kernel = MakeKernel<ReshapeKernel>,
       .is_identity = AlwaysIdentity,
       .gpu = {ReshapeShader},
       .quantize = {.output = QuantizeRule::Output::kInput}},
      // TFLite's ExpandDimsOptions is empty; mgd writes none.
      {.op = OpKind::kExpandDims,
       .validate = ValidateExpandDims,
       .cpu_kernel = MakeKernel<ReshapeKernel>,
       .is_identity = AlwaysIdentity,
       .gpu = {ReshapeShader},
       .quantize = {.output = QuantizeRule::Output::kInput}},
  };
}

}  // namespace mgd::ops
