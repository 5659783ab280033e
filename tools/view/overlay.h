// What the viewer draws over a frame, in the frame's pixels.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace view {

// Values over the frame (a mask's probabilities or a model's output),
// shown as a tint or a heat map; `lo`..`hi` maps to the colour ramp.
struct Grid {
  int width = 0, height = 0;
  std::vector<float> values;
  float lo = 0.0f, hi = 1.0f;
  bool empty() const { return values.empty(); }
};

// A plain model's output left on the GPU, in a GL buffer the window shares
// with the delegate (BHWC float32): drawn from there, never read back.
struct GpuGrid {
  unsigned buffer = 0;  // GL buffer name; 0: none
  int width = 0, height = 0, channels = 0;
  float lo = 0.0f, hi = 1.0f;
};

struct Overlay {
  std::vector<std::array<float, 4>> boxes;      // x, y, width, height
  std::vector<std::array<float, 2>> keypoints;  // the detector's
  std::vector<std::array<float, 2>> landmarks;
  std::vector<std::array<float, 4>> lines;      // x0, y0, x1, y1: landmarks joined
  std::vector<std::pair<std::array<float, 2>, std::string>> labels;  // text at a place
  Grid mask;                       // a tint over the object (selfie, pose)
  Grid heat;                       // a plain model's output
  GpuGrid gpu_heat;                // ... or the same, on the GPU
  std::vector<std::string> notes;  // the HUD's extra lines (a classifier's top classes)
};

// Milliseconds one frame spent in each part.
struct StageTimes {
  double pre = 0.0;    // getting the frame, uploading it, the input tensor
  double model = 0.0;  // the models' invokes
  double post = 0.0;   // the host's part of the results and drawing them
};

}  // namespace view
