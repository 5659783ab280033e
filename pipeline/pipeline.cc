#include "pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>

#include "model/reader.h"
#include "model/status_macros.h"
#include "ops/transform/transform.h"
#include "pipeline/geometry.h"

namespace mgd::pipeline {
namespace {

int AddTensor(Graph& g, std::string name, Shape shape, DataType type = DataType::kFloat32) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = type;
  g.tensors.push_back(std::move(t));
  return static_cast<int>(g.tensors.size()) - 1;
}

int AddConstant(Graph& g, std::string name, Shape shape, const float* values) {
  const int t = AddTensor(g, std::move(name), std::move(shape));
  Tensor& tensor = g.tensors[static_cast<size_t>(t)];
  const size_t bytes = static_cast<size_t>(NumElements(tensor.shape)) * 4;
  std::vector<uint8_t> data(bytes);
  std::memcpy(data.data(), values, bytes);
  tensor.data = std::move(data);
  tensor.is_constant = true;
  return t;
}

Node CustomNode(const char* name, std::vector<uint8_t> options, std::vector<int> inputs, std::vector<int> outputs) {
  Node n;
  n.op = OpKind::kCustom;
  n.attributes = CustomAttributes{name, std::move(options), nullptr};
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// `model` with the app's image as its input: a uint8 [1, height, width,
// channels] graph input, sampled by MgdImageToTensor through matrix tensor
// `crop` (made by `make_crop` once the image tensor exists) into the
// model's own input, which must be [1, tensor_height, tensor_width, 3].
struct Fed {
  Graph graph;
  int image = -1, crop = -1;
};
absl::StatusOr<Fed> FedFromImage(const Graph& model, const char* what, int tensor_width, int tensor_height,
                                 float range_min, float range_max, int width, int height, int channels,
                                 const std::function<int(Graph&)>& make_crop) {
  Fed fed{model, -1, -1};
  Graph& g = fed.graph;
  if (g.inputs.size() != 1) return absl::InvalidArgumentError(fmt::format("the {} has {} inputs, not one", what, g.inputs.size()));
  const int input = g.inputs[0];
  const Shape expected_input{1, tensor_height, tensor_width, 3};
  if (g.tensors[static_cast<size_t>(input)].shape != expected_input) {
    return absl::InvalidArgumentError(fmt::format("the {}'s input is {}, not {}", what,
                                                  ShapeToString(g.tensors[static_cast<size_t>(input)].shape),
                                                  ShapeToString(expected_input)));
  }
  fed.image = AddTensor(g, "image", {1, height, width, channels}, DataType::kUInt8);
  fed.crop = make_crop(g);
  ops::ImageToTensorAttributes to_tensor{tensor_height, tensor_width, 3, range_min, range_max};
  g.nodes.insert(g.nodes.begin(), CustomNode(ops::kImageToTensorOp, ops::EncodeOptions(to_tensor), {fed.image, fed.crop}, {input}));
  return fed;
}

}  // namespace

absl::StatusOr<Graph> DetectorGraph(const Graph& model, const DetectorSpec& spec, const std::vector<float>& anchors,
                                    int width, int height, int channels) {
  const Roi roi = Letterboxed(WholeImage(width, height), spec.tensor_width, spec.tensor_height);
  const Matrix4 crop = CropMatrix(roi, spec.tensor_width, spec.tensor_height);
  const Matrix4 projection = ProjectionMatrix(roi);
  MGD_ASSIGN_OR_RETURN(Fed fed, FedFromImage(model, "detector", spec.tensor_width, spec.tensor_height, spec.range_min,
                                             spec.range_max, width, height, channels, [&](Graph& g) {
                                               return AddConstant(g, "crop_matrix", {1, 1, 4, 4}, crop.data());
                                             }));
  Graph& g = fed.graph;
  const int n = static_cast<int>(anchors.size() / 4);
  int boxes = -1, scores = -1;
  for (int t : g.outputs) {
    const Shape& s = g.tensors[static_cast<size_t>(t)].shape;
    if (s == Shape{1, n, spec.decode.num_coords}) boxes = t;
    if (s == Shape{1, n, 1}) scores = t;
  }
  if (boxes < 0 || scores < 0) {
    return absl::InvalidArgumentError(fmt::format("the detector has no outputs [1, {0}, {1}] and [1, {0}, 1] for {0} anchors",
                                                  n, spec.decode.num_coords));
  }
  const int anchors_t = AddConstant(g, "anchors", {n, 4}, anchors.data());
  const int row = ops::DetectionRowSize(spec.decode.num_keypoints);
  const int decoded = AddTensor(g, "decoded_detections", {1, n, row});
  g.nodes.push_back(CustomNode(ops::kDecodeDetectionsOp, ops::EncodeOptions(spec.decode), {boxes, scores, anchors_t}, {decoded}));
  const int projection_t = AddConstant(g, "projection_matrix", {1, 1, 4, 4}, projection.data());
  const int detections = AddTensor(g, "detections", {1, spec.suppression.max_detections, row});
  g.nodes.push_back(
      CustomNode(ops::kNonMaxSuppressionOp, ops::EncodeOptions(spec.suppression), {decoded, projection_t}, {detections}));
  g.inputs = {fed.image};
  g.outputs = {detections};
  return std::move(g);
}

absl::StatusOr<Graph> LandmarkGraph(const Graph& model, const LandmarkSpec& spec, int width, int height, int channels) {
  MGD_ASSIGN_OR_RETURN(Fed fed, FedFromImage(model, "landmark model", spec.tensor_width, spec.tensor_height, spec.range_min,
                                             spec.range_max, width, height, channels,
                                             [](Graph& g) { return AddTensor(g, "crop_matrix", {1, 1, 4, 4}); }));
  Graph& g = fed.graph;
  auto output = [&](const std::string& name) -> absl::StatusOr<int> {
    for (int t : g.outputs) {
      if (g.tensors[static_cast<size_t>(t)].name == name) return t;
    }
    return absl::InvalidArgumentError(fmt::format("the landmark model has no output '{}'", name));
  };
  const int projection = AddTensor(g, "projection_matrix", {1, 4, 4});
  std::vector<int> outputs;
  // MediaPipe's TransformLandmarks (v1: landmarks along the last axis).
  auto project = [&](const std::string& name, int dimensions) -> absl::Status {
    MGD_ASSIGN_OR_RETURN(const int t, output(name));
    const Shape shape = g.tensors[static_cast<size_t>(t)].shape;
    if (shape.empty() || shape.back() % dimensions != 0) {
      return absl::InvalidArgumentError(fmt::format("output '{}' {} is not landmarks of {}", name, ShapeToString(shape), dimensions));
    }
    const int projected = AddTensor(g, name + "_in_image", shape);
    g.nodes.push_back(CustomNode(ops::kTransformLandmarksOp, ops::EncodeTransformLandmarksOptions(dimensions, 1.0f),
                                 {t, projection}, {projected}));
    outputs.push_back(projected);
    return absl::OkStatus();
  };
  if (absl::Status s = project(spec.mesh_output, 3); !s.ok()) return s;
  for (const std::string& name : spec.extra_xy_outputs) {
    if (absl::Status s = project(name, 2); !s.ok()) return s;
  }
  MGD_ASSIGN_OR_RETURN(const int presence, output(spec.presence_output));
  outputs.push_back(presence);
  g.inputs = {fed.image, fed.crop, projection};
  g.outputs = outputs;
  return std::move(g);
}

absl::StatusOr<std::unique_ptr<Pipeline>> Pipeline::Create(const std::string& solution, PipelineOptions options) {
  MGD_ASSIGN_OR_RETURN(SolutionSpec spec, FindSolution(solution));
  const std::string dir = options.models_dir.empty() ? std::string(".") : options.models_dir;
  std::unique_ptr<Pipeline> p(new Pipeline(std::move(spec), std::move(options)));
  MGD_ASSIGN_OR_RETURN(p->detector_model_, ReadModelFile(dir + "/" + p->spec_.detector.model_file));
  MGD_ASSIGN_OR_RETURN(p->anchors_, GenerateAnchors(p->spec_.detector.anchors));
  if (p->spec_.landmarks) {
    MGD_ASSIGN_OR_RETURN(p->landmark_model_, ReadModelFile(dir + "/" + p->spec_.landmarks->model_file));
  }
  return p;
}

absl::StatusOr<Interpreter*> Pipeline::Make(std::map<Key, std::unique_ptr<Interpreter>>& cache, const Image& image,
                                            bool landmarks) {
  const Key key{image.width, image.height, image.channels};
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  absl::StatusOr<Graph> graph =
      landmarks ? LandmarkGraph(landmark_model_, *spec_.landmarks, image.width, image.height, image.channels)
                : DetectorGraph(detector_model_, spec_.detector, anchors_, image.width, image.height, image.channels);
  if (!graph.ok()) return graph.status();
  InterpreterOptions options;
  options.delegates = options_.delegates;
  options.logger = options_.logger;
  options.measure_timing = options_.measure_timing;
  MGD_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interpreter, Interpreter::Create(std::move(*graph), std::move(options)));
  Interpreter* raw = interpreter.get();
  cache[key] = std::move(interpreter);
  return raw;
}

absl::StatusOr<std::vector<std::pair<std::string, Graph>>> Pipeline::Graphs(const Image& image) const {
  std::vector<std::pair<std::string, Graph>> graphs;
  MGD_ASSIGN_OR_RETURN(Graph detector,
                       DetectorGraph(detector_model_, spec_.detector, anchors_, image.width, image.height, image.channels));
  graphs.emplace_back("detector", std::move(detector));
  if (spec_.landmarks) {
    MGD_ASSIGN_OR_RETURN(Graph landmarks, LandmarkGraph(landmark_model_, *spec_.landmarks, image.width, image.height, image.channels));
    graphs.emplace_back("landmarks", std::move(landmarks));
  }
  return graphs;
}

absl::Status Pipeline::Invoke(Interpreter& interpreter, Result& result) {
  const auto start = std::chrono::steady_clock::now();
  InvokeTiming timing;
  InvokeOptions invoke;
  invoke.timing = &timing;
  if (absl::Status s = interpreter.Invoke(invoke); !s.ok()) return s;
  result.invoke_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (timing.device_ms) result.gpu_ms = result.gpu_ms.value_or(0.0) + *timing.device_ms;
  ++result.submissions;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Detection>> Pipeline::Detect(const Image& image, Result& result) {
  MGD_ASSIGN_OR_RETURN(current_, Make(detectors_, image, false));
  std::memcpy(current_->input(0).data, image.pixels.data(), image.pixels.size());
  if (absl::Status s = Invoke(*current_, result); !s.ok()) return s;
  result.detector_ran = true;
  const TensorRef& out = current_->output(0);
  const int rows = out.dim(1), d = out.dim(2);
  const float* v = out.as<float>();
  std::vector<Detection> detections;
  for (int r = 0; r < rows; ++r) {
    const float* row = v + static_cast<int64_t>(r) * d;
    // Rows come by score, descending; unused ones score -1.
    if (!(row[d - 1] >= spec_.detector.suppression.min_score)) break;
    Detection det;
    det.score = row[d - 1];
    det.box = {row[0], row[1], row[2] - row[0], row[3] - row[1]};
    for (int c = 4; c + 1 < d - 1; c += 2) det.keypoints.push_back({row[c], row[c + 1]});
    detections.push_back(std::move(det));
  }
  return detections;
}

absl::StatusOr<std::optional<Detection>> Pipeline::Landmarks(const Image& image, const Roi& roi, Result& result) {
  const LandmarkSpec& spec = *spec_.landmarks;
  MGD_ASSIGN_OR_RETURN(current_landmarks_, Make(landmarkers_, image, true));
  Interpreter& in = *current_landmarks_;
  const Matrix4 crop = CropMatrix(roi, spec.tensor_width, spec.tensor_height);
  // Tensor pixels (0..size) to image pixels: the projection of 0..1 over the crop.
  Matrix4 projection = ProjectionMatrix(roi);
  for (int row : {0, 4}) {
    projection[static_cast<size_t>(row)] /= static_cast<float>(spec.tensor_width);
    projection[static_cast<size_t>(row + 1)] /= static_cast<float>(spec.tensor_height);
  }
  std::memcpy(in.input(0).data, image.pixels.data(), image.pixels.size());
  std::memcpy(in.input(1).data, crop.data(), sizeof(crop));
  std::memcpy(in.input(2).data, projection.data(), sizeof(projection));
  if (absl::Status s = Invoke(in, result); !s.ok()) return s;
  const size_t outputs = in.num_outputs();
  const float logit = in.output(outputs - 1).as<float>()[0];
  const float presence = 1.0f / (1.0f + std::exp(-logit));
  if (!(presence >= spec.min_presence)) return std::optional<Detection>();
  Detection d;
  d.score = presence;
  // z at the image's scale, as MediaPipe's LandmarkProjection gives it.
  const float z_scale = roi.width / static_cast<float>(spec.tensor_width);
  const TensorRef& mesh = in.output(0);
  for (int64_t i = 0; i + 2 < mesh.elements(); i += 3) {
    const float* p = mesh.as<float>() + i;
    d.landmarks.push_back({p[0], p[1], p[2] * z_scale});
  }
  for (size_t k = 1; k + 1 < outputs; ++k) {
    const TensorRef& extra = in.output(k);
    for (int64_t i = 0; i + 1 < extra.elements(); i += 2) d.landmarks.push_back({extra.as<float>()[i], extra.as<float>()[i + 1], 0.0f});
  }
  float lo_x = d.landmarks[0][0], hi_x = lo_x, lo_y = d.landmarks[0][1], hi_y = lo_y;
  for (const auto& p : d.landmarks) {
    lo_x = std::min(lo_x, p[0]), hi_x = std::max(hi_x, p[0]), lo_y = std::min(lo_y, p[1]), hi_y = std::max(hi_y, p[1]);
  }
  d.box = {lo_x, lo_y, hi_x - lo_x, hi_y - lo_y};
  return std::optional<Detection>(std::move(d));
}

absl::StatusOr<Result> Pipeline::Process(const Image& image) {
  if (image.channels != 3 && image.channels != 4) {
    return absl::InvalidArgumentError(fmt::format("the image has {} channels (3 or 4)", image.channels));
  }
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * image.channels) {
    return absl::InvalidArgumentError(fmt::format("the image holds {} bytes, not {}x{}x{}", image.pixels.size(), image.width,
                                                  image.height, image.channels));
  }
  Result result;
  if (!spec_.landmarks) {
    MGD_ASSIGN_OR_RETURN(result.detections, Detect(image, result));
    return result;
  }
  const LandmarkSpec& spec = *spec_.landmarks;
  const Key size{image.width, image.height, image.channels};
  if (size != tracked_size_) tracked_.reset();
  tracked_size_ = size;
  // A tracked crop first; the detector when there is none or it lost the face.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<Detection> face_detection;
    Roi roi;
    if (tracked_) {
      roi = *tracked_;
    } else {
      MGD_ASSIGN_OR_RETURN(std::vector<Detection> faces, Detect(image, result));
      if (faces.empty()) return result;
      face_detection = faces[0];
      roi = RoiFromDetection(faces[0].box, faces[0].keypoints.at(static_cast<size_t>(spec.detection_start)),
                             faces[0].keypoints.at(static_cast<size_t>(spec.detection_end)), spec.target_degrees, spec.scale,
                             spec.square_long);
    }
    MGD_ASSIGN_OR_RETURN(std::optional<Detection> face, Landmarks(image, roi, result));
    if (!face) {
      const bool retry = tracked_.has_value();
      tracked_.reset();
      if (retry) continue;
      return result;
    }
    const size_t start = static_cast<size_t>(spec.landmark_start), end = static_cast<size_t>(spec.landmark_end);
    if (end < face->landmarks.size() && start < face->landmarks.size()) {
      tracked_ = RoiFromDetection(face->box, {face->landmarks[start][0], face->landmarks[start][1]},
                                  {face->landmarks[end][0], face->landmarks[end][1]}, spec.target_degrees, spec.scale,
                                  spec.square_long);
    }
    if (face_detection) face->keypoints = face_detection->keypoints;
    result.detections.push_back(std::move(*face));
    return result;
  }
  return result;
}

}  // namespace mgd::pipeline
