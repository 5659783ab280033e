#include "pipeline/graphs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "model/status_macros.h"
#include "ops/pipeline/pipeline_ops.h"
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

// The model's output called `name`.
absl::StatusOr<int> OutputNamed(const Graph& g, const std::string& name, const char* what) {
  for (int t : g.outputs) {
    if (g.tensors[static_cast<size_t>(t)].name == name) return t;
  }
  return absl::InvalidArgumentError(fmt::format("the {} has no output '{}'", what, name));
}

// `mask` [1, h, w, 1] (after a sigmoid where it holds logits) sampled at
// each image pixel through `matrix` (image pixels to mask samples):
// MgdImageToTensor on a float "image" of range 0..255 is a plain bilinear
// resampling.
absl::StatusOr<int> MaskToImage(Graph& g, int mask, bool logits, int matrix, bool clamp_to_edge, int width, int height,
                                const char* what) {
  const Shape shape = g.tensors[static_cast<size_t>(mask)].shape;
  if (shape.size() != 4 || shape[0] != 1 || shape[3] != 1) {
    return absl::InvalidArgumentError(fmt::format("the {}'s mask {} is not [1, H, W, 1]", what, ShapeToString(shape)));
  }
  if (logits) {
    const int probabilities = AddTensor(g, "mask_probabilities", shape);
    Node sigmoid;
    sigmoid.op = OpKind::kLogistic;
    sigmoid.inputs = {mask};
    sigmoid.outputs = {probabilities};
    g.nodes.push_back(std::move(sigmoid));
    mask = probabilities;
  }
  const int out = AddTensor(g, "mask_in_image", {1, height, width, 1});
  ops::ImageToTensorAttributes resample{height, width, 1, 0.0f, 255.0f, clamp_to_edge};
  g.nodes.push_back(CustomNode(ops::kImageToTensorOp, ops::EncodeOptions(resample), {mask, matrix}, {out}));
  return out;
}

// A model with fewer landmarks than the solution reads (another file under
// the same name) is an error here, not an index out of range later.
absl::Status CheckLandmarkCount(const Tensor& landmarks, const LandmarkSpec& spec) {
  const int64_t count = NumElements(landmarks.shape) / spec.values_per_landmark;
  int64_t highest = spec.reported_landmarks - 1;
  for (const RoiRule* rule : {&spec.from_landmarks}) {
    for (const auto& [index, weight] : rule->start) highest = std::max<int64_t>(highest, index);
    for (const auto& [index, weight] : rule->end) highest = std::max<int64_t>(highest, index);
    for (int index : rule->subset) highest = std::max<int64_t>(highest, index);
  }
  for (const LandmarkRefinement& r : spec.refinements) {
    for (int index : r.average_z) highest = std::max<int64_t>(highest, index);
  }
  if (highest >= count) {
    return absl::InvalidArgumentError(fmt::format("the landmark model's '{}' holds {} landmarks; the solution reads landmark {}",
                                                  spec.landmarks_output, count, highest));
  }
  return absl::OkStatus();
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

LandmarkOutputs LandmarkOutputOrder(const LandmarkSpec& spec) {
  LandmarkOutputs o;
  int next = 1;
  for (size_t i = 0; i < spec.refinements.size(); ++i) o.refinements.push_back(next++);
  o.presence = next++;
  if (!spec.handedness_output.empty()) o.handedness = next++;
  if (!spec.mask_output.empty()) o.mask = next++;
  o.count = next;
  return o;
}

absl::StatusOr<Graph> LandmarkGraph(const Graph& model, const LandmarkSpec& spec, int width, int height, int channels,
                                    int copies) {
  if (copies < 1) return absl::InvalidArgumentError(fmt::format("{} copies of the landmark model", copies));
  MGD_ASSIGN_OR_RETURN(Fed fed, FedFromImage(model, "landmark model", spec.tensor_width, spec.tensor_height, spec.range_min,
                                             spec.range_max, width, height, channels,
                                             [](Graph& g) { return AddTensor(g, "crop_matrix", {1, 1, 4, 4}); }));
  Graph& g = fed.graph;
  const char* what = "landmark model";
  // The model's outputs by name: the same tensors in every copy, remapped.
  auto output = [&](const std::string& name) { return OutputNamed(model, name, what); };
  g.inputs = {fed.image};
  std::vector<int> outputs;
  for (int k = 0; k < copies; ++k) {
    // Copy 0 is the model's own tensors; later copies get their own
    // activations and share its constants (weights are uploaded once per
    // node, but read from one graph tensor).
    std::vector<int> remap(model.tensors.size());
    int crop = fed.crop;
    const std::string suffix = k == 0 ? "" : fmt::format("_{}", k);
    if (k == 0) {
      for (size_t t = 0; t < remap.size(); ++t) remap[t] = static_cast<int>(t);
    } else {
      for (size_t t = 0; t < remap.size(); ++t) {
        const Tensor& tensor = model.tensors[t];
        if (tensor.is_constant) {
          remap[t] = static_cast<int>(t);
          continue;
        }
        Tensor copy = tensor;
        copy.name += suffix;
        g.tensors.push_back(std::move(copy));
        remap[t] = static_cast<int>(g.tensors.size()) - 1;
      }
      crop = AddTensor(g, "crop_matrix" + suffix, {1, 1, 4, 4});
      ops::ImageToTensorAttributes to_tensor{spec.tensor_height, spec.tensor_width, 3, spec.range_min, spec.range_max};
      g.nodes.push_back(CustomNode(ops::kImageToTensorOp, ops::EncodeOptions(to_tensor), {fed.image, crop},
                                   {remap[static_cast<size_t>(model.inputs[0])]}));
      for (Node node : model.nodes) {
        for (int& t : node.inputs) {
          if (t >= 0) t = remap[static_cast<size_t>(t)];
        }
        for (int& t : node.outputs) t = remap[static_cast<size_t>(t)];
        g.nodes.push_back(std::move(node));
      }
    }
    auto in_copy = [&](const std::string& name) -> absl::StatusOr<int> {
      MGD_ASSIGN_OR_RETURN(const int t, output(name));
      return remap[static_cast<size_t>(t)];
    };
    const int projection = AddTensor(g, "projection_matrix" + suffix, {1, 4, 4});
    g.inputs.push_back(crop);
    g.inputs.push_back(projection);
    // MediaPipe's TransformLandmarks (v1: landmarks along the last axis).
    auto project = [&](const std::string& name, int dimensions) -> absl::Status {
      MGD_ASSIGN_OR_RETURN(const int t, in_copy(name));
      const Shape shape = g.tensors[static_cast<size_t>(t)].shape;
      if (shape.empty() || shape.back() % dimensions != 0) {
        return absl::InvalidArgumentError(fmt::format("output '{}' {} is not landmarks of {}", name, ShapeToString(shape), dimensions));
      }
      const int projected = AddTensor(g, name + "_in_image" + suffix, shape);
      g.nodes.push_back(CustomNode(ops::kTransformLandmarksOp, ops::EncodeTransformLandmarksOptions(dimensions, 1.0f),
                                   {t, projection}, {projected}));
      outputs.push_back(projected);
      return absl::OkStatus();
    };
    MGD_RETURN_IF_ERROR(project(spec.landmarks_output, spec.values_per_landmark));
    if (k == 0) MGD_RETURN_IF_ERROR(CheckLandmarkCount(g.tensors[static_cast<size_t>(outputs.back())], spec));
    for (const LandmarkRefinement& r : spec.refinements) MGD_RETURN_IF_ERROR(project(r.output, 2));
    MGD_ASSIGN_OR_RETURN(const int presence, in_copy(spec.presence_output));
    outputs.push_back(presence);
    if (!spec.handedness_output.empty()) {
      MGD_ASSIGN_OR_RETURN(const int handedness, in_copy(spec.handedness_output));
      outputs.push_back(handedness);
    }
    if (!spec.mask_output.empty()) {
      MGD_ASSIGN_OR_RETURN(const int mask, in_copy(spec.mask_output));
      const int matrix = AddTensor(g, "mask_matrix" + suffix, {1, 1, 4, 4});
      // Zero outside the crop, as MediaPipe's WarpAffine (BORDER_ZERO) gives it.
      MGD_ASSIGN_OR_RETURN(const int in_image, MaskToImage(g, mask, true, matrix, false, width, height, what));
      outputs.push_back(in_image);
      g.inputs.push_back(matrix);
    }
  }
  g.outputs = outputs;
  return std::move(g);
}

absl::StatusOr<Graph> SegmenterGraph(const Graph& model, const SegmenterSpec& spec, int width, int height, int channels) {
  // The whole image stretched to the tensor (keep_aspect_ratio: false).
  const Roi roi = WholeImage(width, height);
  const Matrix4 crop = CropMatrix(roi, spec.tensor_width, spec.tensor_height);
  MGD_ASSIGN_OR_RETURN(Fed fed, FedFromImage(model, "segmenter", spec.tensor_width, spec.tensor_height, spec.range_min,
                                             spec.range_max, width, height, channels, [&](Graph& g) {
                                               return AddConstant(g, "crop_matrix", {1, 1, 4, 4}, crop.data());
                                             }));
  Graph& g = fed.graph;
  MGD_ASSIGN_OR_RETURN(const int mask, OutputNamed(g, spec.mask_output, "segmenter"));
  const Shape& shape = g.tensors[static_cast<size_t>(mask)].shape;
  if (shape.size() != 4) {
    return absl::InvalidArgumentError(fmt::format("the segmenter's mask {} is not [1, H, W, 1]", ShapeToString(shape)));
  }
  const Matrix4 back = InverseCropMatrix(roi, shape[2], shape[1]);
  const int matrix = AddConstant(g, "mask_matrix", {1, 1, 4, 4}, back.data());
  // The edge's value past the last sample, as cv::resize gives it.
  MGD_ASSIGN_OR_RETURN(const int in_image, MaskToImage(g, mask, spec.mask_is_logit, matrix, true, width, height, "segmenter"));
  g.inputs = {fed.image};
  g.outputs = {in_image};
  return std::move(g);
}

}  // namespace mgd::pipeline
