// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR in TFLite's coordinates. Of
// int8 or uint8 tensors (the output keeping the input's parameters),
// nearest copies values and bilinear interpolates them as LiteRT's CPU path
// (XNNPACK's ibilinear kernels) does: the float kernel's coordinates,
// weights in 11-bit fixed point, the result rounded half up. TFLite's
// reference kernel (ResizeBilinearInteger) rounds its scale to 10 bits and
// is off by more than half a quantum at places.
#include "ops/resize/resize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/status_macros.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

template <typename Options>
absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<Options>();
  if (!options.ok()) return options.status();
  const Options* o = *options;
  return ResizeAttributes{o && o->align_corners(), o && o->half_pixel_centers()};
}

void EncodeBilinear(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<ResizeAttributes>(node.attributes);
  file.Set(tflite::CreateResizeBilinearOptions(file.builder, a.align_corners, a.half_pixel_centers));
}

void EncodeNearest(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<ResizeAttributes>(node.attributes);
  file.Set(tflite::CreateResizeNearestNeighborOptions(file.builder, a.align_corners, a.half_pixel_centers));
}

// Inputs: the image (rank 4) and its new size (a constant int32 [2]).
absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(quantized::FloatOr8Bit(c));
  MGD_RETURN_IF_ERROR(quantized::KeepsQuantization(c));
  MGD_RETURN_IF_ERROR(c.InputRank(0, 4));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32}));
  MGD_RETURN_IF_ERROR(c.Constant(1));
  const auto& a = AttributesOf<ResizeAttributes>(c.node().attributes);
  if (a.align_corners && a.half_pixel_centers) {
    return c.Fail("fields align_corners and half_pixel_centers cannot both be true");
  }
  return absl::OkStatus();
}

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(bool bilinear) : bilinear_(bilinear) {}

  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<ResizeAttributes>(ctx.node->attributes);
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
    const float sy = ResizeScale(a_, ih, oh), sx = ResizeScale(a_, iw, ow);
    if (quantized::Is8Bit(x.type)) return Invoke8Bit(x, y, sy, sx);
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

  absl::Status Invoke8Bit(const TensorRef& x, const TensorRef& y, float sy, float sx) const {
    const int n = x.dim(0), ih = x.dim(1), iw = x.dim(2), c = x.dim(3);
    const int oh = y.dim(1), ow = y.dim(2);
    auto at = [&](int b, int yy, int xx) { return ((static_cast<int64_t>(b) * ih + yy) * iw + xx) * c; };
    for (int b = 0; b < n; ++b) {
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const int64_t to = ((static_cast<int64_t>(b) * oh + oy) * ow + ox) * c;
          if (!bilinear_) {
            const int64_t from = at(b, Nearest(oy, ih, sy), Nearest(ox, iw, sx));
            for (int ch = 0; ch < c; ++ch) quantized::Write(y, to + ch, quantized::Read(x, from + ch));
            continue;
          }
          const Sample row = Coordinate(oy, sy, ih), col = Coordinate(ox, sx, iw);
          const int64_t tl = at(b, row.low, col.low), tr = at(b, row.low, col.high);
          const int64_t bl = at(b, row.high, col.low), br = at(b, row.high, col.high);
          const int32_t wy = Weight11(row.alpha), wx = Weight11(col.alpha);
          for (int ch = 0; ch < c; ++ch) {
            const int32_t top_left = quantized::Read(x, tl + ch), bottom_left = quantized::Read(x, bl + ch);
            const int32_t top = top_left * (1 << 11) + (quantized::Read(x, tr + ch) - top_left) * wx;
            const int32_t bottom = bottom_left * (1 << 11) + (quantized::Read(x, br + ch) - bottom_left) * wx;
            // 22 fractional bits, rounded half up.
            const int32_t sum = top * (1 << 11) + (bottom - top) * wy;
            quantized::Write(y, to + ch, (sum + (1 << 21)) >> 22);
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // An interpolation weight in XNNPACK's 11 fractional bits, rounded to
  // nearest even.
  static int32_t Weight11(float alpha) { return static_cast<int32_t>(std::nearbyint(alpha * 2048.0f)); }

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

// TFLite's coordinate mapping, as the CPU kernel (and XNNPACK) evaluate it.
absl::StatusOr<shaders::GeneratedShader> ResizeShader(const shaders::NodeContext& ctx) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  const auto& a = AttributesOf<ResizeAttributes>(ctx.node->attributes);
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const float sy = ResizeScale(a, in->height, out->height), sx = ResizeScale(a, in->width, out->width);
  GeneratedShader g = StartShader(ctx, *out, {0});
  std::string& body = g.code.body;
  ShaderParams& params = g.code.params;
  if (ctx.node->op == OpKind::kResizeNearestNeighbor) {
    const float offset = a.half_pixel_centers ? 0.5f : 0.0f;
    // std::round of a non-negative value is floor(v + 0.5).
    auto coordinate = [&](const char* o, float s, int size) {
      return fmt::format("clamp(int(floor((float({}) + {}) * {}{})), 0, {})", o, params.Float("offset", offset),
                         params.Float(fmt::format("{}_scale", o), s), a.align_corners ? " + 0.5" : "",
                         params.Int(fmt::format("{}_last", o), size - 1));
    };
    body += fmt::format("  int iy = {}, ix = {};\n  vec4 value = {};\n", coordinate("y", sy, in->height),
                        coordinate("x", sx, in->width), glsl::Read(params, "in0", *in, "b", "s", "iy", "ix"));
    return g;
  }
  auto coordinate = [&](const char* o, const char* name, float s, int size) {
    const std::string scale = params.Float(fmt::format("{}_scale", o), s);
    std::string v = a.half_pixel_centers
                        ? fmt::format("clamp(float({}) * {} + {}, 0.0, {})", o, scale,
                                      params.Float(fmt::format("{}_offset", o), 0.5f * s - 0.5f),
                                      params.Float(fmt::format("{}_last_f", o), static_cast<float>(size - 1)))
                        : fmt::format("float({}) * {}", o, scale);
    return fmt::format(
        "  highp float {0}v = {1};\n"
        "  int {0}0 = min(int({0}v), {2});\n"
        "  int {0}1 = min({0}0 + 1, {2});\n"
        "  float {0}a = {0}v - float({0}0);\n",
        name, v, params.Int(fmt::format("{}_last", o), size - 1));
  };
  body += coordinate("y", "ry", sy, in->height) + coordinate("x", "rx", sx, in->width);
  body += fmt::format(
      "  vec4 tl = {}, tr = {}, bl = {}, br = {};\n"
      "  vec4 top = tl + (tr - tl) * rxa;\n"
      "  vec4 bottom = bl + (br - bl) * rxa;\n"
      "  vec4 value = top + (bottom - top) * rya;\n",
      glsl::Read(params, "in0", *in, "b", "s", "ry0", "rx0"), glsl::Read(params, "in0", *in, "b", "s", "ry0", "rx1"),
      glsl::Read(params, "in0", *in, "b", "s", "ry1", "rx0"), glsl::Read(params, "in0", *in, "b", "s", "ry1", "rx1"));
  return g;
}

// A resize to the input's own size copies it (both modes, any corners).
bool SameSize(const Graph& graph, const Node& node) {
  return graph.tensors[static_cast<size_t>(node.inputs[0])].shape ==
         graph.tensors[static_cast<size_t>(node.outputs[0])].shape;
}

}  // namespace

std::vector<OpDefinition> ResizeOps() {
  return {
      {.op = OpKind::kResizeBilinear,
       .decode = Decode<tflite::ResizeBilinearOptions>,
       .encode = EncodeBilinear,
       .validate = Validate,
       .cpu_kernel = MakeKernel<ResizeKernel, true>,
       .is_identity = SameSize,
       .gpu = {ResizeShader},
       .quantize = {.output = QuantizeRule::Output::kInput}},
      {.op = OpKind::kResizeNearestNeighbor,
       .decode = Decode<tflite::ResizeNearestNeighborOptions>,
       .encode = EncodeNearest,
       .validate = Validate,
       .cpu_kernel = MakeKernel<ResizeKernel, false>,
       .is_identity = SameSize,
       .gpu = {ResizeShader},
       .quantize = {.output = QuantizeRule::Output::kInput, .moves_values = AlwaysMovesValues}},
  };
}

}  // namespace mgd::ops
