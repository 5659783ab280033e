// The tuner's loop over a prepared model: each tunable dispatch not tuned
// yet (by key) gets its candidate workgroups timed alone on the GPU
// (tuning/tuner.h), and the winner, with the default calculator's time
// beside it, goes into a table.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "delegate/observer.h"
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

// Keeps each prepared partition's dispatches, as compiled and as realized,
// so that variants of one can be timed alone.
class TuningRecorder : public PrepareObserver {
 public:
  void Prepared(const PreparedView& view) override;
  size_t partitions() const { return records_.size(); }
  const std::vector<CompiledDispatch>& dispatches(size_t partition) const { return records_.at(partition).compiled; }
  // The median GPU time in microseconds of `repeats` runs of dispatch
  // `dispatch` of prepared partition `partition` alone, built with
  // `workgroup` (after two untimed runs).
  absl::StatusOr<double> TimeWorkgroup(size_t partition, size_t dispatch, const tuning::Workgroup& workgroup,
                                       int repeats) const;

 private:
  struct Record {
    std::vector<CompiledDispatch> compiled;
    std::vector<gpu::Dispatch> realized;  // over buffers the kernel owns, alive while `alive` is
    gpu::Device* device = nullptr;
    std::weak_ptr<bool> alive;
  };
  std::vector<Record> records_;
};

// Tunes the partitions `recorder` saw prepared from index `first_partition`
// on. `done` carries results across models by key string; new entries are
// merged into `table`.
absl::StatusOr<TuneSummary> TunePrepared(const TuningRecorder& recorder, const gpu::GpuInfo& info,
                                         size_t first_partition, const TuneOptions& options,
                                         std::map<std::string, tuning::Entry>& done, tuning::Table& table);

}  // namespace mgd
