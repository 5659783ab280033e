#include "pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "model/reader.h"
#include "model/status_macros.h"

namespace mgd::pipeline {
namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// The bounding box (x, y, width, height) of the landmarks, of the visible
// ones where the model says which are (pose predicts the legs of a
// half-length portrait below the picture).
std::array<float, 4> Bounds(const Detection& d) {
  std::vector<std::array<float, 3>> points;
  for (size_t i = 0; i < d.landmarks.size(); ++i) {
    if (i >= d.visibility.size() || d.visibility[i] >= kMinVisibility) points.push_back(d.landmarks[i]);
  }
  return BoundingBox(points.empty() ? d.landmarks : points);
}

Mask MaskFrom(const TensorRef& t) {
  Mask m;
  m.height = t.dim(1);
  m.width = t.dim(2);
  m.values.assign(t.as<float>(), t.as<float>() + t.elements());
  return m;
}

}  // namespace

MaskSummary Summarize(const Mask& mask) {
  MaskSummary s;
  if (mask.values.empty()) return s;
  double sum = 0.0;
  int64_t covered = 0;
  int lo_x = mask.width, hi_x = -1, lo_y = mask.height, hi_y = -1;
  for (int y = 0; y < mask.height; ++y)
    for (int x = 0; x < mask.width; ++x) {
      const float v = mask.values[static_cast<size_t>(y) * static_cast<size_t>(mask.width) + static_cast<size_t>(x)];
      sum += v;
      if (v >= 0.5f) {
        ++covered;
        lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x), lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
      }
    }
  const double n = static_cast<double>(mask.values.size());
  s.coverage = static_cast<float>(static_cast<double>(covered) / n);
  s.mean = static_cast<float>(sum / n);
  if (covered > 0) {
    s.box = {static_cast<float>(lo_x), static_cast<float>(lo_y), static_cast<float>(hi_x - lo_x + 1),
             static_cast<float>(hi_y - lo_y + 1)};
  }
  return s;
}

absl::StatusOr<std::unique_ptr<Pipeline>> Pipeline::Create(const std::string& solution, PipelineOptions options) {
  MGD_ASSIGN_OR_RETURN(SolutionSpec spec, FindSolution(solution));
  const std::string dir = options.models_dir.empty() ? std::string(".") : options.models_dir;
  std::unique_ptr<Pipeline> p(new Pipeline(std::move(spec), std::move(options)));
  const SolutionSpec& s = p->spec_;
  if (s.detector) {
    MGD_ASSIGN_OR_RETURN(p->detector_model_, ReadModelFile(dir + "/" + s.detector->model_file));
    MGD_ASSIGN_OR_RETURN(p->anchors_, GenerateAnchors(s.detector->anchors));
  }
  if (s.landmarks) {
    MGD_ASSIGN_OR_RETURN(p->landmark_model_, ReadModelFile(dir + "/" + s.landmarks->model_file));
    p->landmark_outputs_ = LandmarkOutputOrder(*s.landmarks);
    for (int t : p->landmark_model_.outputs) {
      const Tensor& tensor = p->landmark_model_.tensors[static_cast<size_t>(t)];
      if (tensor.name == s.landmarks->mask_output && tensor.shape.size() == 4) {
        p->landmark_mask_size_ = {tensor.shape[2], tensor.shape[1]};
      }
    }
  }
  if (s.segmenter) {
    MGD_ASSIGN_OR_RETURN(p->segmenter_model_, ReadModelFile(dir + "/" + s.segmenter->model_file));
  }
  return p;
}

absl::StatusOr<Graph> Pipeline::StageGraph(Stage stage, const Key& size, int copies) const {
  const auto [width, height, channels] = size;
  switch (stage) {
    case Stage::kDetector:
      return DetectorGraph(detector_model_, *spec_.detector, anchors_, width, height, channels);
    case Stage::kLandmarks:
      return LandmarkGraph(landmark_model_, *spec_.landmarks, width, height, channels, copies);
    case Stage::kSegmenter:
      return SegmenterGraph(segmenter_model_, *spec_.segmenter, width, height, channels);
  }
  return absl::InternalError("unknown stage");
}

absl::StatusOr<Interpreter*> Pipeline::Make(Stage stage, const Key& size, int copies) {
  const auto key = std::make_tuple(stage, size, copies);
  if (auto it = interpreters_.find(key); it != interpreters_.end()) {
    it->second.last_frame = frame_;
    return it->second.interpreter.get();
  }
  // Room first: the least recently used graph that neither this frame nor
  // interpreter() / landmark_interpreter() uses.
  while (interpreters_.size() >= kMaxPrepared) {
    auto oldest = interpreters_.end();
    for (auto it = interpreters_.begin(); it != interpreters_.end(); ++it) {
      const Interpreter* p = it->second.interpreter.get();
      if (it->second.last_frame == frame_ || p == current_ || p == current_landmarks_) continue;
      if (oldest == interpreters_.end() || it->second.last_frame < oldest->second.last_frame) oldest = it;
    }
    if (oldest == interpreters_.end()) break;
    bound_.erase(oldest->second.interpreter.get());
    interpreters_.erase(oldest);
  }
  MGD_ASSIGN_OR_RETURN(Graph graph, StageGraph(stage, size, copies));
  InterpreterOptions options;
  options.delegates = options_.delegates;
  options.logger = options_.logger;
  options.measure_timing = options_.measure_timing;
  MGD_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interpreter, Interpreter::Create(std::move(graph), std::move(options)));
  Interpreter* raw = interpreter.get();
  interpreters_[key] = {std::move(interpreter), frame_};
  return raw;
}

absl::StatusOr<std::vector<std::pair<std::string, Graph>>> Pipeline::Graphs(const Image& image) const {
  std::vector<std::pair<std::string, Graph>> graphs;
  const std::pair<bool, std::pair<Stage, const char*>> stages[] = {
      {spec_.detector.has_value(), {Stage::kDetector, "detector"}},
      {spec_.landmarks.has_value(), {Stage::kLandmarks, "landmarks"}},
      {spec_.segmenter.has_value(), {Stage::kSegmenter, "segmenter"}}};
  for (const auto& [present, stage] : stages) {
    if (!present) continue;
    MGD_ASSIGN_OR_RETURN(Graph graph, StageGraph(stage.first, Key{image.width, image.height, image.channels}));
    graphs.emplace_back(stage.second, std::move(graph));
  }
  return graphs;
}

absl::Status Pipeline::Invoke(Interpreter& interpreter, Result& result) {
  const auto start = std::chrono::steady_clock::now();
  InvokeTiming timing;
  InvokeOptions invoke;
  invoke.timing = &timing;
  MGD_RETURN_IF_ERROR(interpreter.Invoke(invoke));
  result.invoke_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (timing.device_ms) result.gpu_ms = result.gpu_ms.value_or(0.0) + *timing.device_ms;
  ++result.submissions;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Detection>> Pipeline::Detect(const Frame& frame, Result& result) {
  MGD_ASSIGN_OR_RETURN(current_, Make(Stage::kDetector, frame.size));
  MGD_RETURN_IF_ERROR(Feed(*current_, frame));
  MGD_RETURN_IF_ERROR(Invoke(*current_, result));
  result.detector_ran = true;
  const TensorRef& out = current_->output(0);
  const int rows = out.dim(1), d = out.dim(2);
  const float* v = out.as<float>();
  std::vector<Detection> detections;
  for (int r = 0; r < rows; ++r) {
    const float* row = v + static_cast<int64_t>(r) * d;
    // Rows come by score, descending; unused ones score -1.
    if (!(row[d - 1] >= spec_.detector->suppression.min_score)) break;
    Detection det;
    det.score = row[d - 1];
    det.box = {row[0], row[1], row[2] - row[0], row[3] - row[1]};
    for (int c = 4; c + 1 < d - 1; c += 2) det.keypoints.push_back({row[c], row[c + 1]});
    detections.push_back(std::move(det));
  }
  return detections;
}

absl::StatusOr<std::vector<std::optional<Detection>>> Pipeline::Landmarks(const Frame& frame, const std::vector<Roi>& rois,
                                                                           Result& result) {
  const LandmarkSpec& spec = *spec_.landmarks;
  const int copies = static_cast<int>(rois.size());
  MGD_ASSIGN_OR_RETURN(current_landmarks_, Make(Stage::kLandmarks, frame.size, copies));
  Interpreter& in = *current_landmarks_;
  MGD_RETURN_IF_ERROR(Feed(in, frame));
  const LandmarkOutputs& outputs = landmark_outputs_;
  const size_t inputs_per_copy = (in.num_inputs() - 1) / rois.size();
  for (size_t k = 0; k < rois.size(); ++k) {
    const Roi& roi = rois[k];
    const Matrix4 crop = CropMatrix(roi, spec.tensor_width, spec.tensor_height);
    // Tensor pixels (0..size) to image pixels: the projection of 0..1 over the crop.
    Matrix4 projection = ProjectionMatrix(roi);
    for (int row : {0, 4}) {
      projection[static_cast<size_t>(row)] /= static_cast<float>(spec.tensor_width);
      projection[static_cast<size_t>(row + 1)] /= static_cast<float>(spec.tensor_height);
    }
    const size_t first = 1 + k * inputs_per_copy;
    std::memcpy(in.input(first).data, crop.data(), sizeof(crop));
    std::memcpy(in.input(first + 1).data, projection.data(), sizeof(projection));
    if (inputs_per_copy > 2) {
      const Matrix4 back = InverseCropMatrix(roi, landmark_mask_size_[0], landmark_mask_size_[1]);
      std::memcpy(in.input(first + 2).data, back.data(), sizeof(back));
    }
  }
  MGD_RETURN_IF_ERROR(Invoke(in, result));
  std::vector<std::optional<Detection>> objects;
  for (size_t k = 0; k < rois.size(); ++k) {
    objects.push_back(ReadObject(in, k * static_cast<size_t>(outputs.count), rois[k], result));
  }
  return objects;
}

std::optional<Detection> Pipeline::ReadObject(const Interpreter& in, size_t first, const Roi& roi, Result& result) const {
  const LandmarkSpec& spec = *spec_.landmarks;
  const LandmarkOutputs& outputs = landmark_outputs_;
  auto out = [&](int k) -> const TensorRef& { return in.output(first + static_cast<size_t>(k)); };
  const float presence_value = out(outputs.presence).as<float>()[0];
  const float presence = spec.presence_is_logit ? Sigmoid(presence_value) : presence_value;
  if (!(presence >= spec.min_presence)) return std::nullopt;
  Detection d;
  d.score = presence;
  // z at the image's scale, as MediaPipe's LandmarkProjection gives it.
  const float z_scale = roi.width / static_cast<float>(spec.tensor_width) / spec.z_divisor;
  const TensorRef& landmarks = out(outputs.landmarks);
  const int values = spec.values_per_landmark;
  for (int64_t i = 0; i + values <= landmarks.elements(); i += values) {
    const float* p = landmarks.as<float>() + i;
    d.landmarks.push_back({p[0], p[1], p[2] * z_scale});
    if (values > 3) d.visibility.push_back(Sigmoid(p[3]));
  }
  for (size_t k = 0; k < spec.refinements.size(); ++k) {
    const LandmarkRefinement& r = spec.refinements[k];
    const TensorRef& finer = out(outputs.refinements[k]);
    for (size_t i = 0; i < r.indexes.size() && static_cast<int64_t>(2 * i + 1) < finer.elements(); ++i) {
      const auto at = static_cast<size_t>(r.indexes[i]);
      if (at >= d.landmarks.size()) d.landmarks.resize(at + 1, {0.0f, 0.0f, 0.0f});
      d.landmarks[at][0] = finer.as<float>()[2 * i];
      d.landmarks[at][1] = finer.as<float>()[2 * i + 1];
    }
    if (r.average_z.empty()) continue;
    float z = 0.0f;
    for (int a : r.average_z) z += d.landmarks.at(static_cast<size_t>(a))[2];
    z /= static_cast<float>(r.average_z.size());
    for (int at : r.indexes) d.landmarks[static_cast<size_t>(at)][2] = z;
  }
  if (outputs.handedness >= 0) {
    const float right = out(outputs.handedness).as<float>()[0];
    d.label = right >= 0.5f ? "right" : "left";
    d.label_score = std::max(right, 1.0f - right);
  }
  if (outputs.mask >= 0 && !result.mask) result.mask = MaskFrom(out(outputs.mask));
  return d;
}

absl::Status Pipeline::Track(const Frame& frame, Result& result) {
  const LandmarkSpec& spec = *spec_.landmarks;
  if (frame.size != tracked_size_) tracked_.clear();
  tracked_size_ = frame.size;
  // The crops to run: last frame's first, then the detector's for objects
  // not tracked (a detection overlapping a tracked crop is that object, as
  // MediaPipe's AssociationNormRect keeps the tracked one). The detector
  // runs when fewer objects than max_objects are tracked; a tracked object
  // lost this frame is looked for again at once.
  struct Crop {
    Roi roi;
    std::optional<Detection> detection;
  };
  std::vector<Crop> crops;
  for (const Roi& roi : tracked_) crops.push_back({roi, std::nullopt});
  tracked_.clear();
  const auto max_objects = static_cast<size_t>(spec.max_objects);
  for (int pass = 0; pass < 2; ++pass) {
    if (!result.detector_ran && crops.size() + tracked_.size() < max_objects) {
      MGD_ASSIGN_OR_RETURN(std::vector<Detection> found, Detect(frame, result));
      for (Detection& det : found) {
        if (crops.size() + tracked_.size() >= max_objects) break;
        std::vector<Point> keypoints(det.keypoints.begin(), det.keypoints.end());
        const Roi roi = RoiFromPoints(spec.from_detection, keypoints, &det.box);
        auto same = [&](const Roi& other) { return RoiOverlap(roi, other) > spec.min_new_object_overlap; };
        if (std::any_of(tracked_.begin(), tracked_.end(), same) ||
            std::any_of(crops.begin(), crops.end(), [&](const Crop& c) { return same(c.roi); })) {
          continue;
        }
        crops.push_back({roi, std::move(det)});
      }
    }
    // The crops' landmarks in one submission.
    std::vector<Roi> rois;
    for (const Crop& crop : crops) rois.push_back(crop.roi);
    std::vector<std::optional<Detection>> objects;
    if (!rois.empty()) {
      MGD_ASSIGN_OR_RETURN(objects, Landmarks(frame, rois, result));
    }
    for (size_t k = 0; k < crops.size(); ++k) {
      const Crop& crop = crops[k];
      std::optional<Detection>& object = objects[k];
      if (!object) continue;
      std::vector<Point> points;
      for (const auto& p : object->landmarks) points.push_back({p[0], p[1]});
      tracked_.push_back(RoiFromPoints(spec.from_landmarks, points));
      // Report the model's own landmarks (pose's alignment points stay inside).
      if (spec.reported_landmarks > 0 && object->landmarks.size() > static_cast<size_t>(spec.reported_landmarks)) {
        object->landmarks.resize(static_cast<size_t>(spec.reported_landmarks));
        if (object->visibility.size() > object->landmarks.size()) object->visibility.resize(object->landmarks.size());
      }
      object->box = Bounds(*object);
      if (crop.detection) object->keypoints = crop.detection->keypoints;
      result.detections.push_back(std::move(*object));
    }
    crops.clear();
    if (result.detector_ran || tracked_.size() >= max_objects) break;
  }
  return absl::OkStatus();
}

absl::Status Pipeline::Segment(const Frame& frame, Result& result) {
  MGD_ASSIGN_OR_RETURN(current_, Make(Stage::kSegmenter, frame.size));
  MGD_RETURN_IF_ERROR(Feed(*current_, frame));
  MGD_RETURN_IF_ERROR(Invoke(*current_, result));
  result.mask = MaskFrom(current_->output(0));
  return absl::OkStatus();
}

absl::Status Pipeline::Feed(Interpreter& interpreter, const Frame& frame) {
  const int tensor = interpreter.graph().inputs[0];
  auto bound = bound_.find(&interpreter);
  if (frame.buffer != nullptr) {
    const GpuBuffer& b = *frame.buffer;
    if (bound != bound_.end() && bound->second == b) return absl::OkStatus();
    MGD_RETURN_IF_ERROR(interpreter.BindBuffer(tensor, b, GpuLayout::kBhwc));
    bound_[&interpreter] = b;
    return absl::OkStatus();
  }
  if (bound != bound_.end()) {
    MGD_RETURN_IF_ERROR(interpreter.BindBuffer(tensor, std::nullopt));
    bound_.erase(bound);
  }
  const TensorRef& input = interpreter.input(0);
  std::memcpy(input.data, frame.pixels, input.bytes);
  return absl::OkStatus();
}

absl::StatusOr<Result> Pipeline::Run(const Frame& frame) {
  const auto [width, height, channels] = frame.size;
  if (channels != 3 && channels != 4) {
    return absl::InvalidArgumentError(fmt::format("the image has {} channels (3 or 4)", channels));
  }
  if (width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide ||
      static_cast<int64_t>(width) * height > kMaxImagePixels) {
    return absl::InvalidArgumentError(fmt::format("the image is {}x{}, outside 1..{} a side and {} pixels", width, height,
                                                  kMaxImageSide, kMaxImagePixels));
  }
  ++frame_;
  Result result;
  if (spec_.segmenter) {
    MGD_RETURN_IF_ERROR(Segment(frame, result));
  } else if (spec_.landmarks) {
    MGD_RETURN_IF_ERROR(Track(frame, result));
  } else {
    MGD_ASSIGN_OR_RETURN(result.detections, Detect(frame, result));
  }
  return result;
}

absl::StatusOr<Result> Pipeline::Process(const Image& image) {
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * image.channels) {
    return absl::InvalidArgumentError(fmt::format("the image holds {} bytes, not {}x{}x{}", image.pixels.size(), image.width,
                                                  image.height, image.channels));
  }
  return Run(Frame{{image.width, image.height, image.channels}, image.pixels.data(), nullptr});
}

absl::StatusOr<Result> Pipeline::Process(const GpuImage& image) {
  if (options_.delegates.empty()) {
    return absl::FailedPreconditionError("a frame in a GPU buffer needs the pipeline to run on a GPU delegate");
  }
  return Run(Frame{{image.width, image.height, image.channels}, nullptr, &image.buffer});
}

}  // namespace mgd::pipeline
