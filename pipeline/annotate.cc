#include "pipeline/annotate.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace mgd::pipeline {
namespace {

struct Canvas {
  Image& image;
  void Dot(int x, int y, const uint8_t* rgb) {
    if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
    uint8_t* p = &image.pixels[(static_cast<size_t>(y) * image.width + x) * 3];
    std::copy(rgb, rgb + 3, p);
  }
  void Fill(float x0, float y0, float x1, float y1, const uint8_t* rgb) {
    const int xa = std::max(0, static_cast<int>(std::floor(x0))), xb = std::min(image.width, static_cast<int>(std::ceil(x1)));
    const int ya = std::max(0, static_cast<int>(std::floor(y0))), yb = std::min(image.height, static_cast<int>(std::ceil(y1)));
    for (int y = ya; y < yb; ++y)
      for (int x = xa; x < xb; ++x) Dot(x, y, rgb);
  }
  void Line(float x0, float y0, float x1, float y1, float r, const uint8_t* rgb) {
    const int steps = std::max(1, static_cast<int>(std::hypot(x1 - x0, y1 - y0) / std::max(0.5f, r)));
    for (int i = 0; i <= steps; ++i) {
      const float t = static_cast<float>(i) / static_cast<float>(steps);
      Disc(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, r, rgb);
    }
  }
  void Disc(float cx, float cy, float r, const uint8_t* rgb) {
    for (int y = static_cast<int>(cy - r); y <= static_cast<int>(cy + r); ++y)
      for (int x = static_cast<int>(cx - r); x <= static_cast<int>(cx + r); ++x) {
        const float dx = static_cast<float>(x) + 0.5f - cx, dy = static_cast<float>(y) + 0.5f - cy;
        if (dx * dx + dy * dy <= r * r) Dot(x, y, rgb);
      }
  }
};

}  // namespace

Image Annotate(const Image& image, const Result& result, const SolutionSpec& spec) {
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.channels = 3;
  out.pixels.resize(static_cast<size_t>(image.width) * image.height * 3);
  for (size_t i = 0, n = static_cast<size_t>(image.width) * image.height; i < n; ++i) {
    std::copy_n(&image.pixels[i * static_cast<size_t>(image.channels)], 3, &out.pixels[i * 3]);
  }
  Canvas canvas{out};
  static const uint8_t kBox[3] = {40, 220, 80}, kPoint[3] = {255, 60, 40}, kLandmark[3] = {80, 200, 255},
                       kLink[3] = {250, 250, 250}, kMask[3] = {170, 60, 255};
  if (result.mask && result.mask->width == image.width && result.mask->height == image.height) {
    for (size_t i = 0; i < result.mask->values.size(); ++i) {
      const float a = 0.55f * std::clamp(result.mask->values[i], 0.0f, 1.0f);
      for (int k = 0; k < 3; ++k) {
        uint8_t& v = out.pixels[i * 3 + static_cast<size_t>(k)];
        v = static_cast<uint8_t>(std::lround(static_cast<float>(v) * (1.0f - a) + static_cast<float>(kMask[k]) * a));
      }
    }
  }
  const float t = std::max(2.0f, static_cast<float>(std::max(image.width, image.height)) / 256.0f);
  const std::vector<std::pair<int, int>> none;
  const auto& links = spec.landmarks ? spec.landmarks->connections : none;
  for (const Detection& d : result.detections) {
    for (const auto& [a, b] : links) {
      const auto ua = static_cast<size_t>(a);
      const auto ub = static_cast<size_t>(b);
      auto visible = [&](size_t i) { return i >= d.visibility.size() || d.visibility[i] >= kMinVisibility; };
      if (ua < d.landmarks.size() && ub < d.landmarks.size() && visible(ua) && visible(ub)) {
        canvas.Line(d.landmarks[ua][0], d.landmarks[ua][1], d.landmarks[ub][0], d.landmarks[ub][1], t * 0.35f, kLink);
      }
    }
    const float x0 = d.box[0], y0 = d.box[1], x1 = d.box[0] + d.box[2], y1 = d.box[1] + d.box[3];
    canvas.Fill(x0 - t / 2, y0 - t / 2, x1 + t / 2, y0 + t / 2, kBox);
    canvas.Fill(x0 - t / 2, y1 - t / 2, x1 + t / 2, y1 + t / 2, kBox);
    canvas.Fill(x0 - t / 2, y0, x0 + t / 2, y1, kBox);
    canvas.Fill(x1 - t / 2, y0, x1 + t / 2, y1, kBox);
    for (size_t i = 0; i < d.landmarks.size(); ++i) {
      if (i < d.visibility.size() && d.visibility[i] < kMinVisibility) continue;
      canvas.Disc(d.landmarks[i][0], d.landmarks[i][1], t * (links.empty() ? 0.4f : 0.8f), kLandmark);
    }
    for (const auto& p : d.keypoints) canvas.Disc(p[0], p[1], t * 1.5f, kPoint);
  }
  return out;
}

}  // namespace mgd::pipeline
