// Checks what `mgd view --screenshot` drew, at places the test gets from
// another source (the CLI's own `mgd pipeline --json`), mapped into the
// window through the placement the viewer reports in its --json line.
//   screenshot_check SHOT.png VIEW.json box X Y W H
//       a box outline (the viewer's green) along the rectangle
//   screenshot_check SHOT.png VIEW.json tint ORIGINAL.png INX INY OUTX OUTY
//       the frame changed (a mask's tint) at IN, and at OUT less than a third as much
//   screenshot_check SHOT.png VIEW.json heat ORIGINAL.png INX INY OUTX OUTY
//       a heat map's hot end (red) at IN, its cold end (blue) at OUT
// Exit 0 when the check holds, 1 (saying why) when not.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/image.h"

namespace {

using mgd::pipeline::Image;

struct Placement {
  double x = 0, y = 0, scale = 1;
};

const uint8_t* Pixel(const Image& image, int x, int y) {
  x = std::clamp(x, 0, image.width - 1);
  y = std::clamp(y, 0, image.height - 1);
  return &image.pixels[(static_cast<size_t>(y) * image.width + x) * image.channels];
}

bool IsBoxGreen(const uint8_t* p) { return p[1] > 180 && p[0] < 120 && p[2] < 140; }

// Mean of `f(shot pixel, original pixel)` over a 9x9 patch around an image point.
template <typename F>
double Patch(const Image& shot, const Image& original, const Placement& at, double x, double y, F f) {
  double sum = 0;
  int n = 0;
  for (int dy = -4; dy <= 4; ++dy) {
    for (int dx = -4; dx <= 4; ++dx) {
      const int ox = static_cast<int>(x) + dx, oy = static_cast<int>(y) + dy;
      const int sx = static_cast<int>(at.x + ox * at.scale), sy = static_cast<int>(at.y + oy * at.scale);
      sum += f(Pixel(shot, sx, sy), Pixel(original, ox, oy));
      ++n;
    }
  }
  return sum / n;
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "screenshot_check: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Fail("usage: SHOT.png VIEW.json box|tint|heat ...");
  auto shot = mgd::pipeline::ReadImage(argv[1]);
  if (!shot.ok()) return Fail(std::string(shot.status().message()));
  std::ifstream json_file(argv[2]);
  const nlohmann::json view = nlohmann::json::parse(json_file, nullptr, false);
  if (view.is_discarded() || !view.contains("placement")) return Fail(std::string(argv[2]) + ": no placement");
  const Placement at{view["placement"]["x"], view["placement"]["y"], view["placement"]["scale"]};
  const std::string what = argv[3];
  if (what == "box" && argc == 8) {
    const double x = std::atof(argv[4]), y = std::atof(argv[5]), w = std::atof(argv[6]), h = std::atof(argv[7]);
    int found = 0, samples = 0;
    for (int i = 0; i <= 40; ++i) {
      const double t = i / 40.0;
      const double points[4][2] = {{x + t * w, y}, {x + t * w, y + h}, {x, y + t * h}, {x + w, y + t * h}};
      for (const auto& p : points) {
        bool near = false;
        const int cx = static_cast<int>(at.x + p[0] * at.scale), cy = static_cast<int>(at.y + p[1] * at.scale);
        for (int dy = -3; dy <= 3 && !near; ++dy) {
          for (int dx = -3; dx <= 3 && !near; ++dx) near = IsBoxGreen(Pixel(*shot, cx + dx, cy + dy));
        }
        found += near ? 1 : 0;
        ++samples;
      }
    }
    if (found < samples * 0.85) return Fail("the box outline is at " + std::to_string(found) + " of " + std::to_string(samples) + " places");
    return 0;
  }
  if ((what == "tint" || what == "heat") && argc == 9) {
    auto original = mgd::pipeline::ReadImage(argv[4]);
    if (!original.ok()) return Fail(std::string(original.status().message()));
    const double in_x = std::atof(argv[5]), in_y = std::atof(argv[6]), out_x = std::atof(argv[7]), out_y = std::atof(argv[8]);
    if (what == "tint") {
      auto change = [](const uint8_t* s, const uint8_t* o) {
        return (std::abs(s[0] - o[0]) + std::abs(s[1] - o[1]) + std::abs(s[2] - o[2])) / 3.0;
      };
      const double in = Patch(*shot, *original, at, in_x, in_y, change);
      const double out = Patch(*shot, *original, at, out_x, out_y, change);
      std::printf("tint: %.1f inside, %.1f outside\n", in, out);
      if (in < 25.0 || out > in / 3.0) return Fail("no mask tint where expected (" + std::to_string(in) + " inside, " + std::to_string(out) + " outside)");
      return 0;
    }
    // Red minus blue that the heat map added over the frame.
    auto warmth = [](const uint8_t* s, const uint8_t* o) { return (s[0] - o[0]) - (s[2] - o[2]); };
    const double in = Patch(*shot, *original, at, in_x, in_y, warmth);
    const double out = Patch(*shot, *original, at, out_x, out_y, warmth);
    std::printf("heat: %.1f inside, %.1f outside\n", in, out);
    if (in < 20.0 || out > -40.0) return Fail("no heat map's hot inside and cold outside (" + std::to_string(in) + ", " + std::to_string(out) + ")");
    return 0;
  }
  return Fail("usage: SHOT.png VIEW.json box X Y W H | tint|heat ORIGINAL.png INX INY OUTX OUTY");
}
