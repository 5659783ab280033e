// SLICE (begin, size) and STRIDED_SLICE (begin, end, strides and TFLite's
// masks), both resolved to a strided view (strided_view.cc).
#include <fmt/format.h>

#include <algorithm>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/movement/movement.h"
#include "ops/tflite_io.h"
#include "shaders/gather.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> DecodeStrided(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::StridedSliceOptions>();
  if (!options.ok()) return options.status();
  StridedSliceAttributes a;
  if (const tflite::StridedSliceOptions* o = *options) {
    a.begin_mask = o->begin_mask();
    a.end_mask = o->end_mask();
    a.ellipsis_mask = o->ellipsis_mask();
    a.new_axis_mask = o->new_axis_mask();
    a.shrink_axis_mask = o->shrink_axis_mask();
    a.offset = o->offset();
  }
  return a;
}

void EncodeStrided(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<StridedSliceAttributes>(node.attributes);
  file.Set(tflite::CreateStridedSliceOptions(file.builder, a.begin_mask, a.end_mask, a.ellipsis_mask, a.new_axis_mask,
                                             a.shrink_axis_mask, a.offset));
}

// Inputs: the tensor, then begin and size (SLICE) or begin, end and strides
// (STRIDED_SLICE), all constant.
absl::Status ValidateSlice(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(3, 3, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  for (size_t i = 1; i < 3; ++i) {
    MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kInt32, DataType::kInt64}));
    MGD_RETURN_IF_ERROR(c.Constant(i));
  }
  return c.OutputType(0, DataType::kFloat32);
}

absl::Status ValidateStrided(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(4, 4, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  for (size_t i = 1; i < 4; ++i) {
    MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kInt32}));
    MGD_RETURN_IF_ERROR(c.Constant(i));
  }
  const auto& a = AttributesOf<StridedSliceAttributes>(c.node().attributes);
  if (a.ellipsis_mask != 0 || a.new_axis_mask != 0) {
    return c.Fail("fields ellipsis_mask and new_axis_mask are not supported (must be 0)");
  }
  return c.OutputType(0, DataType::kFloat32);
}

class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(bool strided) : strided_(strided) {}

  absl::Status Prepare(KernelContext& ctx) override {
    auto ints = [&](size_t i) {
      std::vector<int64_t> v;
      for (int64_t k = 0; k < ctx.in(i).elements(); ++k) v.push_back(IndexValue(ctx.in(i), k));
      return v;
    };
    const std::vector<int64_t> steps = strided_ ? ints(3) : std::vector<int64_t>{};
    const auto& a = AttributesOf<StridedSliceAttributes>(ctx.node->attributes);
    auto view = ResolveSlice(ctx.in(0).shape, ints(1), ints(2), strided_ ? &steps : nullptr, a);
    if (!view.ok()) return ctx.Error(std::string(view.status().message()));
    view_ = std::move(*view);
    return ctx.ExpectOutputShape(0, view_.output_shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    StridedCopy(ctx.in(0).as<float>(), view_.offset, view_.strides, view_.full_shape, ctx.out(0).as<float>());
    return absl::OkStatus();
  }

 private:
  bool strided_;
  StridedView view_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

absl::StatusOr<GeneratedShader> Slice(const NodeContext& ctx) {
  const bool strided = ctx.node->op == OpKind::kStridedSlice;
  for (size_t i = 1; i < (strided ? 4u : 3u); ++i) {
    if (!ctx.input(i).is_constant) return absl::UnimplementedError("slice bounds must be constant for the GPU");
  }
  const std::vector<int64_t> steps = strided ? ConstantInts(ctx.input(3)) : std::vector<int64_t>{};
  const auto& a = AttributesOf<StridedSliceAttributes>(ctx.node->attributes);
  auto view = ResolveSlice(ctx.input(0).shape, ConstantInts(ctx.input(1)), ConstantInts(ctx.input(2)),
                           strided ? &steps : nullptr, a);
  if (!view.ok()) return absl::UnimplementedError(view.status().message());
  return Gather(ctx, {std::vector<int64_t>(view->full_shape.begin(), view->full_shape.end()), view->strides,
                      view->offset});
}

// Constant bounds that take all of the input, in order.
bool WholeInput(const Graph& graph, const Node& node) {
  auto tensor = [&](int t) -> const Tensor& { return graph.tensors[static_cast<size_t>(t)]; };
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (!tensor(node.inputs[i]).is_constant) return false;
  }
  const Shape& in = tensor(node.inputs[0]).shape;
  const bool strided = node.op == OpKind::kStridedSlice;
  const std::vector<int64_t> steps = strided ? ConstantInts(tensor(node.inputs[3])) : std::vector<int64_t>{};
  auto view = ResolveSlice(in, ConstantInts(tensor(node.inputs[1])), ConstantInts(tensor(node.inputs[2])),
                           strided ? &steps : nullptr, AttributesOf<StridedSliceAttributes>(node.attributes));
  return view.ok() && view->offset == 0 && view->full_shape == in &&
         std::all_of(steps.begin(), steps.end(), [](int64_t step) { return step == 1; });
}

}  // namespace

std::vector<OpDefinition> SliceOps() {
  return {
      {.op = OpKind::kSlice,
       .validate = ValidateSlice,
       .cpu_kernel = MakeKernel<SliceKernel, false>,
       .is_identity = WholeInput,
       .gpu = {Slice}},
      {.op = OpKind::kStridedSlice,
       .decode = DecodeStrided,
       .encode = EncodeStrided,
       .validate = ValidateStrided,
       .cpu_kernel = MakeKernel<SliceKernel, true>,
       .is_identity = WholeInput,
       .gpu = {Slice}},
  };
}

}  // namespace mgd::ops
