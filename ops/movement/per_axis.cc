// The copy behind TILE and MIRROR_PAD: each output coordinate reads the
// input at a coordinate that depends on the output's along the same axis
// only.
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "ops/movement/movement.h"
#include "shaders/ops.h"

namespace mgd::ops {

void PerAxisCopy(const TensorRef& x, TensorRef& y, const std::vector<std::vector<int>>& source) {
  const size_t rank = y.shape.size();
  const float* xd = x.as<float>();
  float* yd = y.as<float>();
  if (rank == 0) {
    yd[0] = xd[0];
    return;
  }
  // Per dimension, the input offset of each output coordinate.
  const std::vector<int64_t> xs = Strides(x.shape);
  std::vector<std::vector<int64_t>> offsets(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int i : source[d]) offsets[d].push_back(i * xs[d]);
  }
  std::vector<int> index(rank, 0);
  int64_t base = 0;  // the input offset of index's outer dimensions
  for (size_t d = 0; d + 1 < rank; ++d) base += offsets[d][0];
  const std::vector<int64_t>& inner = offsets[rank - 1];
  for (int64_t out = 0; out < y.elements(); out += static_cast<int64_t>(inner.size())) {
    for (size_t i = 0; i < inner.size(); ++i) yd[out + static_cast<int64_t>(i)] = xd[base + inner[i]];
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      base -= offsets[ud][static_cast<size_t>(index[ud])];
      if (++index[ud] < y.shape[ud]) {
        base += offsets[ud][static_cast<size_t>(index[ud])];
        break;
      }
      index[ud] = 0;
      base += offsets[ud][0];
    }
  }
}

absl::Status PerAxisKernel::Invoke(KernelContext& ctx) {
  if (ctx.out(0).elements() > 0) PerAxisCopy(ctx.in(0), ctx.out(0), source_);
  return absl::OkStatus();
}

absl::StatusOr<shaders::GeneratedShader> PerAxisGather(
    const shaders::NodeContext& ctx, const std::function<std::string(int, const std::string&, shaders::ShaderParams&)>& source) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {0});
  ShaderParams& params = g.code.params;
  g.code.body += fmt::format("  int ib = {}, iy = {}, ix = {};\n", source(0, "b", params), source(1, "y", params),
                             source(2, "x", params));
  g.code.body += glsl::ForEachLane(params, *out,
                                   fmt::format("    int ic = {};\n"
                                               "    value[k] = {}[ic % 4];\n",
                                               source(3, "c", params),
                                               glsl::Read(params, "in0", *in, "ib", "ic / 4", "iy", "ix")));
  return g;
}

}  // namespace mgd::ops
