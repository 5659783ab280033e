// MgdImageToTensor: MediaPipe's ImageToTensor as a graph node
// (ops/pipeline/pipeline_ops.h). The GPU reads an 8-bit image straight from
// the partition's input buffer (four bytes to a word), so that a camera
// frame is uploaded as bytes and converted nowhere else.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/op_definition.h"
#include "ops/pipeline/options.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<OpAttributes> Decode(const std::vector<uint8_t>& options) {
  // Five fields, or six with clamp_to_edge.
  MGD_ASSIGN_OR_RETURN(const std::vector<float> f, ReadFloatFields(options, options.size() == 24 ? 6 : 5, kImageToTensorOp));
  ImageToTensorAttributes a;
  MGD_ASSIGN_OR_RETURN(a.height, ReadIntField(f[0], "height", 1, 16384));
  MGD_ASSIGN_OR_RETURN(a.width, ReadIntField(f[1], "width", 1, 16384));
  MGD_ASSIGN_OR_RETURN(a.channels, ReadIntField(f[2], "channels", 1, 4));
  a.range_min = f[3];
  a.range_max = f[4];
  if (f.size() == 6) {
    MGD_ASSIGN_OR_RETURN(const int clamp, ReadIntField(f[5], "clamp_to_edge", 0, 1));
    a.clamp_to_edge = clamp == 1;
  }
  return a;
}

// The image's shape and type, checked alike for both kernels.
absl::Status CheckImage(const Tensor& image, const Tensor& matrix, const ImageToTensorAttributes& a) {
  if (image.shape.size() != 4 || image.shape[0] != 1) {
    return absl::InvalidArgumentError(fmt::format("image {} is not [1, H, W, C]", ShapeToString(image.shape)));
  }
  const int c = image.shape[3];
  if (c != 1 && c != 3 && c != 4) return absl::InvalidArgumentError(fmt::format("image has {} channels (1, 3 or 4)", c));
  if (a.channels > c && c != 1) {
    return absl::InvalidArgumentError(fmt::format("{} output channels from an image of {}", a.channels, c));
  }
  if (image.type != DataType::kUInt8 && image.type != DataType::kFloat32) {
    return absl::InvalidArgumentError(fmt::format("image is {} (uint8 or float32)", DataTypeName(image.type)));
  }
  if (matrix.type != DataType::kFloat32 || NumElements(matrix.shape) != 16) {
    return absl::InvalidArgumentError(fmt::format("matrix {} {} is not 16 float32 values", DataTypeName(matrix.type),
                                                  ShapeToString(matrix.shape)));
  }
  return absl::OkStatus();
}

// Where output pixel (x, y) samples the image, kept inside [-2, size + 1]
// (a NaN or infinite matrix samples nothing) so that it converts to int.
inline float SampleCoordinate(float v, int size) {
  if (!std::isfinite(v)) return -2.0f;
  return std::fmin(std::fmax(v, -2.0f), static_cast<float>(size) + 1.0f);
}

class ImageToTensorKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    if (ctx.inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1) || ctx.outputs.size() != 1 ||
        ctx.out(0).type != DataType::kFloat32) {
      return ctx.Error("takes an image and a matrix, and gives one float32 tensor");
    }
    const auto* a = FindAttributes<ImageToTensorAttributes>(ctx.node->attributes);
    if (a == nullptr) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    const Tensor& image = ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[0])];
    const Tensor& matrix = ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[1])];
    if (absl::Status s = CheckImage(image, matrix, a_); !s.ok()) return ctx.Error(std::string(s.message()));
    return ctx.ExpectOutputShape(0, {1, a_.height, a_.width, a_.channels});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& image = ctx.in(0);
    const int h = image.dim(1), w = image.dim(2), c = image.dim(3);
    const float* m = ctx.in(1).as<float>();
    const bool bytes = image.type == DataType::kUInt8;
    auto pixel = [&](int px, int py, int k) -> float {
      if (a_.clamp_to_edge) px = std::clamp(px, 0, w - 1), py = std::clamp(py, 0, h - 1);
      if (px < 0 || py < 0 || px >= w || py >= h) return 0.0f;
      const int64_t i = (static_cast<int64_t>(py) * w + px) * c + (c == 1 ? 0 : k);
      return bytes ? static_cast<float>(image.data[i]) : image.as<float>()[i];
    };
    const float scale = (a_.range_max - a_.range_min) / 255.0f, offset = a_.range_min;
    float* out = ctx.out(0).as<float>();
    for (int y = 0; y < a_.height; ++y)
      for (int x = 0; x < a_.width; ++x) {
        const float fx = static_cast<float>(x), fy = static_cast<float>(y);
        const float sx = SampleCoordinate(m[0] * fx + m[1] * fy + m[3], w);
        const float sy = SampleCoordinate(m[4] * fx + m[5] * fy + m[7], h);
        const float x0 = std::floor(sx), y0 = std::floor(sy);
        const float ax = sx - x0, ay = sy - y0;
        const int ix = static_cast<int>(x0), iy = static_cast<int>(y0);
        for (int k = 0; k < a_.channels; ++k) {
          const float top = pixel(ix, iy, k) * (1.0f - ax) + pixel(ix + 1, iy, k) * ax;
          const float bottom = pixel(ix, iy + 1, k) * (1.0f - ax) + pixel(ix + 1, iy + 1, k) * ax;
          const float v = top * (1.0f - ay) + bottom * ay;
          out[(static_cast<int64_t>(y) * a_.width + x) * a_.channels + k] = v * scale + offset;
        }
      }
    return absl::OkStatus();
  }

 private:
  ImageToTensorAttributes a_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> ImageToTensorShader(const NodeContext& ctx) {
  const auto* a = FindAttributes<ImageToTensorAttributes>(ctx.node->attributes);
  // Not decoded: a program's own kernel replaced mgd's, so the op is its own.
  if (a == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  if (ctx.node->inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return absl::UnimplementedError("needs an image and a matrix");
  }
  const Tensor& image = ctx.input(0);
  const Tensor& matrix = ctx.input(1);
  if (absl::Status s = CheckImage(image, matrix, *a); !s.ok()) return absl::UnimplementedError(s.message());
  if (image.is_constant) return absl::UnimplementedError("a constant image");
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return out.status();
  const bool raw = image.type == DataType::kUInt8;
  // A matrix from the host is read as its float32 values, exact also where
  // activations are stored as fp16.
  const bool raw_matrix = !matrix.is_constant && IsGraphInput(ctx, 1);
  std::vector<int> activations;
  if (!raw) activations.push_back(0);
  if (!matrix.is_constant && !raw_matrix) activations.push_back(1);
  GeneratedShader g = StartShader(ctx, *out, activations);
  if (raw) AddRawInput(g, 0, "image", "uint");
  if (raw_matrix) AddRawInput(g, 1, "matrix", "float");
  ShaderParams& params = g.code.params;
  const int ih = image.shape[1], iw = image.shape[2], ic = image.shape[3];
  const std::string w = params.Int("image_w", iw), h = params.Int("image_h", ih);
  std::string rows;
  if (matrix.is_constant) {
    const float* m = reinterpret_cast<const float*>(matrix.data.data());
    rows = fmt::format("  highp vec4 row0 = vec4({}, {}, 0.0, {}), row1 = vec4({}, {}, 0.0, {});\n", params.Float("m00", m[0]),
                       params.Float("m01", m[1]), params.Float("m03", m[3]), params.Float("m10", m[4]),
                       params.Float("m11", m[5]), params.Float("m13", m[7]));
  } else if (raw_matrix) {
    rows = "  highp vec4 row0 = vec4(matrix[0], matrix[1], matrix[2], matrix[3]);\n"
           "  highp vec4 row1 = vec4(matrix[4], matrix[5], matrix[6], matrix[7]);\n";
  } else {
    const std::string buffer = raw ? "in0" : "in1";
    const layout::Bhwc shape{1, 1, 4, 4};
    rows = fmt::format("  highp vec4 row0 = {}, row1 = {};\n", glsl::Read(params, buffer, shape, "0", "0", "0", "0"),
                       glsl::Read(params, buffer, shape, "0", "0", "0", "1"));
  }
  // One tap: the image's pixel (px, py), zero outside.
  std::string tap = a->clamp_to_edge ? fmt::format("    px = clamp(px, 0, {} - 1);\n    py = clamp(py, 0, {} - 1);\n", w, h) : "";
  if (raw) {
    tap += fmt::format(
        "    if (px >= 0 && py >= 0 && px < {w} && py < {h}) {{\n"
        "      int i = (py * {w} + px) * {c};\n"
        "      MGD_LOOP for (int k = 0; k < {n}; ++k) {{\n"
        "        int j = i + k;\n"
        "        p[t][k] = float((image[j >> 2] >> uint(8 * (j & 3))) & 255u);\n"
        "      }}\n"
        "    }}\n",
        fmt::arg("w", w), fmt::arg("h", h), fmt::arg("c", params.Int("image_c", ic)), fmt::arg("n", std::min(ic, 4)));
  } else {
    tap += fmt::format("    if (px >= 0 && py >= 0 && px < {} && py < {}) p[t] = {};\n", w, h,
                      glsl::Read(params, "in0", layout::Bhwc{1, ih, iw, ic}, "0", "0", "py", "px"));
  }
  const float scale = (a->range_max - a->range_min) / 255.0f;
  g.code.body = rows + fmt::format(
      "  highp float sx = row0.x * float(x) + row0.y * float(y) + row0.w;\n"
      "  highp float sy = row1.x * float(x) + row1.y * float(y) + row1.w;\n"
      "  if (isnan(sx) || isnan(sy) || isinf(sx) || isinf(sy)) {{ sx = -2.0; sy = -2.0; }}\n"
      "  sx = clamp(sx, -2.0, float({w}) + 1.0);\n"
      "  sy = clamp(sy, -2.0, float({h}) + 1.0);\n"
      "  highp float x0 = floor(sx), y0 = floor(sy);\n"
      "  highp float ax = sx - x0, ay = sy - y0;\n"
      "  highp vec4 p[4];\n"
      "  MGD_LOOP for (int t = 0; t < 4; ++t) {{\n"
      "    int px = int(x0) + (t & 1), py = int(y0) + (t >> 1);\n"
      "    p[t] = vec4(0.0);\n"
      "{tap}"
      "  }}\n"
      "  highp vec4 top = p[0] * (1.0 - ax) + p[1] * ax;\n"
      "  highp vec4 bottom = p[2] * (1.0 - ax) + p[3] * ax;\n"
      "  highp vec4 sampled = top * (1.0 - ay) + bottom * ay;\n"
      "{grey}"
      "  vec4 value = sampled * {scale} + vec4({offset});\n",
      fmt::arg("w", w), fmt::arg("h", h), fmt::arg("tap", tap), fmt::arg("grey", ic == 1 ? "  sampled = sampled.xxxx;\n" : ""),
      fmt::arg("scale", params.Float("scale", scale)), fmt::arg("offset", params.Float("offset", a->range_min)));
  return g;
}

}  // namespace

std::vector<OpDefinition> ImageToTensorOps() {
  return {{.op = OpKind::kCustom,
           .custom_name = kImageToTensorOp,
           .decode_custom = Decode,
           .cpu_kernel = MakeKernel<ImageToTensorKernel>,
           .gpu = {ImageToTensorShader},
           .raw_types = {DataType::kUInt8}}};
}

}  // namespace mgd::ops
