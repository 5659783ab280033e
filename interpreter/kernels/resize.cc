// Image resize reference kernels with TFLite's align_corners and
// half_pixel_centers conventions.
#include "interpreter/kernels/resize.h"

#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"

namespace mgd {
namespace {

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(OpKind op) : bilinear_(op == OpKind::kResizeBilinear) {}

  absl::Status Prepare(KernelContext& ctx) override {
    a_ = std::get<ResizeAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& size = ctx.in(1);
    if (size.elements() != 2) return ctx.Error("size input must have 2 elements");
    const int32_t h = size.as<int32_t>()[0], w = size.as<int32_t>()[1];
    if (h <= 0 || w <= 0) return ctx.Error(fmt::format("size {}x{} must be positive", h, w));
    return ctx.ExpectOutputShape(0, {x.dim(0), h, w, x.dim(3)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    const float sy = Scale(ih, oh), sx = Scale(iw, ow);
    const float* xd = x.as<float>();
    float* yd = y.as<float>();
    auto at = [&](int b, int yy, int xx) { return xd + ((static_cast<int64_t>(b) * ih + yy) * iw + xx) * c; };
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          float* yp = yd + ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c;
          if (!bilinear_) {
            const float* xp = at(b, Nearest(oy, ih, sy), Nearest(ox, iw, sx));
            for (int ch = 0; ch < c; ++ch) yp[ch] = xp[ch];
            continue;
          }
          const float fy = a_.half_pixel_centers ? (oy + 0.5f) * sy - 0.5f : oy * sy;
          const float fx = a_.half_pixel_centers ? (ox + 0.5f) * sx - 0.5f : ox * sx;
          const int y0 = std::max(static_cast<int>(std::floor(fy)), 0);
          const int y1 = std::min(static_cast<int>(std::ceil(fy)), ih - 1);
          const int x0 = std::max(static_cast<int>(std::floor(fx)), 0);
          const int x1 = std::min(static_cast<int>(std::ceil(fx)), iw - 1);
          const float dy = fy - y0, dx = fx - x0;
          const float* p00 = at(b, y0, x0);
          const float* p01 = at(b, y0, x1);
          const float* p10 = at(b, y1, x0);
          const float* p11 = at(b, y1, x1);
          for (int ch = 0; ch < c; ++ch) {
            yp[ch] = p00[ch] * (1 - dy) * (1 - dx) + p10[ch] * dy * (1 - dx) + p01[ch] * (1 - dy) * dx +
                     p11[ch] * dy * dx;
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  float Scale(int in, int out) const {
    return (a_.align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                         : static_cast<float>(in) / static_cast<float>(out);
  }

  int Nearest(int out, int in_size, float scale) const {
    const float offset = a_.half_pixel_centers ? 0.5f : 0.0f;
    int v = a_.align_corners ? static_cast<int>(std::round((out + offset) * scale))
                             : static_cast<int>(std::floor((out + offset) * scale));
    v = std::min(v, in_size - 1);
    return std::max(v, 0);
  }

  bool bilinear_;
  ResizeAttributes a_;
};

}  // namespace

std::unique_ptr<Kernel> CreateResizeKernel(OpKind op) { return std::make_unique<ResizeKernel>(op); }

}  // namespace mgd
