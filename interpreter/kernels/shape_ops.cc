// Data movement reference kernels: padding, transposes and slices.
#include "interpreter/kernels/shape_ops.h"

#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/slice.h"
#include "model/status_macros.h"

namespace mgd {
namespace {

// Copies out[i0..] = in[offset + sum(i_d * strides[d])] over the output shape.
void StridedCopy(const float* in, int64_t offset, const std::vector<int64_t>& strides, const Shape& out_shape,
                 float* out) {
  const int64_t n = NumElements(out_shape);
  if (n == 0) return;
  const size_t rank = out_shape.size();
  if (rank == 0) {
    out[0] = in[offset];
    return;
  }
  std::vector<int> index(rank, 0);
  int64_t src = offset;
  const int inner = out_shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  for (int64_t o = 0; o < n; o += inner) {
    for (int i = 0; i < inner; ++i) out[o + i] = in[src + i * inner_stride];
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++index[ud] < out_shape[ud]) {
        src += strides[ud];
        break;
      }
      src -= strides[ud] * (out_shape[ud] - 1);
      index[ud] = 0;
    }
  }
}

class PadKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& p = ctx.in(1);
    if (p.dim(0) != x.rank() || p.dim(1) != 2) {
      return ctx.Error(fmt::format("paddings have shape {}, expected [{},2]", ShapeToString(p.shape), x.rank()));
    }
    before_.clear();
    Shape expected = x.shape;
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t lo = IndexValue(p, 2 * d), hi = IndexValue(p, 2 * d + 1);
      if (lo < 0 || hi < 0 || lo > (1 << 24) || hi > (1 << 24)) {
        return ctx.Error(fmt::format("paddings [{}, {}] of dimension {} are out of range", lo, hi, d));
      }
      before_.push_back(static_cast<int>(lo));
      expected[static_cast<size_t>(d)] += static_cast<int32_t>(lo + hi);
    }
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    std::memset(y.data, 0, y.bytes);
    if (x.elements() == 0) return absl::OkStatus();
    // Copy the input into the window of the output it lands in.
    const auto ys = Strides(y.shape);
    int64_t offset = 0;
    for (int d = 0; d < x.rank(); ++d) offset += before_[static_cast<size_t>(d)] * ys[static_cast<size_t>(d)];
    const float* xd = x.as<float>();
    float* yd = y.as<float>() + offset;
    // Scatter: iterate over the input, writing with the output's strides.
    const size_t rank = x.shape.size();
    if (rank == 0) {
      yd[0] = xd[0];
      return absl::OkStatus();
    }
    std::vector<int> index(rank, 0);
    int64_t dst = 0;
    const int inner = x.shape[rank - 1];
    for (int64_t i = 0; i < x.elements(); i += inner) {
      std::memcpy(yd + dst, xd + i, static_cast<size_t>(inner) * sizeof(float));
      for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
        const size_t ud = static_cast<size_t>(d);
        if (++index[ud] < x.shape[ud]) {
          dst += ys[ud];
          break;
        }
        dst -= ys[ud] * (x.shape[ud] - 1);
        index[ud] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int> before_;
};

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

class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(OpKind op) : strided_(op == OpKind::kStridedSlice) {}

  absl::Status Prepare(KernelContext& ctx) override {
    auto ints = [&](size_t i) {
      std::vector<int64_t> v;
      for (int64_t k = 0; k < ctx.in(i).elements(); ++k) v.push_back(IndexValue(ctx.in(i), k));
      return v;
    };
    const std::vector<int64_t> steps = strided_ ? ints(3) : std::vector<int64_t>{};
    StridedSliceAttributes a;
    if (strided_) a = std::get<StridedSliceAttributes>(ctx.node->attributes);
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

}  // namespace

std::unique_ptr<Kernel> CreatePadKernel() { return std::make_unique<PadKernel>(); }
std::unique_ptr<Kernel> CreateTransposeKernel() { return std::make_unique<TransposeKernel>(); }
std::unique_ptr<Kernel> CreateSliceKernel(OpKind op) { return std::make_unique<SliceKernel>(op); }

}  // namespace mgd
