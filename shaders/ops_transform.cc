// Data movement over PHWC4: PAD, CONCATENATION, SLICE / STRIDED_SLICE and
// TRANSPOSE.
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

absl::StatusOr<GeneratedShader> Concatenation(const NodeContext& ctx) {
  const auto& a = std::get<ConcatenationAttributes>(ctx.node->attributes);
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
  if (axis == 3 && !whole_slices) {
    body += "  vec4 value = vec4(0.0);\n  for (int k = 0; k < 4; ++k) {\n    int c = s * 4 + k;\n";
    body += fmt::format("    if (c >= {}) break;\n", out->channels);
    int offset = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      body += fmt::format("    {}if (c < {}) {{ int ic = c - {}; value[k] = {}[ic % 4]; }}\n", i ? "else " : "",
                          offset + ins[i].channels, offset,
                          glsl::Read(fmt::format("in{}", i), ins[i], "b", "ic / 4", "y", "x"));
      offset += ins[i].channels;
    }
    body += "  }\n";
  } else {
    body += "  vec4 value = vec4(0.0);\n";
    const std::string position = axis == 3 ? "s" : coord[axis];
    int offset = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      const int extent = axis == 3 ? ins[i].slices() : size(ins[i], axis);
      std::string c[4] = {"b", "s", "y", "x"};  // index order of glsl::Index
      const int slot = axis == 0 ? 0 : axis == 3 ? 1 : axis == 1 ? 2 : 3;
      c[slot] = fmt::format("({} - {})", position, offset);
      body += fmt::format("  {}if ({} < {}) value = {};\n", i ? "else " : "", position, offset + extent,
                          glsl::Read(fmt::format("in{}", i), ins[i], c[0], c[1], c[2], c[3]));
      offset += extent;
    }
  }
  body += glsl::Activation(a.activation, "value");
  return g;
}

}  // namespace

void AddTransformGenerators(Generators& g) {
  g.builtin[OpKind::kTranspose] = Transpose;
  g.builtin[OpKind::kSlice] = Slice;
  g.builtin[OpKind::kStridedSlice] = Slice;
  g.builtin[OpKind::kPad] = Pad;
  g.builtin[OpKind::kConcatenation] = Concatenation;
}

}  // namespace mgd::shaders
