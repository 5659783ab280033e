// Data movement over PHWC4: PAD, SLICE / STRIDED_SLICE and TRANSPOSE.
// Ops that keep channels in whole slices move vec4s; the rest gather lane by
// lane through the flat BHWC index (ToBhwc keeps the row-major order).
#include <fmt/format.h>

#include <cmath>

#include "model/slice.h"
#include "shaders/gather.h"
#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

absl::StatusOr<GeneratedShader> Transpose(const NodeContext& ctx) {
  if (!ctx.input(1).is_constant) return absl::UnimplementedError("perm must be constant for the GPU");
  const std::vector<int64_t> perm = ConstantInts(ctx.input(1));
  std::vector<int64_t> in_shape(ctx.input(0).shape.begin(), ctx.input(0).shape.end());
  const std::vector<int64_t> in_strides = RowMajorStrides(in_shape);
  StridedGather gather;
  for (int64_t p : perm) {
    gather.full.push_back(in_shape[static_cast<size_t>(p)]);
    gather.strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  return Gather(ctx, gather);
}

absl::StatusOr<GeneratedShader> Slice(const NodeContext& ctx) {
  const bool strided = ctx.node->op == OpKind::kStridedSlice;
  for (size_t i = 1; i < (strided ? 4u : 3u); ++i) {
    if (!ctx.input(i).is_constant) return absl::UnimplementedError("slice bounds must be constant for the GPU");
  }
  const std::vector<int64_t> steps = strided ? ConstantInts(ctx.input(3)) : std::vector<int64_t>{};
  StridedSliceAttributes a;
  if (strided) a = std::get<StridedSliceAttributes>(ctx.node->attributes);
  auto view = ResolveSlice(ctx.input(0).shape, ConstantInts(ctx.input(1)), ConstantInts(ctx.input(2)),
                           strided ? &steps : nullptr, a);
  if (!view.ok()) return absl::UnimplementedError(view.status().message());
  return Gather(ctx, {std::vector<int64_t>(view->full_shape.begin(), view->full_shape.end()), view->strides,
                      view->offset});
}

absl::StatusOr<GeneratedShader> Pad(const NodeContext& ctx) {
  if (!ctx.input(1).is_constant) return absl::UnimplementedError("paddings must be constant for the GPU");
  if (ctx.node->inputs.size() > 2) return absl::UnimplementedError("PAD with a constant value");
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const std::vector<int64_t> p = ConstantInts(ctx.input(1));
  const int rank = static_cast<int>(ctx.input(0).shape.size());
  int64_t before[4] = {0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) before[BhwcAxis(d, rank)] = p[2 * static_cast<size_t>(d)];
  GeneratedShader g = StartShader(ctx, *out, {0});
  g.code.body += fmt::format(
      "  int ib = b - {}, iy = y - {}, ix = x - {};\n"
      "  bool inside = ib >= 0 && ib < {} && iy >= 0 && iy < {} && ix >= 0 && ix < {};\n",
      before[0], before[1], before[2], in->batch, in->height, in->width);
  if (before[3] % 4 == 0) {
    // Whole slices move; lanes past the input's channels are zero already.
    g.code.body += fmt::format(
        "  int is = s - {};\n"
        "  vec4 value = (inside && is >= 0 && is < {}) ? vec4({}) : vec4(0.0);\n",
        before[3] / 4, in->slices(), glsl::Read("in0", *in, "ib", "is", "iy", "ix"));
  } else {
    g.code.body += fmt::format(
        "  vec4 value = vec4(0.0);\n"
        "  for (int k = 0; k < 4; ++k) {{\n"
        "    int ic = s * 4 + k - {};\n"
        "    if (inside && ic >= 0 && ic < {}) value[k] = {}[ic % 4];\n"
        "  }}\n",
        before[3], in->channels, glsl::Read("in0", *in, "ib", "ic / 4", "iy", "ix"));
  }
  return g;
}

}  // namespace

void AddTransformGenerators(Generators& g) {
  g.builtin[OpKind::kTranspose] = Transpose;
  g.builtin[OpKind::kSlice] = Slice;
  g.builtin[OpKind::kStridedSlice] = Slice;
  g.builtin[OpKind::kPad] = Pad;
}

}  // namespace mgd::shaders
