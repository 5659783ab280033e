// TILE: the input repeated `multiples[d]` times along each dimension d.
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/movement/movement.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.FloatWithConstantIndices());
  return c.InputRank(1, 1);
}

void Encode(const Node&, EncodeContext& file) { file.Set(tflite::CreateTileOptions(file.builder)); }

class TileKernel : public PerAxisKernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& multiples = ctx.in(1);
    if (multiples.elements() != x.rank()) {
      return ctx.Error(fmt::format("multiples has {} entries for an input of rank {}", multiples.elements(), x.rank()));
    }
    Shape expected;
    source_.assign(x.shape.size(), {});
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t m = IndexValue(multiples, d);
      if (m < 0 || m * x.dim(d) > (1 << 24)) return ctx.Error(fmt::format("multiples[{}] = {} is out of range", d, m));
      expected.push_back(static_cast<int>(m * x.dim(d)));
      for (int i = 0; i < expected.back(); ++i) source_[static_cast<size_t>(d)].push_back(i % x.dim(d));
    }
    return ctx.ExpectOutputShape(0, expected);
  }
};

absl::StatusOr<shaders::GeneratedShader> Tile(const shaders::NodeContext& ctx) {
  auto in = shaders::InputBhwc(ctx, 0);
  if (!in.ok()) return in.status();
  const int extent[4] = {in->batch, in->height, in->width, in->channels};
  return PerAxisGather(ctx, [&](int d, const std::string& v, shaders::ShaderParams& params) {
    if (extent[d] == 1) return std::string("0");
    return fmt::format("{} % {}", v, params.Int(fmt::format("in0_extent{}", d), extent[d]));
  });
}

}  // namespace

std::vector<OpDefinition> TileOps() {
  return {{.op = OpKind::kTile, .encode = Encode, .validate = Validate, .cpu_kernel = MakeKernel<TileKernel>, .gpu = {Tile}}};
}

}  // namespace mgd::ops
