// What each solution runs, as MediaPipe's graphs configure it
// (mediapipe/modules/*/ *.pbtxt): model file, input tensor, anchors,
// decoding and suppression.
#pragma once

#include <string>
#include <vector>

#include "ops/pipeline/pipeline_ops.h"
#include "pipeline/anchors.h"

namespace mgd::pipeline {

struct DetectorSpec {
  std::string name;        // the solution's name on the command line
  std::string model_file;  // in the models folder
  int tensor_width = 0, tensor_height = 0;
  float range_min = 0.0f, range_max = 1.0f;
  SsdAnchorOptions anchors;
  ops::DecodeDetectionsAttributes decode;
  ops::NonMaxSuppressionAttributes suppression;
  std::vector<std::string> keypoint_names;
};

// The solutions' names, for usage text.
std::vector<std::string> SolutionNames();
// The spec of `name`, or an error listing the names.
absl::StatusOr<DetectorSpec> FindSolution(const std::string& name);

}  // namespace mgd::pipeline
