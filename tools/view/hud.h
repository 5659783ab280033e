// The heads-up display: frames/s, latency per part, the engine, and the
// results drawn over the frame in the overlay's colours.
#pragma once

#include <string>
#include <vector>

#include "draw.h"
#include "overlay.h"

namespace view {

// Running averages over the frames shown (exponential, about 16 frames).
struct Stats {
  int frames = 0;
  double frames_per_second = 0.0;
  StageTimes average;
  void Add(const StageTimes& times, double frame_ms);
  // After a new engine: the next frame prepares graphs again. It and the
  // frame after it replace the averages, as the first two do, so that
  // preparing does not swamp them.
  void Restart() { replace_ = 2; }

 private:
  int replace_ = 2;
};

// The overlay in window pixels: boxes, keypoints, landmarks and their
// lines, labels, masks and heat maps.
void DrawOverlay(Canvas& canvas, const Overlay& overlay, const Frame& frame, const Placement& at);

// The HUD is a panel of kHudLines lines under the frame, its text larger
// in wider windows.
inline constexpr int kHudLines = 8;
float HudTextScale(int window_width);
float HudHeight(int window_width);
void DrawHud(Canvas& canvas, const std::vector<std::string>& lines, int window_width, int window_height);

std::string Milliseconds(double ms);

}  // namespace view
