// MediaPipe's Landmarks2TransformMatrix, TransformTensorBilinear and
// TransformLandmarks (ops/transform/transform.h): CPU kernels with
// MediaPipe's arithmetic, and GPU generators.
#include "ops/transform/transform.h"

#include <flatbuffers/flexbuffers.h>
#include <fmt/format.h>

#include <cmath>

#include "interpreter/kernels/kernel_util.h"
#include "model/mediapipe_options.h"
#include "model/status_macros.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// MediaPipe's landmarks are x, y (moved) and z (kept); mgd's pipelines also
// pass pose's visibility and presence through (pipeline/), so up to this
// many values per landmark, all after x, y kept.
constexpr int kMaxLandmarkValues = 8;


constexpr int kMaxIndex = 1 << 20;

absl::StatusOr<OpAttributes> DecodeLandmarks2TransformMatrix(const std::vector<uint8_t>& options) {
  MGD_ASSIGN_OR_RETURN(const FlexOptions f, FlexOptions::Parse(options));
  Landmarks2TransformMatrixAttributes a;
  a.version = f.Has("subset_idxs") ? 2 : 1;
  MGD_ASSIGN_OR_RETURN(const std::vector<int> subset, f.Ints(a.version == 2 ? "subset_idxs" : "subset", 0, kMaxIndex));
  if (subset.empty()) return absl::InvalidArgumentError("custom_options: the landmark subset is empty");
  // An odd count pairs the last index with itself, as MediaPipe reads it.
  for (size_t i = 0; i < subset.size(); i += 2) a.subset.push_back({subset[i], subset[std::min(i + 1, subset.size() - 1)]});
  MGD_ASSIGN_OR_RETURN(a.left_rotation_idx, f.Int("left_rotation_idx", 0, kMaxIndex));
  MGD_ASSIGN_OR_RETURN(a.right_rotation_idx, f.Int("right_rotation_idx", 0, kMaxIndex));
  if (a.version == 2) {
    MGD_ASSIGN_OR_RETURN(a.target_rotation_radians, f.Float("target_rotation_radians"));
    MGD_ASSIGN_OR_RETURN(a.output_height, f.Int("output_height", 1, kMaxIndex));
    MGD_ASSIGN_OR_RETURN(a.output_width, f.Int("output_width", 1, kMaxIndex));
    MGD_ASSIGN_OR_RETURN(a.scale_x, f.Float("scale_x"));
    MGD_ASSIGN_OR_RETURN(a.scale_y, f.Float("scale_y"));
    if (a.scale_x <= 0 || a.scale_y <= 0) return absl::InvalidArgumentError("custom_options: scale_x and scale_y must be positive");
    return a;
  }
  MGD_ASSIGN_OR_RETURN(const std::vector<int> input_hw, f.Ints("input_hw", 1, kMaxIndex));
  MGD_ASSIGN_OR_RETURN(const std::vector<int> output_hw, f.Ints("output_hw", 2, kMaxIndex));
  if (input_hw.size() != 2 || output_hw.size() != 2) return absl::InvalidArgumentError("custom_options: input_hw and output_hw are [h, w]");
  a.input_h = input_hw[0];
  a.input_w = input_hw[1];
  a.output_h = output_hw[0];
  a.output_w = output_hw[1];
  MGD_ASSIGN_OR_RETURN(const int dimensions, f.Int("dimensions", 0, kMaxIndex));
  if (dimensions != 3) return absl::InvalidArgumentError(fmt::format("custom_options: dimensions {} (3)", dimensions));
  MGD_ASSIGN_OR_RETURN(a.landmarks_range, f.Int("landmarks_range", 1, kMaxIndex));
  MGD_ASSIGN_OR_RETURN(a.bbox_size_multiplier, f.Float("bbox_size_multiplier"));
  if (a.bbox_size_multiplier == 0) return absl::InvalidArgumentError("custom_options: bbox_size_multiplier is 0");
  return a;
}

absl::StatusOr<OpAttributes> DecodeTransformTensorBilinear(const std::vector<uint8_t>& options) {
  MGD_ASSIGN_OR_RETURN(const FlexOptions f, FlexOptions::Parse(options));
  TransformTensorBilinearAttributes a;
  if (f.Has("output_size")) {  // v1
    MGD_ASSIGN_OR_RETURN(const std::vector<int> size, f.Ints("output_size", 1, 16384));
    if (size.size() != 2) return absl::InvalidArgumentError("custom_options: output_size is [h, w]");
    a.output_height = size[0];
    a.output_width = size[1];
    return a;
  }
  MGD_ASSIGN_OR_RETURN(a.output_height, f.Int("output_height", 1, 16384));
  MGD_ASSIGN_OR_RETURN(a.output_width, f.Int("output_width", 1, 16384));
  return a;
}

// v1's map (dimensions, scale); v2 has no options.
absl::StatusOr<OpAttributes> DecodeTransformLandmarks(const std::vector<uint8_t>& options) {
  TransformLandmarksAttributes a;
  if (options.empty()) return a;
  MGD_ASSIGN_OR_RETURN(const FlexOptions f, FlexOptions::Parse(options));
  if (f.Has("dimensions")) {
    MGD_ASSIGN_OR_RETURN(a.dimensions, f.Int("dimensions", 2, kMaxLandmarkValues));
  }
  if (f.Has("scale")) {
    MGD_ASSIGN_OR_RETURN(a.scale, f.Float("scale"));
    if (a.scale == 0) return absl::InvalidArgumentError("custom_options: scale is 0");
  }
  return a;
}

template <typename T>
absl::StatusOr<T> Attrs(const Node& node) {
  const T* a = FindAttributes<T>(node.attributes);
  if (a == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  return *a;
}

absl::Status CheckMatrix(const Tensor& m) {
  if (m.type != DataType::kFloat32 || NumElements(m.shape) != 16) {
    return absl::InvalidArgumentError(fmt::format("the matrix {} is not 16 float32 values", ShapeToString(m.shape)));
  }
  return absl::OkStatus();
}

// --- Landmarks2TransformMatrix ---

// The landmarks' count (each x, y, z) and the highest index the options read.
absl::Status CheckLandmarks(const Tensor& landmarks, const Landmarks2TransformMatrixAttributes& a) {
  const int64_t n = NumElements(landmarks.shape) / 3;
  if (landmarks.type != DataType::kFloat32 || NumElements(landmarks.shape) % 3 != 0 || landmarks.shape.empty() ||
      landmarks.shape[0] != 1) {
    return absl::InvalidArgumentError(fmt::format("landmarks {} are not x, y, z triples", ShapeToString(landmarks.shape)));
  }
  int top = std::max(a.left_rotation_idx, a.right_rotation_idx);
  for (const auto& pair : a.subset) top = std::max({top, pair[0], pair[1]});
  if (top >= n) return absl::InvalidArgumentError(fmt::format("custom_options: landmark {} of {}", top, n));
  return absl::OkStatus();
}

using Mat3 = std::array<float, 9>;
Mat3 Mul(const Mat3& x, const Mat3& y) {
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += x[i * 3 + k] * y[k * 3 + j];
      r[i * 3 + j] = sum;
    }
  return r;
}

void MatrixV1(const Landmarks2TransformMatrixAttributes& a, const float* lm, float* out) {
  auto xy = [&](int i) { return std::array<float, 2>{lm[i * 3], lm[i * 3 + 1]}; };
  const auto l = xy(a.left_rotation_idx), r = xy(a.right_rotation_idx);
  const float alpha = -std::atan((r[1] - l[1]) / (r[0] - l[0]));
  float max_x = -100000, max_y = -100000, min_x = 100000, min_y = 100000;
  for (const auto& pair : a.subset)
    for (int i : pair) {
      const auto p = xy(i);
      const float rx = p[0] * std::cos(alpha) - p[1] * std::sin(alpha), ry = p[0] * std::sin(alpha) + p[1] * std::cos(alpha);
      max_x = std::max(max_x, rx), max_y = std::max(max_y, ry), min_x = std::min(min_x, rx), min_y = std::min(min_y, ry);
    }
  const float range = static_cast<float>(a.landmarks_range);
  const float bw = (max_x - min_x) * a.bbox_size_multiplier, bh = (max_y - min_y) * a.bbox_size_multiplier;
  const Mat3 scale{bw / range, 0, 0, 0, bh / range, 0, 0, 0, 1};
  const float mx = (max_x + min_x) / 2.0f, my = (max_y + min_y) / 2.0f;
  const float c = std::cos(-alpha), s = std::sin(-alpha);
  const float rmx = mx * c - my * s, rmy = mx * s + my * c;
  const Mat3 rotation{c, -s, rmx / range * 2.0f - 1.0f, s, c, rmy / range * 2.0f - 1.0f, 0, 0, 1};
  const Mat3 to_relative{2.0f / (static_cast<float>(a.output_w) - 1.0f), 0, -1, 0, 2.0f / (static_cast<float>(a.output_h) - 1.0f), -1, 0, 0, 1};
  const float hw = (static_cast<float>(a.input_w) - 1.0f) / 2.0f, hh = (static_cast<float>(a.input_h) - 1.0f) / 2.0f;
  const Mat3 to_absolute{hw, 0, hw, 0, hh, hh, 0, 0, 1};
  const Mat3 m = Mul(Mul(Mul(to_absolute, rotation), scale), to_relative);
  const float v[16] = {m[0], m[1], 0, m[2], m[3], m[4], 0, m[5], m[6], m[7], m[8], 0, 0, 0, 0, 1};
  std::copy(v, v + 16, out);
}

void MatrixV2(const Landmarks2TransformMatrixAttributes& a, const float* lm, float* out) {
  const float* l = lm + a.left_rotation_idx * 3;
  const float* r = lm + a.right_rotation_idx * 3;
  const float rotation = a.target_rotation_radians - std::atan2(r[1] - l[1], r[0] - l[0]);
  const float c = std::cos(rotation), s = std::sin(rotation);
  float max_x = 0, max_y = 0, min_x = 0, min_y = 0;
  bool first = true;
  for (const auto& pair : a.subset)
    for (int i : pair) {
      const float* p = lm + i * 3;
      const float x = c * p[0] - s * p[1], y = s * p[0] + c * p[1];
      if (first || max_x < x) max_x = x;
      if (first || max_y < y) max_y = y;
      if (first || min_x > x) min_x = x;
      if (first || min_y > y) min_y = y;
      first = false;
    }
  const float width = max_x - min_x, height = max_y - min_y;
  const float mx = (min_x + max_x) / 2, my = (min_y + max_y) / 2;
  const float ci = std::cos(-rotation), si = std::sin(-rotation);
  const float cx = ci * mx - si * my, cy = si * mx + ci * my;
  // shift(crop centre) * rotation(-rotation) * scale * shift(-output / 2)
  const float sx = a.scale_x * width / static_cast<float>(a.output_width);
  const float sy = a.scale_y * height / static_cast<float>(a.output_height);
  const float hx = -1.0f * (static_cast<float>(a.output_width) / 2.0f), hy = -1.0f * (static_cast<float>(a.output_height) / 2.0f);
  const float v[16] = {ci * sx, -si * sy, 0, ci * sx * hx + -si * sy * hy + cx,
                       si * sx, ci * sy,  0, si * sx * hx + ci * sy * hy + cy,
                       0,       0,        1, 0,
                       0,       0,        0, 1};
  std::copy(v, v + 16, out);
}

class Landmarks2TransformMatrixKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 1, 1));
    auto a = Attrs<Landmarks2TransformMatrixAttributes>(*ctx.node);
    if (!a.ok()) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    if (absl::Status s = CheckLandmarks(ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[0])], a_); !s.ok()) {
      return ctx.Error(std::string(s.message()));
    }
    return ctx.ExpectOutputShape(0, {1, 4, 4});
  }
  absl::Status Invoke(KernelContext& ctx) override {
    (a_.version == 2 ? MatrixV2 : MatrixV1)(a_, ctx.in(0).as<float>(), ctx.out(0).as<float>());
    return absl::OkStatus();
  }

 private:
  Landmarks2TransformMatrixAttributes a_;
};

// --- TransformTensorBilinear ---

class TransformTensorBilinearKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 2, 1));
    auto a = Attrs<TransformTensorBilinearAttributes>(*ctx.node);
    if (!a.ok()) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ExpectRank4(ctx, x, "input"));
    if (x.dim(0) != 1) return ctx.Error("takes one batch");
    if (absl::Status s = CheckMatrix(ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[1])]); !s.ok()) {
      return ctx.Error(std::string(s.message()));
    }
    return ctx.ExpectOutputShape(0, {1, a_.output_height, a_.output_width, x.dim(3)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const int h = x.dim(1), w = x.dim(2), c = x.dim(3);
    const float* in = x.as<float>();
    const float* m = ctx.in(1).as<float>();
    float row0[4] = {m[0], m[1], m[2], m[3]}, row1[4] = {m[4], m[5], m[6], m[7]};
    if (ctx.node->version >= 2) {  // align corners: sample at pixel centres
      row0[3] += row0[0] * 0.5f + row0[1] * 0.5f - 0.5f;
      row1[3] += row1[0] * 0.5f + row1[1] * 0.5f - 0.5f;
    }
    float* out = ctx.out(0).as<float>();
    auto read = [&](int yy, int xx, int k) {
      return yy < 0 || xx < 0 || yy >= h || xx >= w ? 0.0f : in[(static_cast<int64_t>(yy) * w + xx) * c + k];
    };
    for (int oy = 0; oy < a_.output_height; ++oy)
      for (int ox = 0; ox < a_.output_width; ++ox) {
        const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
        const float tx = row0[0] * fx + row0[1] * fy + row0[3], ty = row1[0] * fx + row1[1] * fy + row1[3];
        // Outside (a NaN too): zeros.
        const bool inside = tx >= 0.0f && tx <= static_cast<float>(w - 1) && ty >= 0.0f && ty <= static_cast<float>(h - 1);
        const float x0 = std::floor(tx), y0 = std::floor(ty);
        const int ix = inside ? static_cast<int>(x0) : 0, iy = inside ? static_cast<int>(y0) : 0;
        const float rx = tx - x0, ly = ty - y0;
        for (int k = 0; k < c; ++k) {
          float v = 0.0f;
          if (inside) {
            const float upper = (1.0f - rx) * read(iy, ix, k) + rx * read(iy, ix + 1, k);
            const float lower = (1.0f - rx) * read(iy + 1, ix, k) + rx * read(iy + 1, ix + 1, k);
            v = ly * lower + (1.0f - ly) * upper;
          }
          out[(static_cast<int64_t>(oy) * a_.output_width + ox) * c + k] = v;
        }
      }
    return absl::OkStatus();
  }

 private:
  TransformTensorBilinearAttributes a_;
};

// --- TransformLandmarks ---

// The values per landmark: v1's option, else the last dimension (v2).
absl::StatusOr<int> LandmarkDimensions(const Tensor& landmarks, const TransformLandmarksAttributes& a) {
  if (landmarks.shape.empty()) return absl::InvalidArgumentError("landmarks are a scalar");
  const int dims = a.dimensions > 0 ? a.dimensions : landmarks.shape.back();
  if (dims < 2 || dims > kMaxLandmarkValues) {
    return absl::InvalidArgumentError(fmt::format("landmarks of {} values (2 to {})", dims, kMaxLandmarkValues));
  }
  if (landmarks.shape.back() % dims != 0) {
    return absl::InvalidArgumentError(fmt::format("{} values per row are not landmarks of {}", landmarks.shape.back(), dims));
  }
  return dims;
}

class TransformLandmarksKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 2, 1));
    auto a = Attrs<TransformLandmarksAttributes>(*ctx.node);
    if (!a.ok()) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    const Tensor& landmarks = ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[0])];
    auto dims = LandmarkDimensions(landmarks, a_);
    if (!dims.ok()) return ctx.Error(std::string(dims.status().message()));
    dims_ = *dims;
    if (absl::Status s = CheckMatrix(ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[1])]); !s.ok()) {
      return ctx.Error(std::string(s.message()));
    }
    return ctx.ExpectOutputShape(0, ctx.in(0).shape);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const float* in = ctx.in(0).as<float>();
    const float* m = ctx.in(1).as<float>();
    float* out = ctx.out(0).as<float>();
    const float t0 = m[3] * a_.scale, t1 = m[7] * a_.scale;
    for (int64_t i = 0, n = ctx.in(0).elements(); i < n; i += dims_) {
      const float x = in[i], y = in[i + 1];
      out[i] = m[0] * x + m[1] * y + t0;
      out[i + 1] = m[4] * x + m[5] * y + t1;
      for (int k = 2; k < dims_; ++k) out[i + k] = in[i + k];
    }
    return absl::OkStatus();
  }

 private:
  TransformLandmarksAttributes a_;
  int dims_ = 3;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

const char kLane[] = "xyzw";

// Element `e` of a batch-1 tensor of BHWC `shape`, as a GLSL float.
std::string Element(ShaderParams& params, const std::string& buffer, const layout::Bhwc& shape, int64_t e) {
  const int64_t c = e % shape.channels, x = (e / shape.channels) % shape.width, y = e / (shape.channels * shape.width);
  return fmt::format("{}.{}", glsl::Read(params, buffer, shape, "0", std::to_string(c / 4), std::to_string(y), std::to_string(x)),
                     kLane[c % 4]);
}

// The matrix's first two rows from `buffer`: a [1, 4, 4] or [1, 1, 4, 4]
// activation, or (`raw`) the host's 16 floats.
std::string MatrixRows(ShaderParams& params, const std::string& buffer, bool raw = false) {
  if (raw) {
    return fmt::format("  highp vec4 row0 = vec4({0}[0], {0}[1], {0}[2], {0}[3]), row1 = vec4({0}[4], {0}[5], {0}[6], {0}[7]);\n",
                       buffer);
  }
  const layout::Bhwc m{1, 1, 4, 4};
  return fmt::format("  highp vec4 row0 = {}, row1 = {};\n", glsl::Read(params, buffer, m, "0", "0", "0", "0"),
                     glsl::Read(params, buffer, m, "0", "0", "0", "1"));
}

// One invocation: the few landmarks it reads, unrolled, and the matrix's
// four rows.
absl::StatusOr<GeneratedShader> Landmarks2TransformMatrixShader(const NodeContext& ctx) {
  MGD_ASSIGN_OR_RETURN(const auto a, Attrs<Landmarks2TransformMatrixAttributes>(*ctx.node));
  if (ctx.node->inputs.size() != 1) return absl::UnimplementedError("takes one input");
  if (absl::Status s = CheckLandmarks(ctx.input(0), a); !s.ok()) return absl::UnimplementedError(s.message());
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc in, InputBhwc(ctx, 0));
  if (in.batch != 1) return absl::UnimplementedError("takes one batch");
  const layout::Bhwc out{1, 1, 4, 4};
  GeneratedShader g = StartShader(ctx, out, {0});
  g.linkable = false;
  g.code.workgroup = {1, 1, 1};
  g.groups = {1, 1, 1};
  ShaderParams& params = g.code.params;
  auto landmark = [&](int i) {
    return fmt::format("vec2({}, {})", Element(params, "in0", in, int64_t{i} * 3), Element(params, "in0", in, int64_t{i} * 3 + 1));
  };
  std::string body = fmt::format("  highp vec2 l = {}, r = {};\n", landmark(a.left_rotation_idx), landmark(a.right_rotation_idx));
  std::string points = fmt::format("  highp vec2 p[{}];\n", a.subset.size() * 2);
  for (size_t k = 0; k < a.subset.size(); ++k) {
    points += fmt::format("  p[{}] = {};\n  p[{}] = {};\n", 2 * k, landmark(a.subset[k][0]), 2 * k + 1, landmark(a.subset[k][1]));
  }
  body += points;
  const std::string n = std::to_string(a.subset.size() * 2);
  if (a.version == 2) {
    body += fmt::format(
        "  highp float rotation = {target} - atan(r.y - l.y, r.x - l.x);\n"
        "  highp float c = cos(rotation), s = sin(rotation);\n"
        "  highp vec2 lo = vec2(0.0), hi = vec2(0.0);\n"
        "  MGD_LOOP for (int k = 0; k < {n}; ++k) {{\n"
        "    highp vec2 q = vec2(c * p[k].x - s * p[k].y, s * p[k].x + c * p[k].y);\n"
        "    lo = k == 0 ? q : min(lo, q);\n"
        "    hi = k == 0 ? q : max(hi, q);\n"
        "  }}\n"
        "  highp vec2 size = hi - lo, mid = (lo + hi) / 2.0;\n"
        "  highp float ci = cos(-rotation), si = sin(-rotation);\n"
        "  highp vec2 centre = vec2(ci * mid.x - si * mid.y, si * mid.x + ci * mid.y);\n"
        "  highp float sx = {scale_x} * size.x / {ow}, sy = {scale_y} * size.y / {oh};\n"
        "  highp float hx = -({ow} / 2.0), hy = -({oh} / 2.0);\n"
        "  out0_set(0, vec4(ci * sx, -si * sy, 0.0, ci * sx * hx + -si * sy * hy + centre.x));\n"
        "  out0_set(1, vec4(si * sx, ci * sy, 0.0, si * sx * hx + ci * sy * hy + centre.y));\n",
        fmt::arg("target", glsl::Float(a.target_rotation_radians)), fmt::arg("n", n), fmt::arg("scale_x", glsl::Float(a.scale_x)),
        fmt::arg("scale_y", glsl::Float(a.scale_y)), fmt::arg("ow", glsl::Float(static_cast<float>(a.output_width))),
        fmt::arg("oh", glsl::Float(static_cast<float>(a.output_height))));
  } else {
    const float range = static_cast<float>(a.landmarks_range);
    body += fmt::format(
        "  highp float alpha = -atan((r.y - l.y) / (r.x - l.x));\n"
        "  highp float ca = cos(alpha), sa = sin(alpha);\n"
        "  highp vec2 hi = vec2(-100000.0), lo = vec2(100000.0);\n"
        "  MGD_LOOP for (int k = 0; k < {n}; ++k) {{\n"
        "    highp vec2 q = vec2(p[k].x * ca - p[k].y * sa, p[k].x * sa + p[k].y * ca);\n"
        "    hi = max(hi, q);\n"
        "    lo = min(lo, q);\n"
        "  }}\n"
        "  highp vec2 box = (hi - lo) * {mult};\n"
        "  highp mat3 scale = mat3(box.x / {range}, 0.0, 0.0, 0.0, box.y / {range}, 0.0, 0.0, 0.0, 1.0);\n"
        "  highp vec2 mid = (hi + lo) / 2.0;\n"
        "  highp float c = cos(-alpha), s = sin(-alpha);\n"
        "  highp vec2 rm = vec2(mid.x * c - mid.y * s, mid.x * s + mid.y * c);\n"
        // GLSL's mat3 takes columns.
        "  highp mat3 rotation = mat3(c, s, 0.0, -s, c, 0.0, rm.x / {range} * 2.0 - 1.0, rm.y / {range} * 2.0 - 1.0, 1.0);\n"
        "  highp mat3 to_relative = mat3(2.0 / ({ow} - 1.0), 0.0, 0.0, 0.0, 2.0 / ({oh} - 1.0), 0.0, -1.0, -1.0, 1.0);\n"
        "  highp mat3 to_absolute = mat3(({iw} - 1.0) / 2.0, 0.0, 0.0, 0.0, ({ih} - 1.0) / 2.0, 0.0, ({iw} - 1.0) / 2.0, "
        "({ih} - 1.0) / 2.0, 1.0);\n"
        "  highp mat3 m = to_absolute * rotation * scale * to_relative;\n"
        "  out0_set(0, vec4(m[0][0], m[1][0], 0.0, m[2][0]));\n"
        "  out0_set(1, vec4(m[0][1], m[1][1], 0.0, m[2][1]));\n",
        fmt::arg("n", n), fmt::arg("mult", glsl::Float(a.bbox_size_multiplier)), fmt::arg("range", glsl::Float(range)),
        fmt::arg("ow", glsl::Float(static_cast<float>(a.output_w))), fmt::arg("oh", glsl::Float(static_cast<float>(a.output_h))),
        fmt::arg("iw", glsl::Float(static_cast<float>(a.input_w))), fmt::arg("ih", glsl::Float(static_cast<float>(a.input_h))));
    body += "  out0_set(2, vec4(m[0][2], m[1][2], m[2][2], 0.0));\n  out0_set(3, vec4(0.0, 0.0, 0.0, 1.0));\n";
    g.code.body = body;
    return g;
  }
  body += "  out0_set(2, vec4(0.0, 0.0, 1.0, 0.0));\n  out0_set(3, vec4(0.0, 0.0, 0.0, 1.0));\n";
  g.code.body = body;
  return g;
}

absl::StatusOr<GeneratedShader> TransformTensorBilinearShader(const NodeContext& ctx) {
  // The output's size is its shape's: only whether the options were read.
  if (absl::Status s = Attrs<TransformTensorBilinearAttributes>(*ctx.node).status(); !s.ok()) return s;
  if (ctx.node->inputs.size() != 2) return absl::UnimplementedError("takes a tensor and a matrix");
  if (absl::Status s = CheckMatrix(ctx.input(1)); !s.ok()) return absl::UnimplementedError(s.message());
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc in, InputBhwc(ctx, 0));
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc out, OutputBhwc(ctx, 0));
  if (in.batch != 1 || ctx.input(0).shape.size() != 4) return absl::UnimplementedError("takes one batch of rank 4");
  GeneratedShader g = StartShader(ctx, out, {0, 1});
  ShaderParams& params = g.code.params;
  std::string body = MatrixRows(params, "in1");
  if (ctx.node->version >= 2) {
    body += "  row0.w += row0.x * 0.5 + row0.y * 0.5 - 0.5;\n  row1.w += row1.x * 0.5 + row1.y * 0.5 - 0.5;\n";
  }
  const std::string w = params.Int("in0_w", in.width), h = params.Int("in0_h", in.height);
  auto tap = [&](const char* yy, const char* xx) { return glsl::ReadOrZero(params, "in0", in, "0", "s", yy, xx); };
  body += fmt::format(
      "  highp float tx = dot(row0, vec4(float(x), float(y), 0.0, 1.0)), ty = dot(row1, vec4(float(x), float(y), 0.0, 1.0));\n"
      "  vec4 value = vec4(0.0);\n"
      "  if (tx >= 0.0 && tx <= float({w} - 1) && ty >= 0.0 && ty <= float({h} - 1)) {{\n"
      "    highp float x0 = floor(tx), y0 = floor(ty);\n"
      "    int ix = int(x0), iy = int(y0), ix1 = ix + 1, iy1 = iy + 1;\n"
      "    highp float rx = tx - x0, ly = ty - y0;\n"
      "    highp vec4 upper = (1.0 - rx) * {q11} + rx * {q21};\n"
      "    highp vec4 lower = (1.0 - rx) * {q12} + rx * {q22};\n"
      "    value = ly * lower + (1.0 - ly) * upper;\n"
      "  }}\n",
      fmt::arg("w", w), fmt::arg("h", h), fmt::arg("q11", tap("iy", "ix")), fmt::arg("q21", tap("iy", "ix1")),
      fmt::arg("q12", tap("iy1", "ix")), fmt::arg("q22", tap("iy1", "ix1")));
  g.code.body = body;
  return g;
}

// Each output value: its landmark's x and y through the matrix, or the
// value itself (z).
absl::StatusOr<GeneratedShader> TransformLandmarksShader(const NodeContext& ctx) {
  MGD_ASSIGN_OR_RETURN(const auto a, Attrs<TransformLandmarksAttributes>(*ctx.node));
  if (ctx.node->inputs.size() != 2) return absl::UnimplementedError("takes landmarks and a matrix");
  if (absl::Status s = CheckMatrix(ctx.input(1)); !s.ok()) return absl::UnimplementedError(s.message());
  auto dims = LandmarkDimensions(ctx.input(0), a);
  if (!dims.ok()) return absl::UnimplementedError(dims.status().message());
  MGD_ASSIGN_OR_RETURN(const layout::Bhwc in, InputBhwc(ctx, 0));
  // A matrix from the host is read exactly (fp16 storage would move the
  // landmarks by up to a quarter pixel at 500 px).
  const bool raw_matrix = IsGraphInput(ctx, 1);
  GeneratedShader g = StartShader(ctx, in, raw_matrix ? std::vector<int>{0} : std::vector<int>{0, 1});
  if (raw_matrix) AddRawInput(g, 1, "matrix", "float");
  ShaderParams& params = g.code.params;
  auto value_at = [&](const std::string& ch) {
    return fmt::format("{}[({}) & 3]", glsl::Read(params, "in0", in, "b", "((" + ch + ") >> 2)", "y", "x"), ch);
  };
  g.code.body = MatrixRows(params, raw_matrix ? "matrix" : "in1", raw_matrix) +
                fmt::format("  row0.w *= {scale};\n"
                            "  row1.w *= {scale};\n",
                            fmt::arg("scale", glsl::Float(a.scale))) +
                glsl::ForEachLane(params, in,
                                  fmt::format("    int first = c - c % {D};\n"
                                              "    highp vec4 p = vec4({vx}, {vy}, 0.0, 1.0);\n"
                                              "    int part = c - first;\n"
                                              "    value[k] = part == 0 ? dot(row0, p) : (part == 1 ? dot(row1, p) : {own});\n",
                                              fmt::arg("D", *dims), fmt::arg("vx", value_at("first")),
                                              fmt::arg("vy", value_at("first + 1")), fmt::arg("own", value_at("c"))));
  return g;
}

}  // namespace

std::vector<uint8_t> EncodeTransformLandmarksOptions(int dimensions, float scale) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Int("dimensions", dimensions);
    fbb.Float("scale", scale);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

std::vector<OpDefinition> TransformOps() {
  return {{.op = OpKind::kCustom,
           .custom_name = kLandmarks2TransformMatrixOp,
           .decode_custom = DecodeLandmarks2TransformMatrix,
           .cpu_kernel = MakeKernel<Landmarks2TransformMatrixKernel>,
           .gpu = {Landmarks2TransformMatrixShader}},
          {.op = OpKind::kCustom,
           .custom_name = kTransformTensorBilinearOp,
           .decode_custom = DecodeTransformTensorBilinear,
           .cpu_kernel = MakeKernel<TransformTensorBilinearKernel>,
           .gpu = {TransformTensorBilinearShader}},
          {.op = OpKind::kCustom,
           .custom_name = kTransformLandmarksOp,
           .decode_custom = DecodeTransformLandmarks,
           .cpu_kernel = MakeKernel<TransformLandmarksKernel>,
           .gpu = {TransformLandmarksShader}}};
}

}  // namespace mgd::ops
