// Where a model's input comes from in an image and where its outputs go
// back to: MediaPipe's rotated region of interest, letterboxed to the
// tensor's aspect ratio (ImageToTensor's keep_aspect_ratio), as the two
// matrices the pipeline ops take (ops/pipeline/pipeline_ops.h).
#pragma once

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

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
using Point = std::array<float, 2>;

// How a crop follows points (MediaPipe's DetectionsToRects /
// AlignmentPointsRects / HandLandmarksToRect, then RectTransformation).
struct RoiRule {
  enum class Extent {
    kBox,         // the points' axis-aligned bounding box
    kRotatedBox,  // their bounding box in the crop's rotated frame
    kAlignment,   // centred on `start`, 2 x |end - start| on a side
  };
  Extent extent = Extent::kBox;
  // The rotation turns the line from `start` to `end` (weighted means of
  // points, by index; none: no rotation) to `target_degrees`.
  std::vector<std::pair<int, float>> start, end;
  std::vector<int> subset;  // the points the box bounds (empty: all)
  float target_degrees = 0.0f;
  // Then, in the rotated frame: moved by shift x size, squared to the
  // longer side (square_long), scaled.
  float shift_x = 0.0f, shift_y = 0.0f;
  bool square_long = true;
  float scale = 1.0f;
};

// The crop `rule` makes of `points` (image pixels); `box` (x, y, width,
// height) stands for the points' bounding box where one is known (a
// detector's), else it is computed.
Roi RoiFromPoints(const RoiRule& rule, const std::vector<Point>& points, const std::array<float, 4>* box = nullptr);

// The axis-aligned bounding box (x, y, width, height) of points whose first
// two values are x and y (landmarks may carry z and more); zeros for none.
template <typename P>
std::array<float, 4> BoundingBox(const std::vector<P>& points) {
  if (points.empty()) return {};
  float lo_x = points[0][0], hi_x = lo_x, lo_y = points[0][1], hi_y = lo_y;
  for (const P& p : points) {
    lo_x = std::min(lo_x, p[0]), hi_x = std::max(hi_x, p[0]), lo_y = std::min(lo_y, p[1]), hi_y = std::max(hi_y, p[1]);
  }
  return {lo_x, lo_y, hi_x - lo_x, hi_y - lo_y};
}
// Intersection over union of the two crops' axis-aligned extents (rotation
// ignored, as MediaPipe's AssociationNormRect does).
float RoiOverlap(const Roi& a, const Roi& b);

// MgdImageToTensor's matrix: output pixel (x, y) -> the image's sample
// position (pixel centres at integers) over `roi`.
Matrix4 CropMatrix(const Roi& roi, int tensor_width, int tensor_height);
// CropMatrix's inverse: image pixel (x, y) -> the tensor's sample position
// (centres at integers), to bring a tensor over `roi` back to the image.
Matrix4 InverseCropMatrix(const Roi& roi, int tensor_width, int tensor_height);
// The tensor's normalized coordinates (0..1 over `roi`) -> image pixels.
Matrix4 ProjectionMatrix(const Roi& roi);

}  // namespace mgd::pipeline
