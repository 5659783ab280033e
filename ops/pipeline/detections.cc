// MgdDecodeDetections and MgdNonMaxSuppression: MediaPipe's
// TensorsToDetections, NonMaxSuppression (WEIGHTED, IoU) and
// DetectionProjection as graph nodes (ops/pipeline/pipeline_ops.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/op_definition.h"
#include "ops/pipeline/options.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<OpAttributes> DecodeDecodeOptions(const std::vector<uint8_t>& options) {
  MGD_ASSIGN_OR_RETURN(const std::vector<float> f, ReadFloatFields(options, 13, kDecodeDetectionsOp));
  DecodeDetectionsAttributes a;
  MGD_ASSIGN_OR_RETURN(a.num_coords, ReadIntField(f[0], "num_coords", 4, 1024));
  MGD_ASSIGN_OR_RETURN(a.box_offset, ReadIntField(f[1], "box_offset", 0, a.num_coords - 4));
  MGD_ASSIGN_OR_RETURN(a.keypoint_offset, ReadIntField(f[2], "keypoint_offset", 0, a.num_coords));
  MGD_ASSIGN_OR_RETURN(a.num_keypoints, ReadIntField(f[3], "num_keypoints", 0, 256));
  MGD_ASSIGN_OR_RETURN(a.values_per_keypoint, ReadIntField(f[4], "values_per_keypoint", 2, 16));
  if (a.keypoint_offset + a.num_keypoints * a.values_per_keypoint > a.num_coords) {
    return absl::InvalidArgumentError(fmt::format("custom_options: {} keypoints of {} values from {} pass num_coords {}",
                                                  a.num_keypoints, a.values_per_keypoint, a.keypoint_offset, a.num_coords));
  }
  a.x_scale = f[5];
  a.y_scale = f[6];
  a.w_scale = f[7];
  a.h_scale = f[8];
  if (a.x_scale == 0 || a.y_scale == 0 || a.w_scale == 0 || a.h_scale == 0) {
    return absl::InvalidArgumentError("custom_options: a scale is 0");
  }
  a.reverse_order = f[9] != 0;
  a.exp_size = f[10] != 0;
  a.sigmoid = f[11] != 0;
  a.score_clip = f[12];
  if (a.score_clip < 0) return absl::InvalidArgumentError(fmt::format("custom_options: score clip {} < 0", a.score_clip));
  return a;
}

absl::StatusOr<OpAttributes> DecodeNmsOptions(const std::vector<uint8_t>& options) {
  MGD_ASSIGN_OR_RETURN(const std::vector<float> f, ReadFloatFields(options, 3, kNonMaxSuppressionOp));
  NonMaxSuppressionAttributes a;
  MGD_ASSIGN_OR_RETURN(a.max_detections, ReadIntField(f[0], "max_detections", 1, 4096));
  a.min_score = f[1];
  a.iou_threshold = f[2];
  return a;
}

// The number of anchors, with the inputs' shapes checked against it.
absl::StatusOr<int> CheckDecodeInputs(const Tensor& boxes, const Tensor& scores, const Tensor& anchors,
                                      const DecodeDetectionsAttributes& a) {
  if (boxes.shape.size() != 3 || boxes.shape[0] != 1 || boxes.shape[2] != a.num_coords) {
    return absl::InvalidArgumentError(
        fmt::format("regressors {} are not [1, N, {}] (num_coords)", ShapeToString(boxes.shape), a.num_coords));
  }
  const int n = boxes.shape[1];
  if (NumElements(scores.shape) != n || scores.shape.empty() || scores.shape.back() != 1) {
    return absl::InvalidArgumentError(fmt::format("scores {} are not one per anchor [1, {}, 1]", ShapeToString(scores.shape), n));
  }
  if (anchors.shape != Shape{n, 4}) {
    return absl::InvalidArgumentError(fmt::format("anchors {} are not [{}, 4]", ShapeToString(anchors.shape), n));
  }
  for (const Tensor* t : {&boxes, &scores, &anchors}) {
    if (t->type != DataType::kFloat32) return absl::InvalidArgumentError(fmt::format("{} is not float32", t->name));
  }
  return n;
}

class DecodeDetectionsKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_RETURN_IF_ERROR(ExpectArity(ctx, 3, 1));
    const auto* a = FindAttributes<DecodeDetectionsAttributes>(ctx.node->attributes);
    if (a == nullptr) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    auto n = CheckDecodeInputs(ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[0])],
                               ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[1])],
                               ctx.graph->tensors[static_cast<size_t>(ctx.node->inputs[2])], a_);
    if (!n.ok()) return ctx.Error(std::string(n.status().message()));
    return ctx.ExpectOutputShape(0, {1, *n, DetectionRowSize(a_.num_keypoints)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const float* boxes = ctx.in(0).as<float>();
    const float* scores = ctx.in(1).as<float>();
    const float* anchors = ctx.in(2).as<float>();
    const int n = ctx.in(0).dim(1), d = DetectionRowSize(a_.num_keypoints);
    float* out = ctx.out(0).as<float>();
    const int ix = a_.reverse_order ? 0 : 1, iy = 1 - ix;
    for (int i = 0; i < n; ++i) {
      const float* raw = boxes + static_cast<int64_t>(i) * a_.num_coords;
      const float* anchor = anchors + static_cast<int64_t>(i) * 4;  // x_center, y_center, w, h
      float* row = out + static_cast<int64_t>(i) * d;
      const float* box = raw + a_.box_offset;
      const float xc = box[ix] / a_.x_scale * anchor[2] + anchor[0];
      const float yc = box[iy] / a_.y_scale * anchor[3] + anchor[1];
      const float ws = box[2 + ix] / a_.w_scale, hs = box[2 + iy] / a_.h_scale;
      const float w = (a_.exp_size ? std::exp(ws) : ws) * anchor[2];
      const float h = (a_.exp_size ? std::exp(hs) : hs) * anchor[3];
      row[0] = xc - w / 2;
      row[1] = yc - h / 2;
      row[2] = xc + w / 2;
      row[3] = yc + h / 2;
      for (int k = 0; k < a_.num_keypoints; ++k) {
        const float* kp = raw + a_.keypoint_offset + k * a_.values_per_keypoint;
        row[4 + 2 * k] = kp[ix] / a_.x_scale * anchor[2] + anchor[0];
        row[5 + 2 * k] = kp[iy] / a_.y_scale * anchor[3] + anchor[1];
      }
      float score = scores[i];
      if (a_.score_clip > 0) score = std::clamp(score, -a_.score_clip, a_.score_clip);
      row[d - 1] = a_.sigmoid ? 1.0f / (1.0f + std::exp(-score)) : score;
    }
    return absl::OkStatus();
  }

 private:
  DecodeDetectionsAttributes a_;
};

// MediaPipe's OverlapSimilarity, INTERSECTION_OVER_UNION, of boxes
// (xmin, ymin, xmax, ymax).
float IntersectionOverUnion(const float* a, const float* b) {
  const bool empty = a[0] > a[2] || a[1] > a[3] || b[0] > b[2] || b[1] > b[3];
  if (empty || b[2] < a[0] || a[2] < b[0] || b[3] < a[1] || a[3] < b[1]) return 0.0f;
  const float inter = (std::min(a[2], b[2]) - std::max(a[0], b[0])) * (std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const float norm = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return norm > 0.0f ? inter / norm : 0.0f;
}

absl::Status CheckNmsInputs(const Graph& graph, const Node& node, int* rows, int* row_size) {
  if (node.inputs.empty() || node.inputs.size() > 2 || node.outputs.size() != 1) {
    return absl::InvalidArgumentError("takes detections and an optional projection matrix, and gives one output");
  }
  const Tensor& in = graph.tensors[static_cast<size_t>(node.inputs[0])];
  if (in.shape.size() != 3 || in.shape[0] != 1 || in.shape[2] < 5 || (in.shape[2] - 5) % 2 != 0 ||
      in.type != DataType::kFloat32) {
    return absl::InvalidArgumentError(fmt::format("detections {} are not [1, N, 5 + 2 * keypoints] float32",
                                                  ShapeToString(in.shape)));
  }
  if (node.inputs.size() == 2 && node.inputs[1] != kNoTensor) {
    const Tensor& m = graph.tensors[static_cast<size_t>(node.inputs[1])];
    if (m.type != DataType::kFloat32 || NumElements(m.shape) != 16) {
      return absl::InvalidArgumentError(fmt::format("projection {} is not 16 float32 values", ShapeToString(m.shape)));
    }
  }
  *rows = in.shape[1];
  *row_size = in.shape[2];
  return absl::OkStatus();
}

class NonMaxSuppressionKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const auto* a = FindAttributes<NonMaxSuppressionAttributes>(ctx.node->attributes);
    if (a == nullptr) return ctx.Error("custom_options were not decoded");
    a_ = *a;
    int rows = 0;
    if (absl::Status s = CheckNmsInputs(*ctx.graph, *ctx.node, &rows, &d_); !s.ok()) return ctx.Error(std::string(s.message()));
    return ctx.ExpectOutputShape(0, {1, a_.max_detections, d_});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& in = ctx.in(0);
    const float* rows = in.as<float>();
    const int n = in.dim(1), score = d_ - 1;
    std::vector<int> remaining;
    for (int i = 0; i < n; ++i) {
      if (rows[static_cast<int64_t>(i) * d_ + score] >= a_.min_score) remaining.push_back(i);
    }
    // By score, descending; the lower index first among equals.
    std::stable_sort(remaining.begin(), remaining.end(), [&](int x, int y) {
      return rows[static_cast<int64_t>(x) * d_ + score] > rows[static_cast<int64_t>(y) * d_ + score];
    });
    float* out = ctx.out(0).as<float>();
    std::fill(out, out + static_cast<int64_t>(a_.max_detections) * d_, 0.0f);
    for (int r = 0; r < a_.max_detections; ++r) out[static_cast<int64_t>(r) * d_ + score] = -1.0f;
    const float* m = ctx.has_input(1) ? ctx.in(1).as<float>() : nullptr;
    int written = 0;
    while (!remaining.empty() && written < a_.max_detections) {
      const float* best = rows + static_cast<int64_t>(remaining[0]) * d_;
      std::vector<int> kept;
      float total = 0.0f;
      int suppressed = 0;
      std::vector<float> weighted(static_cast<size_t>(score), 0.0f);
      for (int i : remaining) {
        const float* row = rows + static_cast<int64_t>(i) * d_;
        if (IntersectionOverUnion(row, best) > a_.iou_threshold) {
          const float w = row[score];
          total += w;
          for (int c = 0; c < score; ++c) weighted[static_cast<size_t>(c)] += row[c] * w;
          ++suppressed;
        } else {
          kept.push_back(i);
        }
      }
      float* o = out + static_cast<int64_t>(written++) * d_;
      for (int c = 0; c < score; ++c) o[c] = suppressed > 0 ? weighted[static_cast<size_t>(c)] / total : best[c];
      o[score] = best[score];
      if (m != nullptr) Project(m, o, score);
      if (suppressed == 0) break;  // MediaPipe stops when nothing was suppressed
      remaining = std::move(kept);
    }
    return absl::OkStatus();
  }

  // DetectionProjection: keypoints through the matrix, the box as the
  // bounding box of its projected corners.
  static void Project(const float* m, float* row, int coords) {
    auto px = [&](float x, float y) { return m[0] * x + m[1] * y + m[3]; };
    auto py = [&](float x, float y) { return m[4] * x + m[5] * y + m[7]; };
    const float xs[4] = {row[0], row[2], row[0], row[2]}, ys[4] = {row[1], row[1], row[3], row[3]};
    float lo_x = px(xs[0], ys[0]), hi_x = lo_x, lo_y = py(xs[0], ys[0]), hi_y = lo_y;
    for (int k = 1; k < 4; ++k) {
      lo_x = std::min(lo_x, px(xs[k], ys[k]));
      hi_x = std::max(hi_x, px(xs[k], ys[k]));
      lo_y = std::min(lo_y, py(xs[k], ys[k]));
      hi_y = std::max(hi_y, py(xs[k], ys[k]));
    }
    row[0] = lo_x;
    row[1] = lo_y;
    row[2] = hi_x;
    row[3] = hi_y;
    for (int c = 4; c + 1 < coords; c += 2) {
      const float x = row[c], y = row[c + 1];
      row[c] = px(x, y);
      row[c + 1] = py(x, y);
    }
  }

 private:
  NonMaxSuppressionAttributes a_;
  int d_ = 0;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

const char kLane[] = "xyzw";

// One invocation per anchor, in 64-wide workgroups, writing its whole row.
absl::StatusOr<GeneratedShader> DecodeDetectionsShader(const NodeContext& ctx) {
  const auto* a = FindAttributes<DecodeDetectionsAttributes>(ctx.node->attributes);
  if (a == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  if (ctx.node->inputs.size() != 3) return absl::UnimplementedError("needs regressors, scores and anchors");
  auto n = CheckDecodeInputs(ctx.input(0), ctx.input(1), ctx.input(2), *a);
  if (!n.ok()) return absl::UnimplementedError(n.status().message());
  const int d = DetectionRowSize(a->num_keypoints);
  const layout::Bhwc out{1, 1, *n, d}, boxes{1, 1, *n, a->num_coords}, scores{1, 1, *n, 1}, anchors{*n, 1, 1, 4};
  GeneratedShader g = StartShader(ctx, out, {0, 1, 2});
  g.linkable = false;
  g.code.workgroup = {64, 1, 1};
  g.groups = {static_cast<uint32_t>((*n + 63) / 64), 1, 1};
  ShaderParams& params = g.code.params;
  std::string body = fmt::format("  int i = int(gl_GlobalInvocationID.x);\n  if (i >= {}) return;\n", params.Int("anchors", *n));
  for (int s = 0; s < boxes.slices(); ++s) {
    body += fmt::format("  highp vec4 raw{} = {};\n", s, glsl::Read(params, "in0", boxes, "0", std::to_string(s), "0", "i"));
  }
  body += fmt::format("  highp vec4 anchor = {};\n", glsl::Read(params, "in2", anchors, "i", "0", "0", "0"));
  body += fmt::format("  highp float score = {}.x;\n", glsl::Read(params, "in1", scores, "0", "0", "0", "i"));
  auto raw = [](int j) { return fmt::format("raw{}.{}", j / 4, kLane[j % 4]); };
  const int ix = a->reverse_order ? 0 : 1, iy = 1 - ix, b = a->box_offset;
  auto size = [&](int j, float scale, const char* anchor_size) {
    const std::string v = fmt::format("{} / {}", raw(j), glsl::Float(scale));
    return fmt::format("{} * anchor.{}", a->exp_size ? "exp(" + v + ")" : "(" + v + ")", anchor_size);
  };
  body += fmt::format(
      "  highp float xc = {} / {} * anchor.z + anchor.x, yc = {} / {} * anchor.w + anchor.y;\n"
      "  highp float w = {}, h = {};\n",
      raw(b + ix), glsl::Float(a->x_scale), raw(b + iy), glsl::Float(a->y_scale), size(b + 2 + ix, a->w_scale, "z"),
      size(b + 2 + iy, a->h_scale, "w"));
  std::vector<std::string> row = {"xc - w / 2.0", "yc - h / 2.0", "xc + w / 2.0", "yc + h / 2.0"};
  for (int k = 0; k < a->num_keypoints; ++k) {
    const int o = a->keypoint_offset + k * a->values_per_keypoint;
    row.push_back(fmt::format("{} / {} * anchor.z + anchor.x", raw(o + ix), glsl::Float(a->x_scale)));
    row.push_back(fmt::format("{} / {} * anchor.w + anchor.y", raw(o + iy), glsl::Float(a->y_scale)));
  }
  if (a->score_clip > 0) {
    body += fmt::format("  score = clamp(score, {}, {});\n", glsl::Float(-a->score_clip), glsl::Float(a->score_clip));
  }
  row.push_back(a->sigmoid ? "1.0 / (1.0 + exp(-score))" : "score");
  while (row.size() % 4 != 0) row.push_back("0.0");
  for (size_t s = 0; s < row.size() / 4; ++s) {
    body += fmt::format("  out0_set({}, vec4({}, {}, {}, {}));\n",
                        glsl::Index(params, "out0", out, "0", std::to_string(s), "0", "i"), row[4 * s], row[4 * s + 1],
                        row[4 * s + 2], row[4 * s + 3]);
  }
  g.code.body = body;
  return g;
}

// One workgroup: each round, the best remaining candidate (a reduction
// over the invocations, each holding its share of the candidates), then
// the candidates it suppresses, summed by score (reductions again), and
// invocation 0 writes the row.
absl::StatusOr<GeneratedShader> NonMaxSuppressionShader(const NodeContext& ctx) {
  const auto* a = FindAttributes<NonMaxSuppressionAttributes>(ctx.node->attributes);
  if (a == nullptr) return absl::UnimplementedError("the op's kernel is the program's own");
  int n = 0, d = 0;
  if (absl::Status s = CheckNmsInputs(*ctx.graph, *ctx.node, &n, &d); !s.ok()) return absl::UnimplementedError(s.message());
  if (!ctx.workgroup_reduction) return absl::UnimplementedError("needs a workgroup of its own");
  constexpr int kThreads = 128;  // GLES 3.1's least maximum
  // The reduction's shared memory, within the 16 KiB every GLES 3.1 GPU has.
  if (kThreads * (d + 1) * 4 + kThreads * 8 > 16384) {
    return absl::UnimplementedError(fmt::format("rows of {} values need more shared memory than a GPU must have", d));
  }
  const int per = (n + kThreads - 1) / kThreads, coords = d - 1, slices = (d + 3) / 4;
  const bool project = ctx.node->inputs.size() == 2 && ctx.node->inputs[1] != kNoTensor;
  const bool project_constant = project && ctx.input(1).is_constant;
  std::vector<int> activations = {0};
  if (project && !project_constant) activations.push_back(1);
  const layout::Bhwc in{1, 1, n, d}, out{1, 1, a->max_detections, d}, matrix{1, 1, 4, 4};
  GeneratedShader g = StartShader(ctx, out, activations);
  g.linkable = false;
  g.code.workgroup = {kThreads, 1, 1};
  g.groups = {1, 1, 1};
  ShaderParams& params = g.code.params;
  auto read = [&](const std::string& row, const std::string& slice) {
    return glsl::Read(params, "in0", in, "0", slice, "0", row);
  };
  const std::string score_slice = std::to_string(coords / 4), score_lane(1, kLane[coords % 4]);
  std::string rows;
  if (!project) {
    rows = "";
  } else if (project_constant) {
    const float* m = reinterpret_cast<const float*>(ctx.input(1).data.data());
    rows = fmt::format("    highp vec4 row0 = vec4({}, {}, 0.0, {}), row1 = vec4({}, {}, 0.0, {});\n", glsl::Float(m[0]),
                       glsl::Float(m[1]), glsl::Float(m[3]), glsl::Float(m[4]), glsl::Float(m[5]), glsl::Float(m[7]));
  } else {
    rows = fmt::format("    highp vec4 row0 = {}, row1 = {};\n", glsl::Read(params, "in1", matrix, "0", "0", "0", "0"),
                       glsl::Read(params, "in1", matrix, "0", "0", "0", "1"));
  }
  const std::string projection =
      !project ? ""
               : rows + fmt::format(
                            "    highp float cx[4] = float[](v[0], v[2], v[0], v[2]), cy[4] = float[](v[1], v[1], v[3], v[3]);\n"
                            "    highp vec2 lo = vec2(3.402823466e+38), hi = vec2(-3.402823466e+38);\n"
                            "    MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
                            "      highp vec2 p = vec2(dot(row0.xyw, vec3(cx[k], cy[k], 1.0)), dot(row1.xyw, vec3(cx[k], cy[k], 1.0)));\n"
                            "      lo = min(lo, p);\n"
                            "      hi = max(hi, p);\n"
                            "    }}\n"
                            "    v[0] = lo.x; v[1] = lo.y; v[2] = hi.x; v[3] = hi.y;\n"
                            "    MGD_LOOP for (int c = 4; c + 1 < {coords}; c += 2) {{\n"
                            "      highp vec3 p = vec3(v[c], v[c + 1], 1.0);\n"
                            "      v[c] = dot(row0.xyw, p);\n"
                            "      v[c + 1] = dot(row1.xyw, p);\n"
                            "    }}\n",
                            fmt::arg("coords", coords));
  g.code.shared = fmt::format(
      "shared highp float best_score[{T}];\n"
      "shared int best_index[{T}];\n"
      "shared highp float partial[{T} * {V}];\n",
      fmt::arg("T", kThreads), fmt::arg("V", coords + 2));
  // The sums of the coordinates, the total score and the count of the
  // suppressed candidates: all reduced together through `partial` (one
  // tree of barriers for the lot: each barrier costs about a microsecond).
  g.code.body = fmt::format(
      "  int t = int(gl_LocalInvocationID.x);\n"
      // Each invocation's candidates stay in registers: one round of loads.
      "  bool alive[{per}];\n"
      "  highp float cscore[{per}];\n"
      "  highp vec4 cbox[{per}];\n"
      "  MGD_LOOP for (int k = 0; k < {per}; ++k) {{\n"
      "    int i = t + k * {T};\n"
      "    alive[k] = false;\n"
      "    if (i >= {N}) continue;\n"
      "    cscore[k] = {score_of_i};\n"
      "    cbox[k] = {box_of_i};\n"
      "    alive[k] = cscore[k] >= {min_score};\n"
      "  }}\n"
      "  int count = 0;\n"
      "  MGD_LOOP for (int r = 0; r < {M}; ++r) {{\n"
      "    highp float bs = 0.0;\n"
      "    int bi = -1;\n"
      "    MGD_LOOP for (int k = 0; k < {per}; ++k) {{\n"
      "      if (!alive[k]) continue;\n"
      "      int i = t + k * {T};\n"
      "      highp float sc = cscore[k];\n"
      "      if (bi < 0 || sc > bs) {{ bs = sc; bi = i; }}\n"
      "    }}\n"
      "    best_score[t] = bs;\n"
      "    best_index[t] = bi;\n"
      "    memoryBarrierShared(); barrier();\n"
      "    MGD_LOOP for (int k = {T} / 2; k > 0; k /= 2) {{\n"
      "      if (t < k) {{\n"
      "        int oi = best_index[t + k], mi = best_index[t];\n"
      "        highp float os = best_score[t + k], ms = best_score[t];\n"
      "        if (oi >= 0 && (mi < 0 || os > ms || (os == ms && oi < mi))) {{\n"
      "          best_index[t] = oi;\n"
      "          best_score[t] = os;\n"
      "        }}\n"
      "      }}\n"
      "      memoryBarrierShared(); barrier();\n"
      "    }}\n"
      "    int best = best_index[0];\n"
      "    highp float top = best_score[0];\n"
      "    memoryBarrierShared(); barrier();\n"
      "    if (best < 0) break;\n"
      "    highp vec4 bb = {box_of_best};\n"
      "    highp float sums[{C}];\n"
      "    MGD_LOOP for (int c = 0; c < {C}; ++c) sums[c] = 0.0;\n"
      "    highp float total = 0.0, suppressed = 0.0;\n"
      "    MGD_LOOP for (int k = 0; k < {per}; ++k) {{\n"
      "      if (!alive[k]) continue;\n"
      "      int i = t + k * {T};\n"
      "      highp vec4 ib = cbox[k];\n"
      "      highp float iou = 0.0;\n"
      "      bool empty = ib.x > ib.z || ib.y > ib.w || bb.x > bb.z || bb.y > bb.w;\n"
      "      if (!empty && !(bb.z < ib.x || ib.z < bb.x || bb.w < ib.y || ib.w < bb.y)) {{\n"
      "        highp float inter = (min(ib.z, bb.z) - max(ib.x, bb.x)) * (min(ib.w, bb.w) - max(ib.y, bb.y));\n"
      "        highp float norm = (ib.z - ib.x) * (ib.w - ib.y) + (bb.z - bb.x) * (bb.w - bb.y) - inter;\n"
      "        iou = norm > 0.0 ? inter / norm : 0.0;\n"
      "      }}\n"
      "      if (!(iou > {iou})) continue;\n"
      "      alive[k] = false;\n"
      "      highp float w = cscore[k];\n"
      "      total += w;\n"
      "      suppressed += 1.0;\n"
      "      MGD_LOOP for (int js = 0; js < {S}; ++js) {{\n"
      "        highp vec4 v = {slice_of_i};\n"
      "        MGD_LOOP for (int l = 0; l < 4; ++l) if (js * 4 + l < {C}) sums[js * 4 + l] += v[l] * w;\n"
      "      }}\n"
      "    }}\n"
      "    highp float v[{S4}];\n"
      "    MGD_LOOP for (int c = 0; c < {C}; ++c) partial[t * {V} + c] = sums[c];\n"
      "    partial[t * {V} + {C}] = total;\n"
      "    partial[t * {V} + {C} + 1] = suppressed;\n"
      "    memoryBarrierShared(); barrier();\n"
      "    MGD_LOOP for (int k = {T} / 2; k > 0; k /= 2) {{\n"
      "      if (t < k) {{\n"
      "        MGD_LOOP for (int c = 0; c < {V}; ++c) partial[t * {V} + c] += partial[(t + k) * {V} + c];\n"
      "      }}\n"
      "      memoryBarrierShared(); barrier();\n"
      "    }}\n"
      "    MGD_LOOP for (int c = 0; c < {C}; ++c) v[c] = partial[c];\n"
      "    total = partial[{C}];\n"
      "    suppressed = partial[{C} + 1];\n"
      "    memoryBarrierShared(); barrier();\n"
      "    count = r + 1;\n"
      "    if (t == 0) {{\n"
      "      MGD_LOOP for (int js = 0; js < {S}; ++js) {{\n"
      "        highp vec4 b = {slice_of_best};\n"
      "        MGD_LOOP for (int l = 0; l < 4; ++l) {{\n"
      "          int c = js * 4 + l;\n"
      "          if (c < {C}) v[c] = suppressed > 0.0 ? v[c] / total : b[l];\n"
      "        }}\n"
      "      }}\n"
      "{projection}"
      "      v[{C}] = top;\n"
      "      MGD_LOOP for (int c = {C} + 1; c < {S4}; ++c) v[c] = 0.0;\n"
      "      MGD_LOOP for (int js = 0; js < {S}; ++js) {{\n"
      "        out0_set({out_r}, vec4(v[js * 4], v[js * 4 + 1], v[js * 4 + 2], v[js * 4 + 3]));\n"
      "      }}\n"
      "    }}\n"
      "    if (suppressed == 0.0) break;\n"
      "  }}\n"
      "  MGD_LOOP for (int r = count + t; r < {M}; r += {T}) {{\n"
      "    MGD_LOOP for (int js = 0; js < {S}; ++js) {{\n"
      "      vec4 e = vec4(0.0);\n"
      "      if (js == {score_slice}) e.{score_lane} = -1.0;\n"
      "      out0_set({out_r}, e);\n"
      "    }}\n"
      "  }}\n",
      fmt::arg("per", per), fmt::arg("T", kThreads), fmt::arg("N", params.Int("candidates", n)),
      fmt::arg("M", params.Int("max_detections", a->max_detections)), fmt::arg("C", coords), fmt::arg("S", slices),
      fmt::arg("S4", slices * 4), fmt::arg("V", coords + 2), fmt::arg("min_score", params.Float("min_score", a->min_score)),
      fmt::arg("iou", params.Float("iou_threshold", a->iou_threshold)),
      fmt::arg("score_of_i", read("i", score_slice) + "." + score_lane), fmt::arg("box_of_best", read("best", "0")),
      fmt::arg("box_of_i", read("i", "0")), fmt::arg("slice_of_i", read("i", "js")),
      fmt::arg("slice_of_best", read("best", "js")), fmt::arg("projection", projection),
      fmt::arg("out_r", glsl::Index(params, "out0", out, "0", "js", "0", "r")), fmt::arg("score_slice", score_slice),
      fmt::arg("score_lane", score_lane));
  return g;
}

}  // namespace

std::vector<OpDefinition> DetectionOps() {
  return {{.op = OpKind::kCustom,
           .custom_name = kDecodeDetectionsOp,
           .decode_custom = DecodeDecodeOptions,
           .cpu_kernel = MakeKernel<DecodeDetectionsKernel>,
           .gpu = {DecodeDetectionsShader}},
          {.op = OpKind::kCustom,
           .custom_name = kNonMaxSuppressionOp,
           .decode_custom = DecodeNmsOptions,
           .cpu_kernel = MakeKernel<NonMaxSuppressionKernel>,
           .gpu = {NonMaxSuppressionShader}}};
}

}  // namespace mgd::ops
