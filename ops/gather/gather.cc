#include "ops/gather/gather.h"

#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {

absl::StatusOr<GatherPlan> PlanGather(const Shape& params, const Shape& indices, const GatherAttributes& a) {
  const int rank = static_cast<int>(params.size()), index_rank = static_cast<int>(indices.size());
  const int axis = a.axis < 0 ? a.axis + rank : a.axis;
  const int batch_dims = a.batch_dims < 0 ? a.batch_dims + index_rank : a.batch_dims;
  if (axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(fmt::format("axis {} is out of range for params {}", a.axis, ShapeToString(params)));
  }
  if (batch_dims < 0 || batch_dims > index_rank || batch_dims > axis) {
    return absl::InvalidArgumentError(fmt::format("batch_dims {} is out of range for indices {} and axis {}", a.batch_dims,
                                                  ShapeToString(indices), a.axis));
  }
  GatherPlan plan;
  for (int d = 0; d < batch_dims; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (params[u] != indices[u]) {
      return absl::InvalidArgumentError(fmt::format("params {} and indices {} differ in batch dimension {}",
                                                    ShapeToString(params), ShapeToString(indices), d));
    }
    plan.batch *= params[u];
  }
  for (int d = 0; d < rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (d == axis) {
      for (size_t i = static_cast<size_t>(batch_dims); i < indices.size(); ++i) {
        plan.indices *= indices[i];
        plan.output.push_back(indices[i]);
      }
      plan.extent = params[u];
      continue;
    }
    if (d >= batch_dims) (d < axis ? plan.outer : plan.inner) *= params[u];
    plan.output.push_back(params[u]);
  }
  return plan;
}

namespace {

constexpr std::initializer_list<DataType> kParamTypes = {DataType::kFloat32, DataType::kInt32, DataType::kInt64,
                                                         DataType::kUInt8,   DataType::kInt8,  DataType::kBool};

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::GatherOptions>();
  if (!options.ok()) return options.status();
  GatherAttributes a;
  if (const tflite::GatherOptions* o = *options) a = {o->axis(), o->batch_dims()};
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<GatherAttributes>(node.attributes);
  file.Set(tflite::CreateGatherOptions(file.builder, a.axis, a.batch_dims));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, kParamTypes));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32, DataType::kInt64}));
  return c.OutputType(0, c.In(0).type);
}

// Copies whole rows of `inner` elements, any dtype; an index outside the
// axis fails the invoke, as TFLite's does.
class GatherKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    auto plan = PlanGather(ctx.in(0).shape, ctx.in(1).shape, AttributesOf<GatherAttributes>(ctx.node->attributes));
    if (!plan.ok()) return ctx.Error(std::string(plan.status().message()));
    plan_ = *plan;
    return ctx.ExpectOutputShape(0, plan_.output);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (ctx.out(0).elements() == 0) return absl::OkStatus();  // no rows: params may hold no data at all
    const TensorRef& indices = ctx.in(1);
    const size_t row = static_cast<size_t>(plan_.inner) * ElementSize(ctx.in(0).type);
    const uint8_t* params = ctx.in(0).data;
    uint8_t* out = ctx.out(0).data;
    for (int64_t b = 0; b < plan_.batch; ++b) {
      for (int64_t o = 0; o < plan_.outer; ++o) {
        for (int64_t i = 0; i < plan_.indices; ++i) {
          const int64_t flat = b * plan_.indices + i;
          const int64_t index = IndexValue(indices, flat);
          if (index < 0 || index >= plan_.extent) {
            return ctx.Error(fmt::format("indices[{}] = {} is out of range [0, {})", flat, index, plan_.extent));
          }
          std::memcpy(out, params + static_cast<size_t>((b * plan_.outer + o) * plan_.extent + index) * row, row);
          out += row;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  GatherPlan plan_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// Each output lane finds its index and its source element through the
// plan's four loops over flat (BHWC-ordered) positions. Float params, as an
// activation or a constant; int32 indices as a constant or as the
// partition's own input buffer (token ids: no conversion); an index outside
// the axis gives 0, where the CPU fails (a shader cannot).
absl::StatusOr<GeneratedShader> GatherShader(const NodeContext& ctx) {
  const Tensor& params_tensor = ctx.input(0);
  const Tensor& indices_tensor = ctx.input(1);
  if (params_tensor.type != DataType::kFloat32) return absl::UnimplementedError("params are not float32");
  auto plan = PlanGather(params_tensor.shape, indices_tensor.shape, AttributesOf<GatherAttributes>(ctx.node->attributes));
  if (!plan.ok()) return plan.status();
  // The output's rank is at least the indices', so indices fit BHWC too.
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return absl::UnimplementedError("unsupported rank");
  const bool constant_params = params_tensor.is_constant;
  auto in = constant_params ? absl::StatusOr<layout::Bhwc>(layout::Bhwc{}) : InputBhwc(ctx, 0);
  if (!in.ok()) return absl::UnimplementedError("unsupported rank");

  GeneratedShader g = StartShader(ctx, *out, constant_params ? std::vector<int>{} : std::vector<int>{0});
  ShaderParams& params = g.code.params;
  MGD_RETURN_IF_ERROR(AddIndexInput(ctx, g, 1, "indices"));
  std::string fetch;  // value[k] from params' flat position src
  if (constant_params) {
    g.code.buffers.push_back({"params", "float", BufferAccess::kRead, false});
    g.constants.push_back(ctx.support_only ? std::vector<float>{} : ConstantFloats(params_tensor));
    fetch = "    value[k] = params[src];\n";
  } else {
    fetch = fmt::format(
        "    int pc = src % {C}, pw = (src / {C}) % {W}, ph = (src / ({C} * {W})) % {H}, pb = src / ({C} * {W} * {H});\n"
        "    value[k] = {read}[pc % 4];\n",
        fmt::arg("C", params.Int("in_c", in->channels)), fmt::arg("W", params.Int("in_w", in->width)),
        fmt::arg("H", params.Int("in_h", in->height)), fmt::arg("read", glsl::Read(params, "in0", *in, "pb", "pc / 4", "ph", "pw")));
  }
  g.code.body += glsl::ForEachLane(
      params, *out,
      fmt::format("    int n = position % {inner}, rest = position / {inner};\n"
                  "    int i = rest % {count};\n"
                  "    rest /= {count};\n"
                  "    int o = rest % {outer}, batch = rest / {outer};\n"
                  "    int index = int(indices[batch * {count} + i]);\n"
                  "    if (index < 0 || index >= {extent}) continue;\n"
                  "    int src = ((batch * {outer} + o) * {extent} + index) * {inner} + n;\n"
                  "{fetch}",
                  fmt::arg("inner", params.Int("gather_inner", plan->inner)),
                  fmt::arg("count", params.Int("gather_count", plan->indices)),
                  fmt::arg("outer", params.Int("gather_outer", plan->outer)),
                  fmt::arg("extent", params.Int("gather_extent", plan->extent)), fmt::arg("fetch", fetch)),
      /*flat_position=*/true);
  return g;
}

}  // namespace

std::vector<OpDefinition> GatherOps() {
  return {{.op = OpKind::kGather,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<GatherKernel>,
           .gpu = {GatherShader},
           .raw_types = {DataType::kInt32}}};
}

}  // namespace mgd::ops
