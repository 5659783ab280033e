#include "pipeline/geometry.h"

#include <algorithm>
#include <cmath>

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

Roi RoiFromDetection(const std::array<float, 4>& box, const std::array<float, 2>& start, const std::array<float, 2>& end,
                     float target_degrees, float scale, bool square_long) {
  constexpr float kPi = 3.14159265358979f;
  Roi roi;
  roi.center_x = box[0] + box[2] / 2;
  roi.center_y = box[1] + box[3] / 2;
  // Image y points down: the angle is measured with y flipped, as MediaPipe does.
  float r = target_degrees * kPi / 180.0f - std::atan2(-(end[1] - start[1]), end[0] - start[0]);
  r = r - 2 * kPi * std::floor((r + kPi) / (2 * kPi));  // into [-pi, pi)
  roi.rotation = r;
  roi.width = box[2];
  roi.height = box[3];
  if (square_long) roi.width = roi.height = std::max(roi.width, roi.height);
  roi.width *= scale;
  roi.height *= scale;
  return roi;
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
