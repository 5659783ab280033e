#include "ops/split/split.h"

#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// The inputs' positions: SPLIT is (axis, input), SPLIT_V (input, sizes, axis).
struct Inputs {
  size_t data, axis;
  int sizes;  // -1: none (SPLIT)
};
Inputs InputsOf(OpKind op) { return op == OpKind::kSplit ? Inputs{1, 0, -1} : Inputs{0, 2, 1}; }

template <typename Options>
absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<Options>();
  if (!options.ok()) return options.status();
  return SplitAttributes{*options ? (*options)->num_splits() : 0};
}

void EncodeSplit(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSplitOptions(file.builder, AttributesOf<SplitAttributes>(node.attributes).num_splits));
}
void EncodeSplitV(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSplitVOptions(file.builder, AttributesOf<SplitAttributes>(node.attributes).num_splits));
}

absl::Status Validate(const NodeChecker& c) {
  const Inputs in = InputsOf(c.node().op);
  const int num_splits = AttributesOf<SplitAttributes>(c.node().attributes).num_splits;
  MGD_RETURN_IF_ERROR(c.Positive("num_splits", num_splits));
  const size_t arity = in.sizes < 0 ? 2 : 3;
  MGD_RETURN_IF_ERROR(c.Arity(arity, arity, static_cast<size_t>(num_splits)));
  MGD_RETURN_IF_ERROR(c.InputType(in.data, {DataType::kFloat32}));
  MGD_RETURN_IF_ERROR(c.InputType(in.axis, {DataType::kInt32, DataType::kInt64}));
  MGD_RETURN_IF_ERROR(c.Constant(in.axis));
  if (in.sizes >= 0) {
    MGD_RETURN_IF_ERROR(c.InputType(static_cast<size_t>(in.sizes), {DataType::kInt32, DataType::kInt64}));
    MGD_RETURN_IF_ERROR(c.Constant(static_cast<size_t>(in.sizes)));
  }
  for (int i = 0; i < num_splits; ++i) MGD_RETURN_IF_ERROR(c.OutputType(static_cast<size_t>(i), DataType::kFloat32));
  return absl::OkStatus();
}

Shape PartShape(const Shape& shape, const SplitPlan& plan, size_t part) {
  Shape s = shape;
  s[static_cast<size_t>(plan.axis)] = plan.sizes[part];
  return s;
}

class SplitKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const Inputs in = InputsOf(ctx.node->op);
    const TensorRef& x = ctx.in(in.data);
    if (ctx.in(in.axis).elements() != 1) {
      return ctx.Error(fmt::format("axis has {} elements, expected 1", ctx.in(in.axis).elements()));
    }
    std::vector<int64_t> sizes;
    if (in.sizes >= 0) {
      const TensorRef& s = ctx.in(static_cast<size_t>(in.sizes));
      for (int64_t i = 0; i < s.elements(); ++i) sizes.push_back(IndexValue(s, i));
    }
    auto plan = PlanSplit(x.shape, IndexValue(ctx.in(in.axis), 0), sizes, static_cast<int>(ctx.node->outputs.size()));
    if (!plan.ok()) return ctx.Error(std::string(plan.status().message()));
    plan_ = *plan;
    for (size_t j = 0; j < plan_.sizes.size(); ++j) MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(j, PartShape(x.shape, plan_, j)));
    return absl::OkStatus();
  }

  // Each row above the axis is the outputs' rows one after another.
  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(InputsOf(ctx.node->op).data);
    const size_t axis = static_cast<size_t>(plan_.axis);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    const float* src = x.as<float>();
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t j = 0; j < plan_.sizes.size(); ++j) {
        const int64_t n = plan_.sizes[j] * inner;
        std::memcpy(ctx.out(j).as<float>() + o * n, src, static_cast<size_t>(n) * sizeof(float));
        src += n;
      }
    }
    return absl::OkStatus();
  }

 private:
  SplitPlan plan_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// One dispatch writes every output. Along batch, height or width each input
// vec4 goes whole to one output. Along channels the grid runs over the
// outputs' slices one after another, each output vec4 gathering its lanes.
absl::StatusOr<GeneratedShader> SplitShader(const NodeContext& ctx) {
  const Inputs inputs = InputsOf(ctx.node->op);
  const size_t parts = ctx.node->outputs.size();
  // The input and the outputs within the 8 buffers every device offers.
  if (parts > 7) return absl::UnimplementedError(fmt::format("{} outputs (the GPU takes at most 7)", parts));
  std::vector<int64_t> sizes;
  if (inputs.sizes >= 0) sizes = ConstantInts(ctx.input(static_cast<size_t>(inputs.sizes)));
  const Shape& shape = ctx.input(inputs.data).shape;
  const std::vector<int64_t> axis_value = ConstantInts(ctx.input(inputs.axis));
  if (axis_value.size() != 1) return absl::UnimplementedError("axis is not a scalar");
  auto plan = PlanSplit(shape, axis_value[0], sizes, static_cast<int>(parts));
  if (!plan.ok()) return plan.status();
  auto in = InputBhwc(ctx, inputs.data);
  if (!in.ok()) return in.status();
  std::vector<layout::Bhwc> outs;
  for (size_t j = 0; j < parts; ++j) {
    auto out = OutputBhwc(ctx, j);
    if (!out.ok()) return out.status();
    outs.push_back(*out);
  }
  const int axis = BhwcAxis(plan->axis, static_cast<int>(shape.size()));
  layout::Bhwc grid = *in;
  if (axis == 3) {
    int slices = 0;
    for (const layout::Bhwc& o : outs) slices += o.slices();
    grid.channels = 4 * slices;
  }
  GeneratedShader g = StartShader(ctx, grid, {static_cast<int>(inputs.data)});
  for (size_t j = 1; j < parts; ++j) g.code.buffers.push_back({fmt::format("out{}", j), "", BufferAccess::kWrite, true});
  g.linkable = false;
  ShaderParams& params = g.code.params;
  std::string& body = g.code.body;
  body = glsl::OutputPrologue(params, grid);
  const char* coords[4] = {"b", "y", "x", "s"};
  int start = 0, channel = 0;
  for (size_t j = 0; j < parts; ++j) {
    const layout::Bhwc& o = outs[j];
    const std::string out = fmt::format("out{}", j);
    const int extent = axis == 3 ? o.slices() : axis == 0 ? o.batch : axis == 1 ? o.height : o.width;
    std::string c[4] = {"b", "s", "y", "x"};  // index order of glsl::Index
    const int slot = axis == 0 ? 0 : axis == 3 ? 1 : axis == 1 ? 2 : 3;
    c[slot] = fmt::format("({} - {})", coords[axis], params.Int(fmt::format("start{}", j), start));
    body += fmt::format("  {}if ({} < {}) {{\n", j ? "else " : "", coords[axis],
                        params.Int(fmt::format("end{}", j), start + extent));
    if (axis != 3) {
      body += fmt::format("    {}_set({}, {});\n", out, glsl::Index(params, out, o, c[0], c[1], c[2], c[3]),
                          glsl::Read(params, "in0", *in, "b", "s", "y", "x"));
    } else {
      body += fmt::format(
          "    int os = {os};\n"
          "    vec4 value = vec4(0.0);\n"
          "    MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
          "      int c = os * 4 + k;\n"
          "      if (c >= {C}) break;\n"
          "      int ic = c + {first};\n"
          "      value[k] = {read}[ic % 4];\n"
          "    }}\n"
          "    {out}_set({index}, value);\n",
          fmt::arg("os", c[1]), fmt::arg("C", params.Int(out + "_c", o.channels)),
          fmt::arg("first", params.Int(fmt::format("first{}", j), channel)),
          fmt::arg("read", glsl::Read(params, "in0", *in, "b", "ic / 4", "y", "x")), fmt::arg("out", out),
          fmt::arg("index", glsl::Index(params, out, o, "b", "os", "y", "x")));
    }
    body += "  }\n";
    start += extent;
    channel += o.channels;
  }
  return g;
}

}  // namespace

absl::StatusOr<SplitPlan> PlanSplit(const Shape& shape, int64_t axis, const std::vector<int64_t>& size_splits,
                                    int outputs) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(fmt::format("axis {} is out of range for input {}", axis, ShapeToString(shape)));
  }
  SplitPlan plan;
  plan.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  const int extent = shape[static_cast<size_t>(plan.axis)];
  if (size_splits.empty()) {
    if (outputs < 1 || extent % outputs != 0) {
      return absl::InvalidArgumentError(
          fmt::format("dimension {} of input {} does not split into {} equal parts", plan.axis, ShapeToString(shape), outputs));
    }
    plan.sizes.assign(static_cast<size_t>(outputs), extent / outputs);
    return plan;
  }
  if (static_cast<int>(size_splits.size()) != outputs) {
    return absl::InvalidArgumentError(fmt::format("size_splits has {} values for {} outputs", size_splits.size(), outputs));
  }
  int64_t known = 0;
  int inferred = -1;
  for (size_t j = 0; j < size_splits.size(); ++j) {
    const int64_t v = size_splits[j];
    if (v == -1 && inferred < 0) {
      inferred = static_cast<int>(j);
    } else if (v < 0) {
      return absl::InvalidArgumentError(fmt::format("size_splits[{}] is {}; only one may be -1", j, v));
    } else {
      known += v;
    }
  }
  if (known > extent || (inferred < 0 && known != extent)) {
    return absl::InvalidArgumentError(fmt::format("size_splits {} do not add up to dimension {} of input {}",
                                                  fmt::join(size_splits, ","), plan.axis, ShapeToString(shape)));
  }
  for (int64_t v : size_splits) plan.sizes.push_back(static_cast<int>(v == -1 ? 0 : v));
  if (inferred >= 0) plan.sizes[static_cast<size_t>(inferred)] = static_cast<int>(extent - known);
  return plan;
}

std::vector<OpDefinition> SplitOps() {
  return {{.op = OpKind::kSplit,
           .decode = Decode<tflite::SplitOptions>,
           .encode = EncodeSplit,
           .validate = Validate,
           .cpu_kernel = MakeKernel<SplitKernel>,
           .gpu = {SplitShader}},
          {.op = OpKind::kSplitV,
           .decode = Decode<tflite::SplitVOptions>,
           .encode = EncodeSplitV,
           .validate = Validate,
           .cpu_kernel = MakeKernel<SplitKernel>,
           .gpu = {SplitShader}}};
}

}  // namespace mgd::ops
