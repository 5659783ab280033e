#include "pipeline/solutions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mgd::pipeline {
namespace {

// An SSD detector's anchors and decoding as MediaPipe's detectors share
// them: one class, `keypoints` keypoints after the box, scores through a
// clipped sigmoid, weighted NMS at IoU 0.3.
DetectorSpec SsdDetector(std::string model_file, int size, float range_min, std::vector<int> strides, int keypoints,
                         float min_score, int max_detections) {
  DetectorSpec s;
  s.model_file = std::move(model_file);
  s.tensor_width = s.tensor_height = size;
  s.range_min = range_min;
  s.range_max = 1.0f;
  s.anchors.input_width = s.anchors.input_height = size;
  s.anchors.min_scale = 0.1484375f;
  s.anchors.max_scale = 0.75f;
  s.anchors.num_layers = static_cast<int>(strides.size());
  s.anchors.strides = std::move(strides);
  s.decode.num_coords = 4 + 2 * keypoints;
  s.decode.num_keypoints = keypoints;
  s.decode.x_scale = s.decode.y_scale = s.decode.w_scale = s.decode.h_scale = static_cast<float>(size);
  s.decode.score_clip = 100.0f;
  s.suppression.min_score = min_score;
  s.suppression.iou_threshold = 0.3f;
  s.suppression.max_detections = max_detections;
  return s;
}

// face_detection_short_range.pbtxt / face_detection_full_range.pbtxt.
DetectorSpec FaceDetector(bool full_range) {
  DetectorSpec s = full_range ? SsdDetector("face_detection_full_range.tflite", 192, -1.0f, {4}, 6, 0.6f, 64)
                              : SsdDetector("face_detection_short_range.tflite", 128, -1.0f, {8, 16, 16, 16}, 6, 0.5f, 64);
  if (full_range) s.anchors.interpolated_scale_aspect_ratio = 0.0f;
  s.keypoint_names = {"right_eye", "left_eye", "nose_tip", "mouth_center", "right_ear_tragion", "left_ear_tragion"};
  return s;
}

// palm_detection_cpu.pbtxt.
DetectorSpec PalmDetector() {
  DetectorSpec s = SsdDetector("palm_detection_lite.tflite", 192, 0.0f, {8, 16, 16, 16}, 7, 0.5f, 64);
  s.keypoint_names = {"wrist", "index_mcp", "middle_mcp", "ring_mcp", "pinky_mcp", "thumb_cmc", "thumb_mcp"};
  return s;
}

// pose_detection_cpu.pbtxt: one person.
DetectorSpec PoseDetector() {
  DetectorSpec s = SsdDetector("pose_detection.tflite", 224, -1.0f, {8, 16, 32, 32, 32}, 4, 0.5f, 64);
  s.keypoint_names = {"hips_center", "full_body_scale", "shoulders_center", "upper_body_scale"};
  return s;
}

// tensors_to_face_landmarks_with_attention.pbtxt's LandmarksRefinement:
// the lips' 80 and each eye's 71 finer points over the mesh's, the irises'
// 5 + 5 after it, at the mean depth of their eye's contour.
std::vector<LandmarkRefinement> FaceMeshRefinements() {
  const std::vector<int> left_eye = {33,  7,   163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173, 130, 25,
                                     110, 24,  23,  22,  26,  112, 243, 247, 30,  29,  27,  28,  56,  190, 226, 31,  228, 229,
                                     230, 231, 232, 233, 244, 113, 225, 224, 223, 222, 221, 189, 35,  124, 46,  53,  52,  65,
                                     143, 111, 117, 118, 119, 120, 121, 128, 245, 156, 70,  63,  105, 66,  107, 55,  193};
  const std::vector<int> right_eye = {263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398, 359, 255,
                                      339, 254, 253, 252, 256, 341, 463, 467, 260, 259, 257, 258, 286, 414, 446, 261, 448, 449,
                                      450, 451, 452, 453, 464, 342, 445, 444, 443, 442, 441, 413, 265, 353, 276, 283, 282, 295,
                                      372, 340, 346, 347, 348, 349, 350, 357, 465, 383, 300, 293, 334, 296, 336, 285, 417};
  const std::vector<int> lips = {61,  146, 91,  181, 84,  17,  314, 405, 321, 375, 291, 185, 40,  39,  37,  0,
                                 267, 269, 270, 409, 78,  95,  88,  178, 87,  14,  317, 402, 318, 324, 308, 191,
                                 80,  81,  82,  13,  312, 311, 310, 415, 76,  77,  90,  180, 85,  16,  315, 404,
                                 320, 307, 306, 184, 74,  73,  72,  11,  302, 303, 304, 408, 62,  96,  89,  179,
                                 86,  15,  316, 403, 319, 325, 292, 183, 42,  41,  38,  12,  268, 271, 272, 407};
  // The irises' depth: the mean of the eye's 16 contour points.
  const std::vector<int> left_contour(left_eye.begin(), left_eye.begin() + 16);
  const std::vector<int> right_contour(right_eye.begin(), right_eye.begin() + 16);
  return {{"output_lips", lips, {}},
          {"output_left_eye", left_eye, {}},
          {"output_right_eye", right_eye, {}},
          {"output_left_iris", {468, 469, 470, 471, 472}, left_contour},
          {"output_right_iris", {473, 474, 475, 476, 477}, right_contour}};
}

// face_landmark_front_cpu.pbtxt with attention: the detection's eyes level
// the crop, the landmarks' eye corners (33, 263) the next frame's;
// face_landmark_with_attention's mesh refined by its lips, eyes and irises
// (478).
LandmarkSpec FaceMesh() {
  LandmarkSpec s;
  s.model_file = "face_landmark_with_attention.tflite";
  s.tensor_width = s.tensor_height = 192;
  s.landmarks_output = "output_mesh_identity";
  s.refinements = FaceMeshRefinements();
  s.presence_output = "conv_faceflag";
  s.from_detection.start = {{0, 1.0f}};  // right eye
  s.from_detection.end = {{1, 1.0f}};    // left eye
  s.from_detection.scale = 1.5f;
  s.from_landmarks = s.from_detection;
  s.from_landmarks.start = {{33, 1.0f}};
  s.from_landmarks.end = {{263, 1.0f}};
  return s;
}

// hand_landmark_tracking_cpu.pbtxt with the lite model: two hands; the
// palm's crop (palm_detection_detection_to_roi.pbtxt) and the landmarks'
// (hand_landmark_landmarks_to_roi.pbtxt, HandLandmarksToRect).
LandmarkSpec Hands() {
  LandmarkSpec s;
  s.model_file = "hand_landmark_lite.tflite";
  s.tensor_width = s.tensor_height = 224;
  s.landmarks_output = "Identity";
  s.z_divisor = 0.4f;
  s.presence_output = "Identity_1";
  s.presence_is_logit = false;
  s.handedness_output = "Identity_2";
  s.max_objects = 2;
  s.from_detection.start = {{0, 1.0f}};  // wrist
  s.from_detection.end = {{2, 1.0f}};    // middle finger's MCP
  s.from_detection.target_degrees = 90.0f;
  s.from_detection.shift_y = -0.5f;
  s.from_detection.scale = 2.6f;
  s.from_landmarks.extent = RoiRule::Extent::kRotatedBox;
  // From the wrist to the middle of the index, middle and ring fingers' MCPs.
  s.from_landmarks.start = {{0, 1.0f}};
  s.from_landmarks.end = {{5, 0.25f}, {9, 0.5f}, {13, 0.25f}};
  s.from_landmarks.subset = {0, 1, 2, 3, 5, 6, 9, 10, 13, 14, 17, 18};
  s.from_landmarks.target_degrees = 90.0f;
  s.from_landmarks.shift_y = -0.1f;
  s.from_landmarks.scale = 2.0f;
  // MediaPipe's HAND_CONNECTIONS: each finger from the wrist, and the palm.
  s.connections = {{0, 1},  {1, 2},   {2, 3},   {3, 4},   {0, 5},   {5, 6},   {6, 7},   {7, 8},   {5, 9},   {9, 10}, {10, 11},
                   {11, 12}, {9, 13}, {13, 14}, {14, 15}, {15, 16}, {13, 17}, {0, 17}, {17, 18}, {18, 19}, {19, 20}};
  return s;
}

// pose_landmark_cpu.pbtxt with the lite model: 33 landmarks reported; the
// two after them (hips centre, full-body scale) align the next crop as the
// detector's first two keypoints align the first; its segmentation.
LandmarkSpec Pose() {
  LandmarkSpec s;
  s.model_file = "pose_landmark_lite.tflite";
  s.tensor_width = s.tensor_height = 256;
  s.landmarks_output = "Identity";
  s.values_per_landmark = 5;
  s.reported_landmarks = 33;
  s.presence_output = "Identity_1";
  s.presence_is_logit = false;
  s.mask_output = "Identity_2";
  s.from_detection.extent = RoiRule::Extent::kAlignment;
  s.from_detection.start = {{0, 1.0f}};  // hips' centre
  s.from_detection.end = {{1, 1.0f}};    // full-body scale point
  s.from_detection.target_degrees = 90.0f;
  s.from_detection.scale = 1.25f;
  s.from_landmarks = s.from_detection;
  s.from_landmarks.start = {{33, 1.0f}};
  s.from_landmarks.end = {{34, 1.0f}};
  // MediaPipe's POSE_CONNECTIONS: face, arms and hands, torso, legs and feet.
  s.connections = {{0, 1},   {1, 2},   {2, 3},   {3, 7},   {0, 4},   {4, 5},   {5, 6},   {6, 8},   {9, 10},
                   {11, 12}, {11, 13}, {13, 15}, {15, 17}, {15, 19}, {15, 21}, {17, 19}, {12, 14}, {14, 16},
                   {16, 18}, {16, 20}, {16, 22}, {18, 20}, {11, 23}, {12, 24}, {23, 24}, {23, 25}, {24, 26},
                   {25, 27}, {26, 28}, {27, 29}, {28, 30}, {29, 31}, {30, 32}, {27, 31}, {28, 32}};
  return s;
}

// selfie_segmentation_cpu.pbtxt, the general model: the whole image
// stretched to 256x256.
SegmenterSpec Selfie() {
  SegmenterSpec s;
  s.model_file = "selfie_segmentation.tflite";
  s.tensor_width = s.tensor_height = 256;
  s.mask_output = "activation_10";
  return s;
}

}  // namespace

std::vector<std::string> SolutionNames() { return {"face", "face_full_range", "face_mesh", "hands", "pose", "selfie"}; }

absl::StatusOr<SolutionSpec> FindSolution(const std::string& name) {
  if (name == "face") return SolutionSpec{name, FaceDetector(false), std::nullopt, std::nullopt};
  if (name == "face_full_range") return SolutionSpec{name, FaceDetector(true), std::nullopt, std::nullopt};
  if (name == "face_mesh") return SolutionSpec{name, FaceDetector(false), FaceMesh(), std::nullopt};
  if (name == "hands") return SolutionSpec{name, PalmDetector(), Hands(), std::nullopt};
  if (name == "pose") return SolutionSpec{name, PoseDetector(), Pose(), std::nullopt};
  if (name == "selfie") return SolutionSpec{name, std::nullopt, std::nullopt, Selfie()};
  return absl::InvalidArgumentError(
      fmt::format("unknown solution '{}' (one of: {})", name, fmt::join(SolutionNames(), ", ")));
}

}  // namespace mgd::pipeline
