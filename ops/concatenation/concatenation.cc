// CONCATENATION along any axis. Of int8 or uint8 tensors, an input whose
// parameters are not the output's is requantized on the way, as TFLite's
// ConcatenationWithScaling does, through a table of its 256 values.
#include "ops/concatenation/concatenation.h"

#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::ConcatenationOptions>();
  if (!options.ok()) return options.status();
  ConcatenationAttributes a;
  if (const tflite::ConcatenationOptions* o = *options) {
    a.axis = o->axis();
    a.activation = ActivationFromTfl(o->fused_activation_function());
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<ConcatenationAttributes>(node.attributes);
  file.Set(tflite::CreateConcatenationOptions(file.builder, a.axis, ToTfl(a.activation)));
}

absl::Status Validate(const NodeChecker& c) {
  const Node& node = c.node();
  if (node.inputs.empty()) return c.Fail("has no inputs");
  MGD_RETURN_IF_ERROR(c.Arity(1, node.inputs.size(), 1));
  MGD_RETURN_IF_ERROR(c.ActivationOk(AttributesOf<ConcatenationAttributes>(node.attributes).activation));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!c.Present(i)) return c.Fail(fmt::format("input {} is omitted", i));
    MGD_RETURN_IF_ERROR(c.InputType(i, {c.Out(0).type}));
  }
  return quantized::FloatOr8Bit(c);
}

class ConcatenationKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const auto& a = AttributesOf<ConcatenationAttributes>(ctx.node->attributes);
    act_ = RangeOf(a.activation);
    const TensorRef& first = ctx.in(0);
    axis_ = a.axis < 0 ? a.axis + first.rank() : a.axis;
    if (axis_ < 0 || axis_ >= first.rank()) {
      return ctx.Error(fmt::format("field axis: {} is out of range for rank {}", a.axis, first.rank()));
    }
    Shape expected = first.shape;
    expected[static_cast<size_t>(axis_)] = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const TensorRef& t = ctx.in(i);
      bool ok = t.rank() == first.rank();
      for (int d = 0; ok && d < first.rank(); ++d) ok = d == axis_ || t.dim(d) == first.dim(d);
      if (!ok) {
        return ctx.Error(fmt::format("input {} has shape {}, which does not concatenate with {} on axis {}", i,
                                     ShapeToString(t.shape), ShapeToString(first.shape), axis_));
      }
      expected[static_cast<size_t>(axis_)] += t.dim(axis_);
    }
    tables_.clear();
    if (quantized::Is8Bit(first.type)) MGD_RETURN_IF_ERROR(PrepareTables(ctx, a.activation));
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    TensorRef& y = ctx.out(0);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= y.dim(d);
    for (int d = axis_ + 1; d < y.rank(); ++d) inner *= y.dim(d);
    const int64_t out_row = y.dim(axis_) * inner;
    int64_t column = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const TensorRef& t = ctx.in(i);
      const int64_t row = t.dim(axis_) * inner;
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t from = o * row, to = o * out_row + column;
        if (tables_.empty()) {
          for (int64_t k = 0; k < row; ++k) y.as<float>()[to + k] = act_.Apply(t.as<float>()[from + k]);
        } else {
          tables_[i].Map(t, from, y, to, row);
        }
      }
      column += row;
    }
    return absl::OkStatus();
  }

 private:
  // Each 8-bit input's values on the output's scale, clamped to the fused
  // activation.
  absl::Status PrepareTables(const KernelContext& ctx, Activation activation) {
    const TensorRef& y = ctx.out(0);
    MGD_ASSIGN_OR_RETURN(const quantized::Params out, quantized::PerTensor(ctx, y));
    const quantized::IntRange range = quantized::ActivationRangeOf(activation, y.type, out);
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      MGD_ASSIGN_OR_RETURN(const quantized::Params in, quantized::PerTensor(ctx, ctx.in(i)));
      const bool same = in.scale == out.scale && in.zero_point == out.zero_point;
      tables_.emplace_back(y.type, [&](int32_t q) {
        const int32_t v = same ? q : quantized::Quantize(quantized::Dequantize(q, in), out, y.type);
        return std::clamp(v, range.lo, range.hi);
      });
    }
    return absl::OkStatus();
  }

  int axis_ = 0;
  ActivationRange act_;
  std::vector<quantized::Table> tables_;  // of 8-bit inputs: each value's output
};

absl::StatusOr<shaders::GeneratedShader> ConcatenationShader(const shaders::NodeContext& ctx) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const auto& a = AttributesOf<ConcatenationAttributes>(ctx.node->attributes);
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return out.status();
  const int rank = static_cast<int>(ctx.output(0).shape.size());
  const int axis = BhwcAxis(a.axis, rank);
  // One buffer per input plus the output, within the 8 every device offers.
  if (ctx.node->inputs.size() > 7) {
    return absl::UnimplementedError(fmt::format("CONCATENATION of {} inputs (the GPU takes at most 7)", ctx.node->inputs.size()));
  }
  std::vector<layout::Bhwc> ins;
  std::vector<int> inputs;
  bool whole_slices = true;
  for (size_t i = 0; i < ctx.node->inputs.size(); ++i) {
    auto in = InputBhwc(ctx, i);
    if (!in.ok()) return in.status();
    ins.push_back(*in);
    inputs.push_back(static_cast<int>(i));
    if (axis == 3 && i + 1 < ctx.node->inputs.size() && in->channels % 4 != 0) whole_slices = false;
  }
  GeneratedShader g = StartShader(ctx, *out, inputs);
  const char* coord[4] = {"b", "y", "x", "c"};
  auto size = [](const layout::Bhwc& t, int d) { return d == 0 ? t.batch : d == 1 ? t.height : d == 2 ? t.width : t.channels; };
  std::string& body = g.code.body;
  ShaderParams& params = g.code.params;
  if (axis == 3 && !whole_slices) {
    std::string lane;
    int offset = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      lane += fmt::format("    {}if (c < {}) {{ int ic = c - {}; value[k] = {}[ic % 4]; }}\n", i ? "else " : "",
                          params.Int(fmt::format("end{}", i), offset + ins[i].channels),
                          params.Int(fmt::format("offset{}", i), offset),
                          glsl::Read(params, fmt::format("in{}", i), ins[i], "b", "ic / 4", "y", "x"));
      offset += ins[i].channels;
    }
    body += glsl::ForEachLane(params, *out, lane);
  } else {
    body += "  vec4 value = vec4(0.0);\n";
    const std::string position = axis == 3 ? "s" : coord[axis];
    int offset = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      const int extent = axis == 3 ? ins[i].slices() : size(ins[i], axis);
      std::string c[4] = {"b", "s", "y", "x"};  // index order of glsl::Index
      const int slot = axis == 0 ? 0 : axis == 3 ? 1 : axis == 1 ? 2 : 3;
      c[slot] = fmt::format("({} - {})", position, params.Int(fmt::format("offset{}", i), offset));
      body += fmt::format("  {}if ({} < {}) value = {};\n", i ? "else " : "", position,
                          params.Int(fmt::format("end{}", i), offset + extent),
                          glsl::Read(params, fmt::format("in{}", i), ins[i], c[0], c[1], c[2], c[3]));
      offset += extent;
    }
  }
  body += glsl::Activation(a.activation, "value");
  return g;
}

bool OneInput(const Graph&, const Node& node) { return node.inputs.size() == 1; }

}  // namespace

std::vector<OpDefinition> ConcatenationOps() {
  return {{.op = OpKind::kConcatenation,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<ConcatenationKernel>,
           .is_identity = OneInput,
           .gpu = {ConcatenationShader},
           .quantize = {.output = QuantizeRule::Output::kCalibrated,
                        .inputs_share_output = true,
                        .moves_values = ClampsOnTheGrid<ConcatenationAttributes>}}};
}

}  // namespace mgd::ops
