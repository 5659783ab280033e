#include "tuning/tuner.h"

#include <algorithm>

namespace mgd::tuning {

std::vector<Workgroup> Candidates(const std::array<uint32_t, 3>& grid, const gpu::GpuLimits& limits, const Workgroup& always) {
  std::vector<Workgroup> out{always};
  const uint64_t volume = uint64_t{std::max(grid[0], 1u)} * std::max(grid[1], 1u) * std::max(grid[2], 1u);
  for (uint32_t x = 1; x <= 256; x *= 2) {
    for (uint32_t y = 1; x * y <= 256; y *= 2) {
      for (uint32_t z = 1; x * y * z <= 256; z *= 2) {
        const Workgroup wg{x, y, z};
        const uint64_t n = uint64_t{x} * y * z;
        if (n < 16 && n < volume) continue;  // too small to keep a GPU busy
        if (!Fits(wg, limits) || std::find(out.begin(), out.end(), wg) != out.end()) continue;
        double padded = 1;
        bool oversized = false;
        for (size_t i = 0; i < 3; ++i) {
          const uint32_t g = std::max(grid[i], 1u);
          oversized = oversized || (wg[i] > 1 && wg[i] / 2 >= g);  // half the axis would already cover it
          padded *= static_cast<double>((g + wg[i] - 1) / wg[i] * wg[i]);
        }
        if (!oversized && padded <= 2.0 * static_cast<double>(volume)) out.push_back(wg);
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<Measured>> SuccessiveHalving(std::vector<Workgroup> candidates, const TimeFn& time, int repeats,
                                                        int final_repeats) {
  std::vector<Measured> round;
  while (true) {
    round.clear();
    absl::Status first_error;
    for (const Workgroup& wg : candidates) {
      auto us = time(wg, repeats);
      if (!us.ok()) {  // a workgroup the driver refuses is no candidate
        if (first_error.ok()) first_error = us.status();
        continue;
      }
      round.push_back({wg, *us});
    }
    if (round.empty()) return first_error;
    std::stable_sort(round.begin(), round.end(), [](const Measured& a, const Measured& b) { return a.us < b.us; });
    if (round.size() <= 1 || repeats >= final_repeats) return round;
    round.resize((round.size() + 1) / 2);
    candidates.clear();
    for (const Measured& m : round) candidates.push_back(m.workgroup);
    repeats *= 2;
  }
}

}  // namespace mgd::tuning
