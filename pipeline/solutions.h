// What each solution runs, as MediaPipe's graphs configure it
// (mediapipe/modules/*/ *.pbtxt): model file, input tensor, anchors,
// decoding and suppression.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/pipeline/pipeline_ops.h"
#include "pipeline/anchors.h"

namespace mgd::pipeline {

struct DetectorSpec {
  std::string model_file;  // in the models folder
  int tensor_width = 0, tensor_height = 0;
  float range_min = 0.0f, range_max = 1.0f;
  SsdAnchorOptions anchors;
  ops::DecodeDetectionsAttributes decode;
  ops::NonMaxSuppressionAttributes suppression;
  std::vector<std::string> keypoint_names;
};

// A landmark model run on a rotated crop of the image (MediaPipe's
// face_landmark modules): where the crop comes from, and which outputs are
// landmarks.
struct LandmarkSpec {
  std::string model_file;
  int tensor_width = 0, tensor_height = 0;
  float range_min = 0.0f, range_max = 1.0f;
  std::string mesh_output;                     // x, y, z per landmark, in tensor pixels
  std::vector<std::string> extra_xy_outputs;   // x, y per landmark, appended (irises)
  std::string presence_output;                 // a logit
  float min_presence = 0.5f;                   // on its sigmoid
  // The crop from a detection: box, turned by the line between two of its
  // keypoints, scaled and squared (DetectionsToRects, RectTransformation).
  int detection_start = 0, detection_end = 1;
  // The next frame's crop from the landmarks (tracking): their bounding
  // box, turned by the line between these two.
  int landmark_start = 0, landmark_end = 1;
  float target_degrees = 0.0f, scale = 1.5f;
  bool square_long = true;
};

struct SolutionSpec {
  std::string name;  // on the command line
  DetectorSpec detector;
  std::optional<LandmarkSpec> landmarks;
};

// The solutions' names, for usage text.
std::vector<std::string> SolutionNames();
// The spec of `name`, or an error listing the names.
absl::StatusOr<SolutionSpec> FindSolution(const std::string& name);

}  // namespace mgd::pipeline
