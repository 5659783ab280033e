// MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD over constant axes. Of
// int8 or uint8 tensors as TFLite's QuantizedMeanOrSum: the input's real
// values reduced, the result quantized to the output's parameters.
#include "ops/reduce/reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::ReducerOptions>();
  if (!options.ok()) return options.status();
  return ReducerAttributes{*options && (*options)->keep_dims()};
}

void Encode(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateReducerOptions(file.builder, AttributesOf<ReducerAttributes>(node.attributes).keep_dims));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32, DataType::kInt64}));
  MGD_RETURN_IF_ERROR(c.Constant(1));
  return quantized::FloatOr8Bit(c);
}

// Each reduction: where it starts, how it takes one more value, and (MEAN)
// what it does at the end; in C++ for the CPU and GLSL for the GPU.
struct Reduction {
  double start;
  double (*take)(double acc, double v);
  const char* glsl_start;  // of a highp float (infinities from their bits: 1.0 / 0.0 is unspecified in GLSL ES)
  const char* glsl_take;   // {0}: the accumulator, {1}: a value
  bool mean;
};

Reduction ReductionOf(OpKind op) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (op) {
    case OpKind::kReduceMax:
      return {-kInf, [](double a, double v) { return std::max(a, v); }, "-uintBitsToFloat(0x7f800000u)",
              "max({0}, {1})", false};
    case OpKind::kReduceMin:
      return {kInf, [](double a, double v) { return std::min(a, v); }, "uintBitsToFloat(0x7f800000u)",
              "min({0}, {1})", false};
    case OpKind::kReduceProd: return {1.0, [](double a, double v) { return a * v; }, "1.0", "{0} * {1}", false};
    case OpKind::kSum: return {0.0, [](double a, double v) { return a + v; }, "0.0", "{0} + {1}", false};
    default: return {0.0, [](double a, double v) { return a + v; }, "0.0", "{0} + {1}", true};  // MEAN
  }
}

class ReduceKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    reduction_ = ReductionOf(ctx.node->op);
    const bool keep_dims = AttributesOf<ReducerAttributes>(ctx.node->attributes).keep_dims;
    const TensorRef& x = ctx.in(0);
    const TensorRef& axes = ctx.in(1);
    reduced_.assign(x.shape.size(), false);
    for (int64_t i = 0; i < axes.elements(); ++i) {
      int64_t axis = IndexValue(axes, i);
      if (axis < 0) axis += x.rank();
      if (axis < 0 || axis >= x.rank()) {
        return ctx.Error(fmt::format("axis {} is out of range for input {}", IndexValue(axes, i), ShapeToString(x.shape)));
      }
      reduced_[static_cast<size_t>(axis)] = true;
    }
    Shape expected;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      if (!reduced_[d]) expected.push_back(x.shape[d]);
      else if (keep_dims) expected.push_back(1);
    }
    if (quantized::Is8Bit(x.type)) {
      MGD_ASSIGN_OR_RETURN(in_, quantized::PerTensor(ctx, x));
      MGD_ASSIGN_OR_RETURN(out_, quantized::PerTensor(ctx, ctx.out(0)));
    }
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    // Output index of each input element: drop reduced dims from the index.
    const size_t rank = x.shape.size();
    Shape kept_shape;
    for (size_t d = 0; d < rank; ++d) kept_shape.push_back(reduced_[d] ? 1 : x.shape[d]);
    const auto out_strides = Strides(kept_shape);
    std::vector<double> acc(static_cast<size_t>(y.elements()), reduction_.start);
    std::vector<int> index(rank, 0);
    const bool quantized = quantized::Is8Bit(x.type);
    const int64_t n = x.elements();
    for (int64_t i = 0; i < n; ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (!reduced_[d]) o += index[d] * out_strides[d];
      }
      const float v = quantized ? quantized::Dequantize(quantized::Read(x, i), in_) : x.as<float>()[i];
      acc[static_cast<size_t>(o)] = reduction_.take(acc[static_cast<size_t>(o)], v);
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        if (++index[static_cast<size_t>(d)] < x.shape[static_cast<size_t>(d)]) break;
        index[static_cast<size_t>(d)] = 0;
      }
    }
    const double count = static_cast<double>(std::max<int64_t>(y.elements() > 0 ? n / y.elements() : 1, 1));
    for (size_t i = 0; i < acc.size(); ++i) {
      const auto v = static_cast<float>(reduction_.mean ? acc[i] / count : acc[i]);
      if (quantized) {
        quantized::Write(y, static_cast<int64_t>(i), quantized::Quantize(v, out_, y.type));
      } else {
        y.as<float>()[i] = v;
      }
    }
    return absl::OkStatus();
  }

 private:
  Reduction reduction_{};
  std::vector<bool> reduced_;
  quantized::Params in_, out_;  // of 8-bit tensors
};

// keep_dims false where the kept axes land on other BHWC axes of the output
// than of the input ([B,W,C] over C is [B,W]: W moves from x to the
// channels): each output lane finds its input position and reduces over
// single values, in the reference's order.
absl::StatusOr<shaders::GeneratedShader> ReduceToOtherAxes(const shaders::NodeContext& ctx, const Reduction& reduction,
                                                           const layout::Bhwc& in, const layout::Bhwc& out,
                                                           const bool (&reduced)[4],
                                                           const std::vector<bool>& reduced_axis, int count) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const int rank = static_cast<int>(reduced_axis.size());
  const int out_rank = static_cast<int>(ctx.output(0).shape.size());
  if (std::count(reduced_axis.begin(), reduced_axis.end(), false) != out_rank) {  // keep_dims, yet another layout
    return absl::UnimplementedError(fmt::format("{} to {} is not supported on the GPU", OpName(ctx.node->op),
                                                ShapeToString(ctx.output(0).shape)));
  }
  // Output coordinates (ForEachLane's c is the lane's channel); each kept
  // input axis reads the output axis it became, the input's BHWC axes of no
  // tensor axis read 0.
  static constexpr const char* kAxisName[4] = {"b", "y", "x", "c"};
  std::string source[4] = {"0", "0", "0", "0"};
  for (int i = 0, j = 0; i < rank; ++i) {
    if (!reduced_axis[static_cast<size_t>(i)]) source[BhwcAxis(i, rank)] = kAxisName[BhwcAxis(j++, out_rank)];
  }
  GeneratedShader g = StartShader(ctx, out, {0});
  ShaderParams& params = g.code.params;
  const int extent[4] = {in.batch, in.height, in.width, in.channels};
  std::string lane = fmt::format("    highp float acc = {};\n", reduction.glsl_start);
  std::string loops, close;
  for (int a = 0; a < 4; ++a) {
    if (!reduced[a]) {
      lane += fmt::format("    int i{} = {};\n", kAxisName[a], source[a]);
      continue;
    }
    loops += fmt::format("    MGD_LOOP for (int i{0} = 0; i{0} < {1}; ++i{0}) {{\n", kAxisName[a],
                         params.Int(fmt::format("extent_{}", kAxisName[a]), extent[a]));
    close += "    }\n";
  }
  const std::string value = glsl::Read(params, "in0", in, "ib", "ic / 4", "iy", "ix") + "[ic % 4]";
  lane += loops + fmt::format("      acc = {};\n", fmt::format(fmt::runtime(reduction.glsl_take), "acc", value)) + close;
  lane += reduction.mean
              ? fmt::format("    value[k] = float(acc * (1.0 / {}));\n", params.Float("count", static_cast<float>(count)))
              : "    value[k] = float(acc);\n";
  g.code.body += glsl::ForEachLane(params, out, lane);
  return g;
}

absl::StatusOr<shaders::GeneratedShader> ReduceShader(const shaders::NodeContext& ctx) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const std::string name = OpName(ctx.node->op);
  const Reduction reduction = ReductionOf(ctx.node->op);
  auto in = InputBhwc(ctx, 0);
  if (!in.ok()) return in.status();
  const int rank = static_cast<int>(ctx.input(0).shape.size());
  if (!ctx.input(1).is_constant) return absl::UnimplementedError(name + " axes must be constant for the GPU");
  bool reduced[4] = {false, false, false, false};
  std::vector<bool> reduced_axis(static_cast<size_t>(rank), false);  // by the input's own axes
  for (int64_t axis : ConstantInts(ctx.input(1))) {
    if (axis < -rank || axis >= rank) return absl::UnimplementedError("axis out of range");
    reduced[BhwcAxis(static_cast<int>(axis), rank)] = true;
    reduced_axis[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = true;
  }
  // The output as the input with reduced dimensions 1 (keep_dims); other
  // ranks' views must agree with it.
  const layout::Bhwc kept{reduced[0] ? 1 : in->batch, reduced[1] ? 1 : in->height, reduced[2] ? 1 : in->width,
                          reduced[3] ? 1 : in->channels};
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) {
    return absl::UnimplementedError(
        fmt::format("{} to {} is not supported on the GPU", name, ShapeToString(ctx.output(0).shape)));
  }
  const int count = (reduced[0] ? in->batch : 1) * (reduced[1] ? in->height : 1) * (reduced[2] ? in->width : 1) *
                    (reduced[3] ? in->channels : 1);
  if (!(*out == kept)) return ReduceToOtherAxes(ctx, reduction, *in, *out, reduced, reduced_axis, count);
  GeneratedShader g = StartShader(ctx, *out, {0});
  ShaderParams& params = g.code.params;
  auto range = [&](bool r, int n, const char* v) {
    return r ? fmt::format("int i{0} = 0; i{0} < {1}; ++i{0}", v, params.Int(fmt::format("extent_{}", v), n))
             : fmt::format("int i{0} = {0}; i{0} <= {0}; ++i{0}", v);
  };
  // fp32 accumulators, as a pool's. Over channels only the first lane is
  // the output's; the others stay zero, as padding lanes are.
  g.code.body += reduced[3] ? fmt::format("  highp vec4 acc = vec4({}, 0.0, 0.0, 0.0);\n", reduction.glsl_start)
                            : fmt::format("  highp vec4 acc = vec4({});\n", reduction.glsl_start);
  g.code.body += fmt::format("  MGD_LOOP for ({}) MGD_LOOP for ({}) MGD_LOOP for ({}) MGD_LOOP for ({}) {{\n",
                             range(reduced[0], in->batch, "b"), range(reduced[1], in->height, "y"),
                             range(reduced[2], in->width, "x"), range(reduced[3], in->slices(), "s"));
  g.code.body += fmt::format("    vec4 v = {};\n", glsl::Read(params, "in0", *in, "ib", "is", "iy", "ix"));
  if (!reduced[3]) {
    g.code.body += fmt::format("    acc = {};\n", fmt::format(fmt::runtime(reduction.glsl_take), "acc", "v"));
  } else if (reduction.mean || ctx.node->op == OpKind::kSum) {
    // Padding lanes are zero, so summing all four lanes of a slice is exact.
    g.code.body += "    acc.x += (v.x + v.y) + (v.z + v.w);\n";
  } else {
    // The last slice's padding lanes are no channels: left out.
    g.code.body += fmt::format("    for (int k = 0; k < 4; ++k) {{ if (is * 4 + k < {}) acc.x = {}; }}\n",
                               params.Int("channels", in->channels),
                               fmt::format(fmt::runtime(reduction.glsl_take), "acc.x", "v[k]"));
  }
  g.code.body += "  }\n";
  if (reduction.mean) {
    g.code.body += fmt::format("  vec4 value = vec4(acc * (1.0 / {}));\n", params.Float("count", static_cast<float>(count)));
  } else {
    g.code.body += "  vec4 value = vec4(acc);\n";
  }
  return g;
}

}  // namespace

std::vector<OpDefinition> ReduceOps() {
  std::vector<OpDefinition> ops;
  for (OpKind op : {OpKind::kMean, OpKind::kSum, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kReduceProd}) {
    // The quantizer's: MEAN and SUM rescale; the max and min keep the
    // input's parameters; REDUCE_PROD stays float.
    QuantizeRule quantize;
    if (op == OpKind::kMean || op == OpKind::kSum) quantize.output = QuantizeRule::Output::kCalibrated;
    if (op == OpKind::kReduceMax || op == OpKind::kReduceMin) {
      quantize.output = QuantizeRule::Output::kInput;
      quantize.moves_values = AlwaysMovesValues;
    }
    ops.push_back({.op = op,
                   .decode = Decode,
                   .encode = Encode,
                   .validate = Validate,
                   .cpu_kernel = MakeKernel<ReduceKernel>,
                   .gpu = {ReduceShader},
                   .quantize = quantize});
  }
  return ops;
}

}  // namespace mgd::ops
