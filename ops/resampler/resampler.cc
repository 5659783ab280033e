#include "ops/resampler/resampler.h"

#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// The output shape, with an error naming what does not fit.
absl::StatusOr<Shape> OutputShape(const Shape& source, const Shape& warp) {
  if (source.size() != 4 || warp.size() != 4) {
    return absl::InvalidArgumentError(fmt::format("source {} and warp {} must both be of rank 4",
                                                  ShapeToString(source), ShapeToString(warp)));
  }
  if (warp[3] != 2 || warp[0] != source[0]) {
    return absl::InvalidArgumentError(fmt::format("warp {} must be [{}, height, width, 2] for source {}",
                                                  ShapeToString(warp), source[0], ShapeToString(source)));
  }
  return Shape{source[0], warp[1], warp[2], source[3]};
}

class ResamplerKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 2, 1));
    auto shape = OutputShape(ctx.in(0).shape, ctx.in(1).shape);
    if (!shape.ok()) return ctx.Error(std::string(shape.status().message()));
    return ctx.ExpectOutputShape(0, *shape);
  }

  // MediaPipe's arithmetic, term for term: the weights are the distances to
  // the far corner (dx = ceil - x), and the four taps add in its order.
  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& src = ctx.in(0);
    const TensorRef& warp = ctx.in(1);
    const int h = src.dim(1), w = src.dim(2), c = src.dim(3);
    const int64_t pixels = int64_t{warp.dim(1)} * warp.dim(2);
    float* out = ctx.out(0).as<float>();
    for (int b = 0; b < src.dim(0); ++b) {
      const float* image = src.as<float>() + int64_t{b} * h * w * c;
      auto at = [&](int yy, int xx, int k) {
        return xx >= 0 && yy >= 0 && xx <= w - 1 && yy <= h - 1 ? image[(int64_t{yy} * w + xx) * c + k] : 0.0f;
      };
      for (int64_t p = 0; p < pixels; ++p, out += c) {
        const float x = warp.as<float>()[(b * pixels + p) * 2], y = warp.as<float>()[(b * pixels + p) * 2 + 1];
        if (!(x > -1.0f && y > -1.0f && x < static_cast<float>(w) && y < static_cast<float>(h))) {
          std::fill(out, out + c, 0.0f);  // outside, or NaN
          continue;
        }
        const int fx = static_cast<int>(std::floor(x)), fy = static_cast<int>(std::floor(y));
        const int cx = fx + 1, cy = fy + 1;
        const float dx = static_cast<float>(cx) - x, dy = static_cast<float>(cy) - y;
        for (int k = 0; k < c; ++k) {
          out[k] = dx * dy * at(fy, fx, k) + (1.0f - dx) * (1.0f - dy) * at(cy, cx, k) +
                   dx * (1.0f - dy) * at(cy, fx, k) + (1.0f - dx) * dy * at(fy, cx, k);
        }
      }
    }
    return absl::OkStatus();
  }
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// One output vec4 per invocation. A warp the app gives is read exactly, as
// the bytes it wrote (fp16 storage would move a sample by up to 1/8 pixel
// at 256).
absl::StatusOr<GeneratedShader> ResamplerShader(const NodeContext& ctx) {
  if (ctx.node->inputs.size() != 2 || ctx.node->outputs.size() != 1) return absl::UnimplementedError("takes two inputs");
  MGD_RETURN_IF_ERROR(OutputShape(ctx.input(0).shape, ctx.input(1).shape).status());
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc src, InputBhwc(ctx, 0));
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc warp, InputBhwc(ctx, 1));
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc out, OutputBhwc(ctx, 0));
  const bool raw_warp = IsGraphInput(ctx, 1);
  GeneratedShader g = StartShader(ctx, out, raw_warp ? std::vector<int>{0} : std::vector<int>{0, 1});
  if (raw_warp) AddRawInput(g, 1, "warp", "float");
  ShaderParams& params = g.code.params;
  const std::string w = params.Int("in0_w", src.width), h = params.Int("in0_h", src.height);
  std::string coords;
  if (raw_warp) {
    const std::string at = fmt::format("((b * {} + y) * {} + x) * 2", params.Int("out_h", out.height), params.Int("out_w", out.width));
    coords = fmt::format("  highp vec2 p = vec2(warp[{0}], warp[{0} + 1]);\n", at);
  } else {
    coords = fmt::format("  highp vec2 p = {}.xy;\n", glsl::Read(params, "in1", warp, "b", "0", "y", "x"));
  }
  auto tap = [&](const char* yy, const char* xx) { return glsl::ReadOrZero(params, "in0", src, "b", "s", yy, xx); };
  g.code.body = coords + fmt::format(
      "  vec4 value = vec4(0.0);\n"
      "  if (p.x > -1.0 && p.y > -1.0 && p.x < float({w}) && p.y < float({h})) {{\n"
      "    int fx = int(floor(p.x)), fy = int(floor(p.y)), cx = fx + 1, cy = fy + 1;\n"
      "    highp float dx = float(cx) - p.x, dy = float(cy) - p.y;\n"
      "    value = dx * dy * {ff} + (1.0 - dx) * (1.0 - dy) * {cc} + dx * (1.0 - dy) * {fc} + (1.0 - dx) * dy * {cf};\n"
      "  }}\n",
      fmt::arg("w", w), fmt::arg("h", h), fmt::arg("ff", tap("fy", "fx")), fmt::arg("cc", tap("cy", "cx")),
      fmt::arg("fc", tap("cy", "fx")), fmt::arg("cf", tap("fy", "cx")));
  return g;
}

}  // namespace

std::vector<OpDefinition> ResamplerOps() {
  return {{.op = OpKind::kCustom,
           .custom_name = kResamplerOp,
           .cpu_kernel = MakeKernel<ResamplerKernel>,
           .gpu = {ResamplerShader}}};
}

}  // namespace mgd::ops
