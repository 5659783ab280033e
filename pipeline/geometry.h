// Where a model's input comes from in an image and where its outputs go
// back to: MediaPipe's rotated region of interest, letterboxed to the
// tensor's aspect ratio (ImageToTensor's keep_aspect_ratio), as the two
// matrices the pipeline ops take (ops/pipeline/pipeline_ops.h).
#pragma once

#include <array>

namespace mgd::pipeline {

// A rotated rectangle in image pixels (x right, y down; pixel edges at
// integers), rotation in radians, clockwise on screen.
struct Roi {
  float center_x = 0.0f, center_y = 0.0f, width = 0.0f, height = 0.0f, rotation = 0.0f;
};

using Matrix4 = std::array<float, 16>;  // row-major

// The whole image.
Roi WholeImage(int width, int height);
// `roi` grown along one side to the tensor's aspect ratio (letterboxing).
Roi Letterboxed(const Roi& roi, int tensor_width, int tensor_height);
// MediaPipe's DetectionsToRects + RectTransformation: the box's centre and
// size, turned so that the line from keypoint `start` to keypoint `end`
// lies at `target_degrees`, scaled by `scale` and (square_long) squared to
// its longer side. Box and keypoints in image pixels.
Roi RoiFromDetection(const std::array<float, 4>& box, const std::array<float, 2>& start, const std::array<float, 2>& end,
                     float target_degrees, float scale, bool square_long);

// MgdImageToTensor's matrix: output pixel (x, y) -> the image's sample
// position (pixel centres at integers) over `roi`.
Matrix4 CropMatrix(const Roi& roi, int tensor_width, int tensor_height);
// The tensor's normalized coordinates (0..1 over `roi`) -> image pixels.
Matrix4 ProjectionMatrix(const Roi& roi);

}  // namespace mgd::pipeline
