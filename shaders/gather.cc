#include "shaders/gather.h"

#include <fmt/format.h>

#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

std::string GatherBody(ShaderParams& params, const layout::Bhwc& in, const layout::Bhwc& out, const StridedGather& g) {
  std::string s = fmt::format("    int src = {};\n", params.Int("offset", g.offset));
  for (int d = static_cast<int>(g.full.size()) - 1; d >= 0; --d) {
    const int64_t n = g.full[static_cast<size_t>(d)], stride = g.strides[static_cast<size_t>(d)];
    if (n == 1) continue;
    const std::string extent = params.Int(fmt::format("extent{}", d), n);
    s += fmt::format("    src += (position % {}) * ({}); position /= {};\n", extent,
                     params.Int(fmt::format("stride{}", d), stride), extent);
  }
  s += fmt::format(
      "    int ic = src % {C}; src /= {C};\n"
      "    int ix = src % {W}; src /= {W};\n"
      "    int iy = src % {H}; int ib = src / {H};\n"
      "    value[k] = {read}[ic % 4];\n",
      fmt::arg("C", params.Int("in0_c", in.channels)), fmt::arg("W", params.Int("in0_w", in.width)),
      fmt::arg("H", params.Int("in0_h", in.height)),
      fmt::arg("read", glsl::Read(params, "in0", in, "ib", "ic / 4", "iy", "ix")));
  return glsl::ForEachLane(params, out, s, /*flat_position=*/true);
}

}  // namespace

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d) + 1] * shape[static_cast<size_t>(d) + 1];
  }
  return strides;
}

absl::StatusOr<GeneratedShader> Gather(const NodeContext& ctx, const StridedGather& gather) {
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {0});
  g.code.body += GatherBody(g.code.params, *in, *out, gather);
  return g;
}

}  // namespace mgd::shaders
