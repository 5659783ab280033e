// TRANSPOSE by a constant permutation.
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/movement/movement.h"
#include "shaders/ops.h"
#include "shaders/gather.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) { return c.FloatWithConstantIndices(); }

class TransposeKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& perm = ctx.in(1);
    if (perm.elements() != x.rank()) {
      return ctx.Error(fmt::format("perm has {} entries for an input of rank {}", perm.elements(), x.rank()));
    }
    perm_.clear();
    std::vector<bool> seen(x.shape.size(), false);
    Shape expected;
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t p = IndexValue(perm, d);
      if (p < 0 || p >= x.rank() || seen[static_cast<size_t>(p)]) return ctx.Error("perm is not a permutation");
      seen[static_cast<size_t>(p)] = true;
      perm_.push_back(static_cast<int>(p));
      expected.push_back(x.dim(static_cast<int>(p)));
    }
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const auto xs = Strides(ctx.in(0).shape);
    std::vector<int64_t> strides;
    for (int p : perm_) strides.push_back(xs[static_cast<size_t>(p)]);
    StridedCopy(ctx.in(0).as<float>(), 0, strides, ctx.out(0).shape, ctx.out(0).as<float>());
    return absl::OkStatus();
  }

 private:
  std::vector<int> perm_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

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

}  // namespace

std::vector<OpDefinition> TransposeOps() {
  return {{.op = OpKind::kTranspose,
           .validate = Validate,
           .cpu_kernel = MakeKernel<TransposeKernel>,
           .gpu = {Transpose}}};
}

}  // namespace mgd::ops
