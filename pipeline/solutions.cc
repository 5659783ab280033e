#include "pipeline/solutions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mgd::pipeline {
namespace {

// face_detection_short_range.pbtxt / face_detection_full_range.pbtxt with
// face_detection.pbtxt (TensorsToDetections, NonMaxSuppression).
DetectorSpec FaceDetector(bool full_range) {
  DetectorSpec s;
  s.model_file = full_range ? "face_detection_full_range.tflite" : "face_detection_short_range.tflite";
  const int size = full_range ? 192 : 128;
  s.tensor_width = s.tensor_height = size;
  s.range_min = -1.0f;
  s.range_max = 1.0f;
  s.anchors.input_width = s.anchors.input_height = size;
  s.anchors.min_scale = 0.1484375f;
  s.anchors.max_scale = 0.75f;
  s.anchors.num_layers = full_range ? 1 : 4;
  s.anchors.strides = full_range ? std::vector<int>{4} : std::vector<int>{8, 16, 16, 16};
  s.anchors.interpolated_scale_aspect_ratio = full_range ? 0.0f : 1.0f;
  s.decode.num_coords = 16;
  s.decode.box_offset = 0;
  s.decode.keypoint_offset = 4;
  s.decode.num_keypoints = 6;
  s.decode.values_per_keypoint = 2;
  s.decode.x_scale = s.decode.y_scale = s.decode.w_scale = s.decode.h_scale = static_cast<float>(size);
  s.decode.reverse_order = true;
  s.decode.sigmoid = true;
  s.decode.score_clip = 100.0f;
  s.suppression.min_score = full_range ? 0.6f : 0.5f;
  s.suppression.iou_threshold = 0.3f;
  s.suppression.max_detections = 64;
  s.keypoint_names = {"right_eye", "left_eye", "nose_tip", "mouth_center", "right_ear_tragion", "left_ear_tragion"};
  return s;
}

// face_landmark_front_cpu.pbtxt with attention: the detection's eyes level
// the crop, the landmarks' eye corners (33, 263) the next frame's;
// face_landmark_with_attention's mesh, and its irises after it (478).
LandmarkSpec FaceMesh() {
  LandmarkSpec s;
  s.model_file = "face_landmark_with_attention.tflite";
  s.tensor_width = s.tensor_height = 192;
  s.mesh_output = "output_mesh_identity";
  s.extra_xy_outputs = {"output_left_iris", "output_right_iris"};
  s.presence_output = "conv_faceflag";
  s.detection_start = 0;  // right eye
  s.detection_end = 1;    // left eye
  s.landmark_start = 33;
  s.landmark_end = 263;
  return s;
}

}  // namespace

std::vector<std::string> SolutionNames() { return {"face", "face_full_range", "face_mesh"}; }

absl::StatusOr<SolutionSpec> FindSolution(const std::string& name) {
  if (name == "face") return SolutionSpec{name, FaceDetector(false), std::nullopt};
  if (name == "face_full_range") return SolutionSpec{name, FaceDetector(true), std::nullopt};
  if (name == "face_mesh") return SolutionSpec{name, FaceDetector(false), FaceMesh()};
  return absl::InvalidArgumentError(
      fmt::format("unknown solution '{}' (one of: {})", name, fmt::join(SolutionNames(), ", ")));
}

}  // namespace mgd::pipeline
