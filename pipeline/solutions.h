// What each solution runs, as MediaPipe's graphs configure it
// (mediapipe/modules/*/ *.pbtxt): model file, input tensor, anchors,
// decoding and suppression.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/pipeline/pipeline_ops.h"
#include "pipeline/anchors.h"
#include "pipeline/geometry.h"

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

// MediaPipe's LandmarksRefinement: an output of x, y per landmark that
// replaces (or adds) the landmarks `indexes` names, in order after the
// model's landmarks; z kept, or (average_z) the mean z of those landmarks.
struct LandmarkRefinement {
  std::string output;
  std::vector<int> indexes;
  std::vector<int> average_z;
};

// A landmark model run on a rotated crop of the image (MediaPipe's
// face_landmark, hand_landmark and pose_landmark modules): where the crop
// comes from, and which outputs are what.
struct LandmarkSpec {
  std::string model_file;
  int tensor_width = 0, tensor_height = 0;
  float range_min = 0.0f, range_max = 1.0f;
  std::string landmarks_output;                // values_per_landmark per landmark, x, y in tensor pixels
  int values_per_landmark = 3;                 // x, y, z (pose: visibility and presence logits after them)
  int reported_landmarks = 0;                  // the first this many are reported (0: all)
  float z_divisor = 1.0f;                      // MediaPipe's normalize_z
  std::vector<LandmarkRefinement> refinements;  // finer landmarks over the first ones (face mesh's lips, eyes, irises)
  std::string presence_output;
  bool presence_is_logit = true;               // else already a probability
  float min_presence = 0.5f;                   // on the probability
  std::string handedness_output;               // a probability of "right" (optional)
  std::string mask_output;                     // segmentation logits in the crop (optional)
  int max_objects = 1;                         // tracked at once (hands: 2)
  float min_new_object_overlap = 0.5f;         // a detection overlapping a tracked crop more is that object
  RoiRule from_detection;                      // over the detector's keypoints
  RoiRule from_landmarks;                      // the next frame's crop (tracking)
  std::vector<std::pair<int, int>> connections;  // landmarks joined in pictures (hand and pose skeletons)
};

// A segmentation model run on the whole image, its mask brought back to
// the image's size (MediaPipe's selfie_segmentation).
struct SegmenterSpec {
  std::string model_file;
  int tensor_width = 0, tensor_height = 0;
  float range_min = 0.0f, range_max = 1.0f;
  std::string mask_output;
  bool mask_is_logit = false;
};

struct SolutionSpec {
  std::string name;  // on the command line
  std::optional<DetectorSpec> detector;
  std::optional<LandmarkSpec> landmarks;
  std::optional<SegmenterSpec> segmenter;
};

// The solutions' names, for usage text.
std::vector<std::string> SolutionNames();
// The spec of `name`, or an error listing the names.
absl::StatusOr<SolutionSpec> FindSolution(const std::string& name);

}  // namespace mgd::pipeline
