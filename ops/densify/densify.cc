#include "ops/densify/densify.h"

#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.Constant(0));
  if (!c.In(0).sparsity.has_value()) return c.Fail("input 0 has no sparsity parameters");
  if (c.Out(0).type != c.In(0).type) return c.Fail("output type differs from the input type");
  return absl::OkStatus();
}

// Expands TFLite's TACO-like sparse encoding. Every index read from the model
// is bounds-checked: a malformed tensor is an error, not a wild write.
class DensifyKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, ctx.out(0).shape));
    const Tensor& t = ctx.graph->tensors[static_cast<size_t>(x.index)];
    sparsity_ = *t.sparsity;
    dense_shape_ = ctx.out(0).shape;
    if (dense_shape_ != x.shape) {
      return ctx.Error(fmt::format("output shape {} differs from the sparse tensor's dense shape {}",
                                   ShapeToString(dense_shape_), ShapeToString(x.shape)));
    }
    const size_t rank = dense_shape_.size();
    const auto& order = sparsity_.traversal_order;
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] < 0 || static_cast<size_t>(order[i]) >= order.size()) {
        return ctx.Error(fmt::format("sparsity traversal_order[{}] = {} is out of range", i, order[i]));
      }
    }
    block_size_.clear();
    for (size_t b = 0; b < sparsity_.block_map.size(); ++b) {
      const int32_t dim = sparsity_.block_map[b];
      if (dim < 0 || static_cast<size_t>(dim) >= rank) return ctx.Error("sparsity block_map is out of range");
      const int32_t size = sparsity_.dimensions[rank + b].dense_size;
      if (size <= 0) return ctx.Error("sparsity block size must be positive");
      block_size_.push_back(size);
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    std::memset(y.data, 0, y.bytes);
    element_size_ = ElementSize(x.type);
    src_ = x.data;
    src_count_ = static_cast<int64_t>(x.bytes / element_size_);
    dst_ = y.data;
    next_value_ = 0;
    std::vector<int> indices(sparsity_.traversal_order.size(), 0);
    MGD_RETURN_IF_ERROR(Populate(ctx, indices, 0, 0));
    return absl::OkStatus();
  }

 private:
  absl::Status Populate(const KernelContext& ctx, std::vector<int>& indices, size_t level, int64_t prev) {
    const size_t rank = dense_shape_.size();
    if (level == indices.size()) {
      std::vector<int64_t> orig(rank, 0);
      size_t i = 0;
      for (; i < rank; ++i) orig[static_cast<size_t>(sparsity_.traversal_order[i])] = indices[i];
      for (; i < indices.size(); ++i) {
        const size_t block = static_cast<size_t>(sparsity_.traversal_order[i]) - rank;
        if (block >= block_size_.size()) return ctx.Error("sparsity traversal_order names a missing block dimension");
        const size_t dim = static_cast<size_t>(sparsity_.block_map[block]);
        orig[dim] = orig[dim] * block_size_[block] + indices[i];
      }
      int64_t flat = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (orig[d] < 0 || orig[d] >= dense_shape_[d]) return ctx.Error("sparse index lies outside the dense shape");
        flat = flat * dense_shape_[d] + orig[d];
      }
      if (next_value_ >= src_count_) return ctx.Error("the sparse tensor has fewer values than its indices name");
      std::memcpy(dst_ + flat * static_cast<int64_t>(element_size_), src_ + next_value_ * static_cast<int64_t>(element_size_),
                  element_size_);
      ++next_value_;
      return absl::OkStatus();
    }
    const SparseDimension& dim = sparsity_.dimensions[level];
    if (!dim.is_sparse) {
      if (dim.dense_size < 0 || dim.dense_size > (1 << 24)) return ctx.Error("sparsity dense_size is out of range");
      for (int i = 0; i < dim.dense_size; ++i) {
        indices[level] = i;
        MGD_RETURN_IF_ERROR(Populate(ctx, indices, level + 1, prev * dim.dense_size + i));
      }
      return absl::OkStatus();
    }
    const auto& segments = dim.array_segments;
    if (prev < 0 || static_cast<size_t>(prev) + 1 >= segments.size()) {
      return ctx.Error(fmt::format("sparsity array_segments of level {} is too short", level));
    }
    const int64_t begin = segments[static_cast<size_t>(prev)], end = segments[static_cast<size_t>(prev) + 1];
    if (begin < 0 || end < begin || static_cast<size_t>(end) > dim.array_indices.size()) {
      return ctx.Error(fmt::format("sparsity array_segments of level {} are out of range", level));
    }
    for (int64_t i = begin; i < end; ++i) {
      indices[level] = dim.array_indices[static_cast<size_t>(i)];
      MGD_RETURN_IF_ERROR(Populate(ctx, indices, level + 1, i));
    }
    return absl::OkStatus();
  }

  Sparsity sparsity_;
  Shape dense_shape_;
  std::vector<int32_t> block_size_;
  size_t element_size_ = 4;
  const uint8_t* src_ = nullptr;
  int64_t src_count_ = 0;
  uint8_t* dst_ = nullptr;
  int64_t next_value_ = 0;
};

}  // namespace

std::vector<OpDefinition> DensifyOps() {
  return {{.op = OpKind::kDensify,
           .validate = Validate,
           .cpu_kernel = MakeKernel<DensifyKernel>,
           .gpu = {}}};  // always folded at load
}

}  // namespace mgd::ops
