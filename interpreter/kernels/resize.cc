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
          const Sample row = Coordinate(oy, sy, ih), col = Coordinate(ox, sx, iw);
          const float* tl = at(b, row.low, col.low);
          const float* tr = at(b, row.low, col.high);
          const float* bl = at(b, row.high, col.low);
          const float* br = at(b, row.high, col.high);
          for (int ch = 0; ch < c; ++ch) {
            const float top = tl[ch] + (tr[ch] - tl[ch]) * col.alpha;
            const float bottom = bl[ch] + (br[ch] - bl[ch]) * col.alpha;
            yp[ch] = top + (bottom - top) * row.alpha;
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // The two input rows (or columns) an output one interpolates, and the weight
  // of the second.
  struct Sample {
    int low, high;
    float alpha;
  };

  // TFLite's coordinate mapping, evaluated the way XNNPACK (TFLite's CPU path)
  // does: the half-pixel offset folded into one multiply-add and the
  // coordinate clamped to the input, so that edge rows are copied exactly and
  // results match TFLite to the last bit. Mathematically the same as the
  // reference kernel's max(floor(y), 0) / min(ceil(y), in - 1) form.
  Sample Coordinate(int out, float scale, int in_size) const {
    float v;
    if (a_.half_pixel_centers) {
      v = static_cast<float>(out) * scale + (0.5f * scale - 0.5f);
      v = std::min(std::max(v, 0.0f), static_cast<float>(in_size - 1));
    } else {
      v = static_cast<float>(out) * scale;
    }
    const int low = std::min(static_cast<int>(v), in_size - 1);
    return {low, std::min(low + 1, in_size - 1), v - static_cast<float>(low)};
  }

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
