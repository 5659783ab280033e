// The tuner's loop over a prepared model: each tunable dispatch not tuned
// yet (by key) gets its candidate workgroups timed alone on the GPU
// (tuning/tuner.h), and the winner, with the default calculator's time
// beside it, goes into a table.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "delegate/gpu_delegate.h"
#include "tuning/workgroups.h"

namespace mgd {

struct TuneOptions {
  size_t max_candidates = 24;        // workgroups tried per dispatch at most
  int final_repeats = 48;            // runs timing the winner and the default
  std::function<void(size_t done, size_t total)> progress;  // optional
};

struct TuneSummary {
  size_t dispatches = 0, tuned = 0;  // tunable dispatches; those newly measured
  double default_us = 0, tuned_us = 0;  // summed over the dispatches
};

// Tunes the partitions `delegate` prepared from index `first_partition` on
// (it must have been created with options.tuning). `done` carries results
// across models by key string; new entries are merged into `table`.
absl::StatusOr<TuneSummary> TunePrepared(GpuDelegate& delegate, size_t first_partition, const TuneOptions& options,
                                         std::map<std::string, tuning::Entry>& done, tuning::Table& table);

}  // namespace mgd
