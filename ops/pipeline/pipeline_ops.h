// mgd's own custom ops for whole pipelines (pipeline/): what MediaPipe's
// calculators do around a model (ImageToTensor, TensorsToDetections,
// NonMaxSuppression with DetectionProjection), as graph nodes, so that the
// delegate runs them in the model's submission and only the few detections
// come back to the host. Each has a CPU kernel (the reference) and a GPU
// generator. Their options are little-endian float32 fields, in the order
// of the attribute structs below.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace mgd::ops {

inline constexpr char kImageToTensorOp[] = "MgdImageToTensor";
inline constexpr char kDecodeDetectionsOp[] = "MgdDecodeDetections";
inline constexpr char kNonMaxSuppressionOp[] = "MgdNonMaxSuppression";

// Inputs: an image [1, H, W, C] (uint8, or float32 of the same 0..255
// values; C 1, 3 or 4) and a 4x4 matrix [1, 1, 4, 4] (row-major) that maps
// an output pixel (x, y, 0, 1) to image pixel coordinates, pixel centres at
// integers. Output [1, height, width, channels]: the image sampled
// bilinearly there (samples outside it are 0, as OpenCV's BORDER_CONSTANT
// in MediaPipe's ImageToTensor; or, with clamp_to_edge, the nearest edge
// pixel's, as cv::resize gives a mask brought back to the image's size),
// scaled from 0..255 to [range_min, range_max]. Channel k reads the image's
// channel k (a grey image's one channel for every k). A float image of
// range 0..255 is sampled unscaled (masks, pipeline/).
struct ImageToTensorAttributes {
  int height = 0, width = 0, channels = 3;
  float range_min = 0.0f, range_max = 1.0f;
  bool clamp_to_edge = false;  // an optional sixth field
};

// MediaPipe's TensorsToDetections decoding, for one class. Inputs: raw
// regressors [1, N, num_coords], raw scores [1, N, 1] and anchors [N, 4]
// (x_center, y_center, width, height, normalized; pipeline/anchors.h).
// Output [1, N, DetectionRowSize(num_keypoints)] in the tensor's normalized
// coordinates: xmin, ymin, xmax, ymax, then x, y of each keypoint, then the
// score (sigmoid of the clipped raw score when `sigmoid`).
struct DecodeDetectionsAttributes {
  int num_coords = 0, box_offset = 0, keypoint_offset = 4, num_keypoints = 0, values_per_keypoint = 2;
  float x_scale = 1.0f, y_scale = 1.0f, w_scale = 1.0f, h_scale = 1.0f;
  bool reverse_order = true;  // x before y (MediaPipe's reverse_output_order)
  bool exp_size = false;      // apply_exponential_on_box_size
  bool sigmoid = true;
  float score_clip = 0.0f;  // score_clipping_thresh; 0: none
};

// MediaPipe's weighted non-max suppression (NonMaxSuppressionCalculator,
// algorithm WEIGHTED, overlap INTERSECTION_OVER_UNION) over the decoded rows
// whose score is at least `min_score` (TensorsToDetections'
// min_score_thresh), then DetectionProjection: input 1 (optional) is a 4x4
// matrix [1, 1, 4, 4] from the tensor's normalized coordinates to the
// image's (pixels), applied to the keypoints and to the box's corners (the
// box becomes their bounding box). Output [1, max_detections, row size]:
// the detections by score, descending; unused rows are zeros with score -1.
struct NonMaxSuppressionAttributes {
  int max_detections = 1;
  float min_score = 0.5f;
  float iou_threshold = 0.3f;
};

// Floats per detection row: box, keypoints, score.
inline int DetectionRowSize(int num_keypoints) { return 4 + 2 * num_keypoints + 1; }

struct OpDefinition;
// The families, for ops/registry.cc.
std::vector<OpDefinition> ImageToTensorOps();
std::vector<OpDefinition> DetectionOps();

std::vector<uint8_t> EncodeOptions(const ImageToTensorAttributes& a);
std::vector<uint8_t> EncodeOptions(const DecodeDetectionsAttributes& a);
std::vector<uint8_t> EncodeOptions(const NonMaxSuppressionAttributes& a);

}  // namespace mgd::ops
