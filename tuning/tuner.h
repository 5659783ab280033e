// The tuner's core, independent of how a dispatch is run: the candidate
// workgroups for a grid and successive halving over them with a timing
// function the caller provides (mgd tune times single dispatches of a
// prepared model on the GPU with timestamps).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "tuning/workgroups.h"

namespace mgd::tuning {

// Powers of two per axis with 16..256 invocations (and no more than the grid
// needs), within the limits, padding the grid by at most 2x; `always` (the
// default calculator's choice) is included.
std::vector<Workgroup> Candidates(const std::array<uint32_t, 3>& grid, const gpu::GpuLimits& limits, const Workgroup& always);

// Median GPU time in microseconds of `repeats` runs of the dispatch with a
// workgroup.
using TimeFn = std::function<absl::StatusOr<double>(const Workgroup& workgroup, int repeats)>;

struct Measured {
  Workgroup workgroup{};
  double us = 0;
};

// Times every candidate with `repeats` runs, keeps the faster half, doubles
// the repeats, until one is left (or the round with `final_repeats` ran).
// Returns the survivors of the last round, fastest first. A candidate whose
// timing fails drops out; if all fail, the first error is returned.
absl::StatusOr<std::vector<Measured>> SuccessiveHalving(std::vector<Workgroup> candidates, const TimeFn& time,
                                                        int repeats = 3, int final_repeats = 24);

}  // namespace mgd::tuning
