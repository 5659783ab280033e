// MediaPipe's geometric custom ops, as face_landmark_with_attention uses
// them inside the model (mediapipe/util/tflite/operations/): the attention
// crops are computed from landmarks and sampled on the GPU.
//   Landmarks2TransformMatrix: landmarks -> the 4x4 matrix of a rotated
//     crop around some of them (v1 and v2 options).
//   TransformTensorBilinear: a tensor sampled bilinearly where the matrix
//     maps each output pixel (v2 first moves pixel centres by half a pixel).
//   TransformLandmarks: landmarks through a matrix (x, y; z and any values
//     after it kept).
// Options are flexbuffer maps (model/mediapipe_options.h).
#pragma once

#include <array>
#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct Landmarks2TransformMatrixAttributes {
  int version = 2;
  std::vector<std::array<int, 2>> subset;  // pairs of landmark indices
  int left_rotation_idx = 0, right_rotation_idx = 0;
  // v2
  float target_rotation_radians = 0.0f;
  int output_height = 1, output_width = 1;
  float scale_x = 1.0f, scale_y = 1.0f;
  // v1
  int input_h = 1, input_w = 1, output_h = 1, output_w = 1;
  int landmarks_range = 1;
  float bbox_size_multiplier = 1.0f;
};

struct TransformTensorBilinearAttributes {
  int output_height = 1, output_width = 1;
};

struct TransformLandmarksAttributes {
  int dimensions = 0;  // v1 (0: the landmarks' last dimension, v2)
  float scale = 1.0f;
};

inline constexpr char kLandmarks2TransformMatrixOp[] = "Landmarks2TransformMatrix";
inline constexpr char kTransformTensorBilinearOp[] = "TransformTensorBilinear";
inline constexpr char kTransformLandmarksOp[] = "TransformLandmarks";

// TransformLandmarks v1's options (a flexbuffer map {dimensions, scale}),
// for graphs that add the op (pipeline/).
std::vector<uint8_t> EncodeTransformLandmarksOptions(int dimensions, float scale);

std::vector<OpDefinition> TransformOps();

}  // namespace mgd::ops
