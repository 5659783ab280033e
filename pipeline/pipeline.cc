#include "pipeline/pipeline.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "model/reader.h"
#include "model/status_macros.h"
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

}  // namespace

absl::StatusOr<Graph> DetectorGraph(const Graph& model, const DetectorSpec& spec, const std::vector<float>& anchors,
                                    int width, int height, int channels) {
  Graph g = model;
  if (g.inputs.size() != 1) return absl::InvalidArgumentError(fmt::format("the detector has {} inputs, not one", g.inputs.size()));
  const int input = g.inputs[0];
  const Shape expected_input{1, spec.tensor_height, spec.tensor_width, 3};
  if (g.tensors[static_cast<size_t>(input)].shape != expected_input) {
    return absl::InvalidArgumentError(fmt::format("the detector's input is {}, not {}",
                                                  ShapeToString(g.tensors[static_cast<size_t>(input)].shape),
                                                  ShapeToString(expected_input)));
  }
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
  const Roi roi = Letterboxed(WholeImage(width, height), spec.tensor_width, spec.tensor_height);
  const Matrix4 crop = CropMatrix(roi, spec.tensor_width, spec.tensor_height);
  const Matrix4 projection = ProjectionMatrix(roi);
  const int image = AddTensor(g, "image", {1, height, width, channels}, DataType::kUInt8);
  const int crop_t = AddConstant(g, "crop_matrix", {1, 1, 4, 4}, crop.data());
  ops::ImageToTensorAttributes to_tensor{spec.tensor_height, spec.tensor_width, 3, spec.range_min, spec.range_max};
  g.nodes.insert(g.nodes.begin(), CustomNode(ops::kImageToTensorOp, ops::EncodeOptions(to_tensor), {image, crop_t}, {input}));
  const int anchors_t = AddConstant(g, "anchors", {n, 4}, anchors.data());
  const int row = ops::DetectionRowSize(spec.decode.num_keypoints);
  const int decoded = AddTensor(g, "decoded_detections", {1, n, row});
  g.nodes.push_back(CustomNode(ops::kDecodeDetectionsOp, ops::EncodeOptions(spec.decode), {boxes, scores, anchors_t}, {decoded}));
  const int projection_t = AddConstant(g, "projection_matrix", {1, 1, 4, 4}, projection.data());
  const int detections = AddTensor(g, "detections", {1, spec.suppression.max_detections, row});
  g.nodes.push_back(
      CustomNode(ops::kNonMaxSuppressionOp, ops::EncodeOptions(spec.suppression), {decoded, projection_t}, {detections}));
  g.inputs = {image};
  g.outputs = {detections};
  return g;
}

absl::StatusOr<std::unique_ptr<Pipeline>> Pipeline::Create(const std::string& solution, PipelineOptions options) {
  MGD_ASSIGN_OR_RETURN(DetectorSpec spec, FindSolution(solution));
  const std::string path = (options.models_dir.empty() ? std::string(".") : options.models_dir) + "/" + spec.model_file;
  MGD_ASSIGN_OR_RETURN(Graph model, ReadModelFile(path));
  MGD_ASSIGN_OR_RETURN(std::vector<float> anchors, GenerateAnchors(spec.anchors));
  std::unique_ptr<Pipeline> p(new Pipeline(std::move(spec), std::move(model), std::move(options)));
  p->anchors_ = std::move(anchors);
  return p;
}

absl::StatusOr<Interpreter*> Pipeline::InterpreterFor(const Image& image) {
  const std::array<int, 3> key{image.width, image.height, image.channels};
  if (auto it = interpreters_.find(key); it != interpreters_.end()) return it->second.get();
  MGD_ASSIGN_OR_RETURN(Graph graph, DetectorGraph(model_, spec_, anchors_, image.width, image.height, image.channels));
  InterpreterOptions options;
  options.delegates = options_.delegates;
  options.logger = options_.logger;
  MGD_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interpreter, Interpreter::Create(std::move(graph), std::move(options)));
  Interpreter* raw = interpreter.get();
  interpreters_[key] = std::move(interpreter);
  return raw;
}

absl::StatusOr<Result> Pipeline::Process(const Image& image) {
  if (image.channels != 3 && image.channels != 4) {
    return absl::InvalidArgumentError(fmt::format("the image has {} channels (3 or 4)", image.channels));
  }
  if (image.pixels.size() != static_cast<size_t>(image.width) * image.height * image.channels) {
    return absl::InvalidArgumentError(fmt::format("the image holds {} bytes, not {}x{}x{}", image.pixels.size(), image.width,
                                                  image.height, image.channels));
  }
  MGD_ASSIGN_OR_RETURN(current_, InterpreterFor(image));
  std::memcpy(current_->input(0).data, image.pixels.data(), image.pixels.size());
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = current_->Invoke(); !s.ok()) return s;
  Result result;
  result.invoke_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const TensorRef& out = current_->output(0);
  const int rows = out.dim(1), d = out.dim(2);
  const float* v = out.as<float>();
  for (int r = 0; r < rows; ++r) {
    const float* row = v + static_cast<int64_t>(r) * d;
    // Rows come by score, descending; unused ones score -1.
    if (!(row[d - 1] >= spec_.suppression.min_score)) break;
    Detection det;
    det.score = row[d - 1];
    det.box = {row[0], row[1], row[2] - row[0], row[3] - row[1]};
    for (int c = 4; c + 1 < d - 1; c += 2) det.keypoints.push_back({row[c], row[c + 1]});
    result.detections.push_back(std::move(det));
  }
  return result;
}

}  // namespace mgd::pipeline
