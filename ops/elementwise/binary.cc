// The binary elementwise ops with numpy broadcasting: ADD, SUB, MUL, DIV
// (with a fused activation), MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, POW,
// FLOOR_DIV, FLOOR_MOD, and PRELU (whose alpha broadcasts to the input);
// ADD, SUB and MUL also of int8 and uint8 tensors (binary_quantized.cc).
#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/elementwise/binary_quantized.h"
#include "ops/elementwise/elementwise.h"
#include "ops/tflite_io.h"

namespace mgd::ops {

absl::StatusOr<Shape> BroadcastShape(const KernelContext& ctx, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return ctx.Error(fmt::format("input shapes {} and {} do not broadcast", ShapeToString(a), ShapeToString(b)));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Strides of `shape` seen through the output shape `out`: 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out) {
  const std::vector<int64_t> own = Strides(shape);
  std::vector<int64_t> strides(out.size(), 0);
  const size_t offset = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    strides[i + offset] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.ActivationOk(AttributesOf<ElementwiseAttributes>(c.node().attributes).activation));
  const OpKind op = c.node().op;
  const DataType type = c.Out(0).type;
  if ((op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul) &&
      (type == DataType::kInt8 || type == DataType::kUInt8)) {
    // Quantized (binary_quantized.cc): inputs of the output's type.
    for (size_t i = 0; i < 2; ++i) MGD_RETURN_IF_ERROR(c.InputType(i, {type}));
    return absl::OkStatus();
  }
  for (size_t i = 0; i < 2; ++i) MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kFloat32}));
  return c.OutputType(0, DataType::kFloat32);
}

template <typename Options>
absl::StatusOr<Attributes> DecodeActivation(const DecodeContext& file) {
  auto options = file.OptionsAs<Options>();
  if (!options.ok()) return options.status();
  const Options* o = *options;
  return ElementwiseAttributes{o != nullptr ? ActivationFromTfl(o->fused_activation_function()) : Activation::kNone};
}

tflite::ActivationFunctionType FusedActivation(const Node& node) {
  return ToTfl(AttributesOf<ElementwiseAttributes>(node.attributes).activation);
}
void EncodeAdd(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateAddOptions(file.builder, FusedActivation(node)));
}
void EncodeSub(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSubOptions(file.builder, FusedActivation(node)));
}
void EncodeMul(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateMulOptions(file.builder, FusedActivation(node)));
}
void EncodeDiv(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateDivOptions(file.builder, FusedActivation(node)));
}

template <typename F>
void Broadcast(const TensorRef& a, const TensorRef& b, TensorRef& y, F f) {
  const float* ad = a.as<float>();
  const float* bd = b.as<float>();
  float* yd = y.as<float>();
  const int64_t n = y.elements();
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < n; ++i) yd[i] = f(ad[i], bd[i]);
    return;
  }
  if (b.elements() == 1) {
    for (int64_t i = 0; i < n; ++i) yd[i] = f(ad[i], bd[0]);
    return;
  }
  if (a.elements() == 1) {
    for (int64_t i = 0; i < n; ++i) yd[i] = f(ad[0], bd[i]);
    return;
  }
  // Odometer over the output with incrementally maintained input offsets;
  // the innermost dimension runs as a tight loop.
  const Shape& shape = y.shape;
  const size_t rank = shape.size();
  const auto sa = BroadcastStrides(a.shape, shape);
  const auto sb = BroadcastStrides(b.shape, shape);
  const int inner = shape[rank - 1];
  const int64_t ia_step = sa[rank - 1], ib_step = sb[rank - 1];
  std::vector<int> index(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t out = 0; out < n; out += inner) {
    for (int i = 0; i < inner; ++i) yd[out + i] = f(ad[oa + i * ia_step], bd[ob + i * ib_step]);
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++index[ud] < shape[ud]) {
        oa += sa[ud];
        ob += sb[ud];
        break;
      }
      oa -= sa[ud] * (shape[ud] - 1);
      ob -= sb[ud] * (shape[ud] - 1);
      index[ud] = 0;
    }
  }
}

// Each op's function of two values; `act` is the fused activation of ADD,
// SUB, MUL and DIV.
float Add(float p, float q, const ActivationRange& act) { return act.Apply(p + q); }
float Sub(float p, float q, const ActivationRange& act) { return act.Apply(p - q); }
float Mul(float p, float q, const ActivationRange& act) { return act.Apply(p * q); }
float Div(float p, float q, const ActivationRange& act) { return act.Apply(p / q); }
float Maximum(float p, float q, const ActivationRange&) { return MaxKeepingNan(p, q); }
float Minimum(float p, float q, const ActivationRange&) { return MinKeepingNan(p, q); }
float SquaredDifference(float p, float q, const ActivationRange&) { return (p - q) * (p - q); }
float Prelu(float p, float q, const ActivationRange&) { return p >= 0.0f ? p : p * q; }
float Pow(float p, float q, const ActivationRange&) { return std::pow(p, q); }
float FloorDiv(float p, float q, const ActivationRange&) { return std::floor(p / q); }
// TFLite's: the remainder takes the divisor's sign.
float FloorMod(float p, float q, const ActivationRange&) {
  const float r = std::fmod(p, q);
  return r != 0.0f && ((q < 0.0f) != (r < 0.0f)) ? r + q : r;
}

using BinaryFunction = float (*)(float, float, const ActivationRange&);

// The function is a template argument, so that the loops inline it.
template <BinaryFunction kFunction>
class BinaryKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    act_ = RangeOf(AttributesOf<ElementwiseAttributes>(ctx.node->attributes).activation);
    MGD_ASSIGN_OR_RETURN(Shape shape, BroadcastShape(ctx, ctx.in(0).shape, ctx.in(1).shape));
    if (ctx.node->op == OpKind::kPrelu && shape != ctx.in(0).shape) {
      return ctx.Error(fmt::format("alpha {} does not broadcast to the input {}", ShapeToString(ctx.in(1).shape),
                                   ShapeToString(ctx.in(0).shape)));
    }
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, shape));
    quantized_.reset();
    if (ctx.in(0).type != DataType::kFloat32) {
      MGD_ASSIGN_OR_RETURN(quantized_, PrepareQuantizedBinary(ctx));
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (quantized_ != nullptr) return quantized_->Invoke(ctx);
    const ActivationRange act = act_;
    Broadcast(ctx.in(0), ctx.in(1), ctx.out(0), [act](float p, float q) { return kFunction(p, q, act); });
    return absl::OkStatus();
  }

 private:
  ActivationRange act_;
  std::unique_ptr<Kernel> quantized_;  // 8-bit ADD, SUB and MUL
};

constexpr QuantizeRule kCalibrated{.output = QuantizeRule::Output::kCalibrated};  // 8-bit ADD, SUB, MUL

template <BinaryFunction kFunction>
OpDefinition Binary(OpKind op, absl::StatusOr<Attributes> (*decode)(const DecodeContext&) = nullptr,
                    void (*encode)(const Node&, EncodeContext&) = nullptr, QuantizeRule quantize = {}) {
  return {.op = op,
          .decode = decode,
          .encode = encode,
          .validate = Validate,
          .cpu_kernel = MakeKernel<BinaryKernel<kFunction>>,
          .gpu = {ElementwiseShader},
          .elementwise = ElementwiseUpdateOf,
          .quantize = quantize};
}

}  // namespace

std::vector<OpDefinition> BinaryOps() {
  return {
      Binary<Add>(OpKind::kAdd, DecodeActivation<tflite::AddOptions>, EncodeAdd, kCalibrated),
      Binary<Sub>(OpKind::kSub, DecodeActivation<tflite::SubOptions>, EncodeSub, kCalibrated),
      Binary<Mul>(OpKind::kMul, DecodeActivation<tflite::MulOptions>, EncodeMul, kCalibrated),
      Binary<Div>(OpKind::kDiv, DecodeActivation<tflite::DivOptions>, EncodeDiv),
      Binary<Maximum>(OpKind::kMaximum),
      Binary<Minimum>(OpKind::kMinimum),
      Binary<SquaredDifference>(OpKind::kSquaredDifference),
      Binary<Prelu>(OpKind::kPrelu),
      Binary<Pow>(OpKind::kPow),
      Binary<FloorDiv>(OpKind::kFloorDiv),
      Binary<FloorMod>(OpKind::kFloorMod),
  };
}

}  // namespace mgd::ops
