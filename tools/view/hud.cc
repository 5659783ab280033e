#include "hud.h"

#include <algorithm>
#include <cstdio>

namespace view {
namespace {

constexpr Color kBox = {0.1f, 1.0f, 0.25f, 1.0f};
constexpr Color kKeypoint = {1.0f, 0.85f, 0.1f, 1.0f};
constexpr Color kLandmark = {1.0f, 0.25f, 0.25f, 1.0f};
constexpr Color kConnection = {0.95f, 0.95f, 0.95f, 0.9f};
constexpr Color kMaskTint = {0.6f, 0.15f, 0.95f, 0.45f};
constexpr Color kPanel = {0.0f, 0.0f, 0.0f, 0.6f};
constexpr Color kText = {1.0f, 1.0f, 1.0f, 1.0f};
constexpr float kLabelScale = 1.5f;
constexpr float kGlyphHeight = 12.0f;  // stb_easy_font's line spacing

void Blend(double& average, double value) { average += (value - average) / 16.0; }

}  // namespace

void Stats::Add(const StageTimes& times, double frame_ms) {
  ++frames;
  const double fps = frame_ms > 0.0 ? 1000.0 / frame_ms : 0.0;
  if (replace_ > 0) {
    --replace_;
    average = times;
    frames_per_second = fps;
    return;
  }
  Blend(average.pre, times.pre);
  Blend(average.model, times.model);
  Blend(average.post, times.post);
  Blend(frames_per_second, fps);
}

std::string Milliseconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), ms < 10.0 ? "%.2f ms" : "%.1f ms", ms);
  return text;
}

void DrawOverlay(Canvas& canvas, const Overlay& overlay, const Frame& frame, const Placement& at) {
  if (!overlay.heat.empty()) canvas.DrawHeat(overlay.heat, frame, at);
  if (overlay.gpu_heat.buffer != 0) canvas.DrawHeatFromBuffer(overlay.gpu_heat, frame, at);
  if (!overlay.mask.empty()) canvas.DrawMask(overlay.mask, frame, at, kMaskTint);
  // Dense meshes (face_mesh's 478 points) get smaller dots than skeletons.
  const float dot = overlay.landmarks.size() > 100 ? 1.0f : 3.0f;
  for (const auto& l : overlay.lines) {
    const auto [x0, y0] = at(l[0], l[1]);
    const auto [x1, y1] = at(l[2], l[3]);
    canvas.Line(x0, y0, x1, y1, 2.0f, kConnection);
  }
  for (const auto& p : overlay.landmarks) {
    const auto [x, y] = at(p[0], p[1]);
    canvas.Dot(x, y, dot, kLandmark);
  }
  for (const auto& p : overlay.keypoints) {
    const auto [x, y] = at(p[0], p[1]);
    canvas.Dot(x, y, dot + 1.0f, kKeypoint);
  }
  for (const auto& b : overlay.boxes) {
    const auto [x, y] = at(b[0], b[1]);
    canvas.Outline(x, y, b[2] * at.scale, b[3] * at.scale, 3.0f, kBox);
  }
  for (const auto& [p, text] : overlay.labels) {
    const auto [x, y] = at(p[0], p[1]);
    canvas.Text(std::max(0.0f, x) + 2.0f, std::max(0.0f, y - kGlyphHeight * kLabelScale), text, kLabelScale, kBox);
  }
}

float HudTextScale(int window_width) { return window_width >= 900 ? 1.5f : 1.0f; }

float HudHeight(int window_width) { return kGlyphHeight * HudTextScale(window_width) * kHudLines + 8.0f; }

void DrawHud(Canvas& canvas, const std::vector<std::string>& lines, int window_width, int window_height) {
  const float scale = HudTextScale(window_width), top = window_height - HudHeight(window_width);
  canvas.Rect(0.0f, top, static_cast<float>(window_width), HudHeight(window_width), kPanel);
  float y = top + 5.0f;
  for (size_t i = 0; i < lines.size() && i < kHudLines; ++i) {
    canvas.Text(6.0f, y, lines[i], scale, kText);
    y += kGlyphHeight * scale;
  }
}

}  // namespace view
