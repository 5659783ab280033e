// PACK: values_count tensors of one shape stacked along a new axis of the
// output; a concatenation whose inputs each fill one position of that axis.
#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/concatenation/concatenation.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::PackOptions>();
  if (!options.ok()) return options.status();
  PackAttributes a;
  if (const tflite::PackOptions* o = *options) a = {o->values_count(), o->axis()};
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<PackAttributes>(node.attributes);
  file.Set(tflite::CreatePackOptions(file.builder, a.values_count, a.axis));
}

absl::Status Validate(const NodeChecker& c) {
  const int count = AttributesOf<PackAttributes>(c.node().attributes).values_count;
  MGD_RETURN_IF_ERROR(c.Positive("values_count", count));
  MGD_RETURN_IF_ERROR(c.Arity(static_cast<size_t>(count), static_cast<size_t>(count), 1));
  for (size_t i = 0; i < c.node().inputs.size(); ++i) MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kFloat32}));
  return c.OutputType(0, DataType::kFloat32);
}

// The output's elements in rows of `inner` (the input's dimensions from the
// axis on): row r comes from input r % count, its row r / count.
struct PackLayout {
  int axis = 0;
  int64_t inner = 1;
};

absl::StatusOr<PackLayout> LayoutOf(const PackAttributes& a, const Shape& input) {
  const int rank = static_cast<int>(input.size());
  PackLayout l;
  l.axis = a.axis < 0 ? a.axis + rank + 1 : a.axis;
  if (l.axis < 0 || l.axis > rank) {
    return absl::InvalidArgumentError(fmt::format("field axis: {} is out of range for inputs of rank {}", a.axis, rank));
  }
  for (int d = l.axis; d < rank; ++d) l.inner *= input[static_cast<size_t>(d)];
  return l;
}

class PackKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const auto& a = AttributesOf<PackAttributes>(ctx.node->attributes);
    const Shape& first = ctx.in(0).shape;
    auto layout = LayoutOf(a, first);
    if (!layout.ok()) return ctx.Error(std::string(layout.status().message()));
    layout_ = *layout;
    for (size_t i = 1; i < ctx.inputs.size(); ++i) {
      if (ctx.in(i).shape != first) {
        return ctx.Error(fmt::format("input {} has shape {}, input 0 {}: PACK needs one shape",
                                     i, ShapeToString(ctx.in(i).shape), ShapeToString(first)));
      }
    }
    Shape expected = first;
    expected.insert(expected.begin() + layout_.axis, static_cast<int>(ctx.inputs.size()));
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const size_t count = ctx.inputs.size();
    const int64_t rows = ctx.in(0).elements() / std::max<int64_t>(layout_.inner, 1);
    float* y = ctx.out(0).as<float>();
    const size_t bytes = static_cast<size_t>(layout_.inner) * sizeof(float);
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < count; ++i, y += layout_.inner) std::memcpy(y, ctx.in(i).as<float>() + r * layout_.inner, bytes);
    }
    return absl::OkStatus();
  }

 private:
  PackLayout layout_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// Lane by lane: the output's flat index gives the input (its row modulo the
// count) and the element within it, which is read at its PHWC4 place.
absl::StatusOr<GeneratedShader> Pack(const NodeContext& ctx) {
  const size_t count = ctx.node->inputs.size();
  // The inputs and the output within the 8 buffers every device offers.
  if (count > 7) return absl::UnimplementedError(fmt::format("PACK of {} inputs (the GPU takes at most 7)", count));
  auto layout = LayoutOf(AttributesOf<PackAttributes>(ctx.node->attributes), ctx.input(0).shape);
  if (!layout.ok()) return layout.status();
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  std::vector<int> inputs;
  for (size_t i = 0; i < count; ++i) inputs.push_back(static_cast<int>(i));
  GeneratedShader g = StartShader(ctx, *out, inputs);
  ShaderParams& params = g.code.params;
  std::string reads;
  for (size_t i = 0; i < count; ++i) {
    reads += fmt::format("      {}if (which == {}) value[k] = {}[ic % 4];\n", i ? "else " : "", i,
                         glsl::Read(params, fmt::format("in{}", i), *in, "ib", "ic / 4", "iy", "ix"));
  }
  g.code.body += glsl::ForEachLane(
      params, *out,
      fmt::format("    int row = position / {inner};\n"
                  "    int which = row % {count};\n"
                  "    int src = (row / {count}) * {inner} + position % {inner};\n"
                  "    int ic = src % {IC}; src /= {IC};\n"
                  "    int ix = src % {IW}; src /= {IW};\n"
                  "    int iy = src % {IH}; int ib = src / {IH};\n"
                  "{reads}",
                  fmt::arg("inner", params.Int("inner", layout->inner)),
                  fmt::arg("count", params.Int("count", static_cast<int64_t>(count))),
                  fmt::arg("IC", params.Int("in0_c", in->channels)), fmt::arg("IW", params.Int("in0_w", in->width)),
                  fmt::arg("IH", params.Int("in0_h", in->height)), fmt::arg("reads", reads)),
      /*flat_position=*/true);
  return g;
}

}  // namespace

std::vector<OpDefinition> PackOps() {
  return {{.op = OpKind::kPack, .decode = Decode, .encode = Encode, .validate = Validate, .cpu_kernel = MakeKernel<PackKernel>, .gpu = {Pack}}};
}

}  // namespace mgd::ops
