#include "pipeline/geometry.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mgd::pipeline {

Roi WholeImage(int width, int height) {
  return {static_cast<float>(width) / 2, static_cast<float>(height) / 2, static_cast<float>(width),
          static_cast<float>(height), 0.0f};
}

Roi Letterboxed(const Roi& roi, int tensor_width, int tensor_height) {
  const float tensor_aspect = static_cast<float>(tensor_height) / static_cast<float>(tensor_width);
  const float roi_aspect = roi.height / roi.width;
  Roi out = roi;
  if (tensor_aspect > roi_aspect) {
    out.height = roi.width * tensor_aspect;
  } else {
    out.width = roi.height / tensor_aspect;
  }
  return out;
}

namespace {

constexpr float kPi = 3.14159265358979f;

float NormalizeRadians(float r) { return r - 2 * kPi * std::floor((r + kPi) / (2 * kPi)); }

Point WeightedMean(const std::vector<std::pair<int, float>>& weights, const std::vector<Point>& points) {
  Point p{0.0f, 0.0f};
  for (const auto& [index, weight] : weights) {
    const Point& q = points.at(static_cast<size_t>(index));
    p[0] += weight * q[0];
    p[1] += weight * q[1];
  }
  return p;
}

}  // namespace

Roi RoiFromPoints(const RoiRule& rule, const std::vector<Point>& points, const std::array<float, 4>* box) {
  const Point start = WeightedMean(rule.start, points), end = WeightedMean(rule.end, points);
  Roi roi;
  // Image y points down: the angle is measured with y flipped, as MediaPipe does.
  roi.rotation = NormalizeRadians(rule.target_degrees * kPi / 180.0f - std::atan2(-(end[1] - start[1]), end[0] - start[0]));
  std::vector<Point> bounded;
  if (rule.subset.empty()) {
    bounded = points;
  } else {
    for (int i : rule.subset) bounded.push_back(points.at(static_cast<size_t>(i)));
  }
  if (rule.extent == RoiRule::Extent::kAlignment) {
    const float size = 2.0f * std::hypot(end[0] - start[0], end[1] - start[1]);
    roi.center_x = start[0];
    roi.center_y = start[1];
    roi.width = roi.height = size;
  } else if (box != nullptr && rule.extent == RoiRule::Extent::kBox) {
    roi.center_x = (*box)[0] + (*box)[2] / 2;
    roi.center_y = (*box)[1] + (*box)[3] / 2;
    roi.width = (*box)[2];
    roi.height = (*box)[3];
  } else {
    // The bounds in the frame turned by -rotation about the axis-aligned
    // box's centre (identity for kBox), turned back.
    if (bounded.empty()) throw std::out_of_range("RoiFromPoints: no points to bound");
    const std::array<float, 4> upright = BoundingBox(bounded);
    const float cx = upright[0] + upright[2] / 2, cy = upright[1] + upright[3] / 2;
    const float r = rule.extent == RoiRule::Extent::kRotatedBox ? roi.rotation : 0.0f;
    const float c = std::cos(-r), s = std::sin(-r);
    std::vector<Point> turned;
    for (const Point& p : bounded) {
      const float dx = p[0] - cx, dy = p[1] - cy;
      turned.push_back({dx * c - dy * s, dx * s + dy * c});
    }
    const std::array<float, 4> t = BoundingBox(turned);
    const float mx = t[0] + t[2] / 2, my = t[1] + t[3] / 2;
    roi.center_x = cx + mx * std::cos(r) - my * std::sin(r);
    roi.center_y = cy + mx * std::sin(r) + my * std::cos(r);
    roi.width = t[2];
    roi.height = t[3];
  }
  // RectTransformation: shift in the rotated frame, square, scale.
  const float c = std::cos(roi.rotation), s = std::sin(roi.rotation);
  roi.center_x += roi.width * rule.shift_x * c - roi.height * rule.shift_y * s;
  roi.center_y += roi.width * rule.shift_x * s + roi.height * rule.shift_y * c;
  if (rule.square_long) roi.width = roi.height = std::max(roi.width, roi.height);
  roi.width *= rule.scale;
  roi.height *= rule.scale;
  return roi;
}

float RoiOverlap(const Roi& a, const Roi& b) {
  const float ix = std::min(a.center_x + a.width / 2, b.center_x + b.width / 2) -
                   std::max(a.center_x - a.width / 2, b.center_x - b.width / 2);
  const float iy = std::min(a.center_y + a.height / 2, b.center_y + b.height / 2) -
                   std::max(a.center_y - a.height / 2, b.center_y - b.height / 2);
  if (ix <= 0 || iy <= 0) return 0.0f;
  const float inter = ix * iy, uni = a.width * a.height + b.width * b.height - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

Matrix4 CropMatrix(const Roi& roi, int tensor_width, int tensor_height) {
  // Output pixel x covers u = (x + 0.5) / width of the roi, at
  // (u - 0.5) * roi.width from its centre before rotation; sample
  // positions put pixel centres at integers (-0.5).
  const float c = std::cos(roi.rotation), s = std::sin(roi.rotation);
  const float sx = roi.width / static_cast<float>(tensor_width), sy = roi.height / static_cast<float>(tensor_height);
  const float dx0 = (0.5f / static_cast<float>(tensor_width) - 0.5f) * roi.width;
  const float dy0 = (0.5f / static_cast<float>(tensor_height) - 0.5f) * roi.height;
  Matrix4 m{};
  m[0] = c * sx;
  m[1] = -s * sy;
  m[3] = roi.center_x - 0.5f + c * dx0 - s * dy0;
  m[4] = s * sx;
  m[5] = c * sy;
  m[7] = roi.center_y - 0.5f + s * dx0 + c * dy0;
  m[10] = m[15] = 1.0f;
  return m;
}

Matrix4 InverseCropMatrix(const Roi& roi, int tensor_width, int tensor_height) {
  const Matrix4 m = CropMatrix(roi, tensor_width, tensor_height);
  // The inverse of [a b; c d] (a rotation times a scale: never singular
  // for a crop of positive size) and of the translation after it.
  const float det = m[0] * m[5] - m[1] * m[4];
  Matrix4 inv{};
  inv[0] = m[5] / det;
  inv[1] = -m[1] / det;
  inv[4] = -m[4] / det;
  inv[5] = m[0] / det;
  inv[3] = -(inv[0] * m[3] + inv[1] * m[7]);
  inv[7] = -(inv[4] * m[3] + inv[5] * m[7]);
  inv[10] = inv[15] = 1.0f;
  return inv;
}

Matrix4 ProjectionMatrix(const Roi& roi) {
  const float c = std::cos(roi.rotation), s = std::sin(roi.rotation);
  Matrix4 m{};
  m[0] = c * roi.width;
  m[1] = -s * roi.height;
  m[3] = roi.center_x - 0.5f * c * roi.width + 0.5f * s * roi.height;
  m[4] = s * roi.width;
  m[5] = c * roi.height;
  m[7] = roi.center_y - 0.5f * s * roi.width - 0.5f * c * roi.height;
  m[10] = m[15] = 1.0f;
  return m;
}

}  // namespace mgd::pipeline
