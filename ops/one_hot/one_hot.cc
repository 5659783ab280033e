#include "ops/one_hot/one_hot.h"

#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// out[o][d][n] = indices[o][n] == d ? on : off.
struct OneHotPlan {
  int64_t outer = 1, depth = 0, inner = 1;
  Shape output;
};

absl::StatusOr<OneHotPlan> PlanOneHot(const Shape& indices, int64_t depth, int32_t axis_attribute) {
  const int rank = static_cast<int>(indices.size());
  const int axis = axis_attribute == -1 ? rank : axis_attribute;
  if (axis < 0 || axis > rank) {
    return absl::InvalidArgumentError(fmt::format("axis {} is out of range for indices {}", axis_attribute, ShapeToString(indices)));
  }
  if (depth < 0 || depth > (1 << 24)) return absl::InvalidArgumentError(fmt::format("depth {} is out of range", depth));
  OneHotPlan plan;
  plan.depth = depth;
  for (int d = 0; d < rank; ++d) (d < axis ? plan.outer : plan.inner) *= indices[static_cast<size_t>(d)];
  plan.output = indices;
  plan.output.insert(plan.output.begin() + axis, static_cast<int>(depth));
  return plan;
}

constexpr std::initializer_list<DataType> kOutputTypes = {DataType::kFloat32, DataType::kInt32, DataType::kInt64,
                                                          DataType::kUInt8,   DataType::kInt8,  DataType::kBool};

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::OneHotOptions>();
  if (!options.ok()) return options.status();
  OneHotAttributes a;
  if (const tflite::OneHotOptions* o = *options) a.axis = o->axis();
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateOneHotOptions(file.builder, AttributesOf<OneHotAttributes>(node.attributes).axis));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(4, 4, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kInt32, DataType::kInt64}));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32}));
  MGD_RETURN_IF_ERROR(c.Constant(1));  // the output's shape
  const DataType out = c.Out(0).type;
  if (std::find(kOutputTypes.begin(), kOutputTypes.end(), out) == kOutputTypes.end()) {
    return c.Fail(fmt::format("output 0 has type {}, which ONE_HOT does not make", DataTypeName(out)));
  }
  MGD_RETURN_IF_ERROR(c.InputType(2, {out}));
  return c.InputType(3, {out});
}

class OneHotKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    if (ctx.in(1).elements() != 1) return ctx.Error(fmt::format("depth has {} elements, expected 1", ctx.in(1).elements()));
    for (size_t i : {2, 3}) {
      if (ctx.in(i).elements() != 1) {
        return ctx.Error(fmt::format("{} has {} elements, expected 1", i == 2 ? "on_value" : "off_value", ctx.in(i).elements()));
      }
    }
    auto plan = PlanOneHot(ctx.in(0).shape, IndexValue(ctx.in(1), 0), AttributesOf<OneHotAttributes>(ctx.node->attributes).axis);
    if (!plan.ok()) return ctx.Error(std::string(plan.status().message()));
    plan_ = *plan;
    return ctx.ExpectOutputShape(0, plan_.output);
  }

  // Any output dtype: on_value's or off_value's bytes per element.
  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& indices = ctx.in(0);
    const size_t size = ElementSize(ctx.out(0).type);
    const uint8_t* on = ctx.in(2).data;
    const uint8_t* off = ctx.in(3).data;
    // The output is [outer][depth][inner]; each index is read once.
    for (int64_t o = 0; o < plan_.outer; ++o) {
      uint8_t* block = ctx.out(0).data + static_cast<size_t>(o * plan_.depth * plan_.inner) * size;
      for (int64_t n = 0; n < plan_.inner; ++n) {
        const int64_t index = IndexValue(indices, o * plan_.inner + n);
        for (int64_t d = 0; d < plan_.depth; ++d) {
          std::memcpy(block + static_cast<size_t>(d * plan_.inner + n) * size, d == index ? on : off, size);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  OneHotPlan plan_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// A float output from constant depth, on_value and off_value; int32 indices
// as a constant or as the partition's own input buffer (read as given).
absl::StatusOr<GeneratedShader> OneHotShader(const NodeContext& ctx) {
  const Tensor& indices = ctx.input(0);
  if (!ctx.input(2).is_constant || !ctx.input(3).is_constant) {
    return absl::UnimplementedError("on_value and off_value are not constants");
  }
  const std::vector<float> on = ConstantFloats(ctx.input(2)), off = ConstantFloats(ctx.input(3));
  const std::vector<int64_t> depth = ConstantInts(ctx.input(1));
  if (on.size() != 1 || off.size() != 1 || depth.size() != 1) return absl::UnimplementedError("depth, on_value or off_value is not a scalar");
  auto plan = PlanOneHot(indices.shape, depth[0], AttributesOf<OneHotAttributes>(ctx.node->attributes).axis);
  if (!plan.ok()) return plan.status();
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {});
  ShaderParams& params = g.code.params;
  MGD_RETURN_IF_ERROR(AddIndexInput(ctx, g, 0, "indices"));
  g.code.body += glsl::ForEachLane(
      params, *out,
      fmt::format("    int n = position % {inner}, rest = position / {inner};\n"
                  "    int d = rest % {depth}, o = rest / {depth};\n"
                  "    value[k] = int(indices[o * {inner} + n]) == d ? {on} : {off};\n",
                  fmt::arg("inner", params.Int("one_hot_inner", plan->inner)),
                  fmt::arg("depth", params.Int("one_hot_depth", plan->depth)),
                  fmt::arg("on", params.Float("on_value", on[0])), fmt::arg("off", params.Float("off_value", off[0]))),
      /*flat_position=*/true);
  return g;
}

}  // namespace

std::vector<OpDefinition> OneHotOps() {
  return {{.op = OpKind::kOneHot,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<OneHotKernel>,
           .gpu = {OneHotShader},
           .raw_types = {DataType::kInt32}}};
}

}  // namespace mgd::ops
