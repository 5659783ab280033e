// Pooling reference kernels.
#include "interpreter/kernels/pool.h"

#include <fmt/format.h>

#include <set>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"

namespace mgd {
namespace {

class Pool2dKernel : public Kernel {
 public:
  explicit Pool2dKernel(OpKind op) : max_(op == OpKind::kMaxPool2d) {}

  absl::Status Prepare(KernelContext& ctx) override {
    a_ = std::get<Pool2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const Window wy = WindowAlong(a_.padding, x.dim(1), a_.filter_h, a_.stride_h, 1);
    const Window wx = WindowAlong(a_.padding, x.dim(2), a_.filter_w, a_.stride_w, 1);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, {x.dim(0), wy.out, wx.out, x.dim(3)}));
    pad_h_ = wy.pad;
    pad_w_ = wx.pad;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    const ActivationRange act = RangeOf(a_.activation);
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    std::vector<double> acc(static_cast<size_t>(c));
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const int y0 = std::max(0, oy * a_.stride_h - pad_h_);
          const int y1 = std::min(ih, oy * a_.stride_h - pad_h_ + a_.filter_h);
          const int x0 = std::max(0, ox * a_.stride_w - pad_w_);
          const int x1 = std::min(iw, ox * a_.stride_w - pad_w_ + a_.filter_w);
          std::fill(acc.begin(), acc.end(), max_ ? -std::numeric_limits<double>::infinity() : 0.0);
          for (int iy = y0; iy < y1; ++iy) {
            for (int ix = x0; ix < x1; ++ix) {
              const float* xp = xd + ((static_cast<int64_t>(b) * ih + iy) * iw + ix) * c;
              for (int ch = 0; ch < c; ++ch) {
                double& v = acc[static_cast<size_t>(ch)];
                v = max_ ? MaxKeepingNan(v, static_cast<double>(xp[ch])) : v + xp[ch];
              }
            }
          }
          // TFLite averages over the window's elements inside the input only.
          const int count = std::max(1, (y1 - y0) * (x1 - x0));
          float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c;
          for (int ch = 0; ch < c; ++ch) {
            const double v = acc[static_cast<size_t>(ch)];
            yp[ch] = act.Apply(static_cast<float>(max_ ? v : v / count));
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool max_;
  Pool2dAttributes a_;
  int pad_h_ = 0, pad_w_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> CreatePool2dKernel(OpKind op) { return std::make_unique<Pool2dKernel>(op); }

}  // namespace mgd
