// SSD anchors as MediaPipe's SsdAnchorsCalculator makes them from its
// options (the non-multiscale generator its face, palm and pose detectors
// use). Computed once per pipeline on the host and uploaded as a constant.
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace mgd::pipeline {

struct SsdAnchorOptions {
  int input_width = 0, input_height = 0;
  int num_layers = 0;
  float min_scale = 0.0f, max_scale = 0.0f;
  float anchor_offset_x = 0.5f, anchor_offset_y = 0.5f;
  std::vector<int> strides;
  std::vector<float> aspect_ratios{1.0f};
  float interpolated_scale_aspect_ratio = 1.0f;
  bool fixed_anchor_size = true;
  bool reduce_boxes_in_lowest_layer = false;
};

// Per anchor x_center, y_center, width, height (normalized), four floats.
absl::StatusOr<std::vector<float>> GenerateAnchors(const SsdAnchorOptions& options);

}  // namespace mgd::pipeline
