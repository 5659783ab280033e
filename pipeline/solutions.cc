#include "pipeline/solutions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mgd::pipeline {
namespace {

// face_detection_short_range.pbtxt / face_detection_full_range.pbtxt with
// face_detection.pbtxt (TensorsToDetections, NonMaxSuppression).
DetectorSpec FaceDetector(bool full_range) {
  DetectorSpec s;
  s.name = full_range ? "face_full_range" : "face";
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

}  // namespace

std::vector<std::string> SolutionNames() { return {"face", "face_full_range"}; }

absl::StatusOr<DetectorSpec> FindSolution(const std::string& name) {
  if (name == "face") return FaceDetector(false);
  if (name == "face_full_range") return FaceDetector(true);
  return absl::InvalidArgumentError(
      fmt::format("unknown solution '{}' (one of: {})", name, fmt::join(SolutionNames(), ", ")));
}

}  // namespace mgd::pipeline
