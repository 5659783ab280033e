#include "delegate/tune.h"

#include <fmt/format.h>

#include <algorithm>

#include "delegate/workgroups.h"
#include "tuning/tuner.h"

namespace mgd {
namespace {

bool Tunable(const CompiledDispatch& d) { return d.grid != std::array<uint32_t, 3>{0, 0, 0}; }

// Keeps the first (the default) and an even spread of the rest, `limit` in all.
std::vector<tuning::Workgroup> Spread(const std::vector<tuning::Workgroup>& all, size_t limit) {
  limit = std::max<size_t>(limit, 1);
  if (all.size() <= limit) return all;
  std::vector<tuning::Workgroup> kept{all[0]};
  const size_t rest = all.size() - 1, want = limit - 1;
  for (size_t k = 0; k < want; ++k) kept.push_back(all[1 + k * rest / want]);
  return kept;
}

}  // namespace

void TuningRecorder::Prepared(const PreparedView& view) {
  records_.push_back({view.compiled.dispatches, view.prepared.execution.dispatches, &view.device, view.alive});
}

absl::StatusOr<double> TuningRecorder::TimeWorkgroup(size_t partition, size_t dispatch, const tuning::Workgroup& workgroup,
                                                     int repeats) const {
  if (partition >= records_.size() || records_[partition].alive.expired()) {
    return absl::FailedPreconditionError(fmt::format("partition {} is not prepared for tuning", partition));
  }
  const Record& record = records_[partition];
  if (dispatch >= record.compiled.size() || !Tunable(record.compiled[dispatch])) {
    return absl::InvalidArgumentError(fmt::format("dispatch {} of partition {} has a fixed workgroup", dispatch, partition));
  }
  gpu::Device& device = *record.device;
  CompiledDispatch cd = record.compiled[dispatch];
  cd.code.workgroup = workgroup;
  auto program = device.CreateProgram({cd.code.name, shaders::Emit(DialectOf(device.info().api), cd.code),
                                       static_cast<uint32_t>(cd.bindings.size()), shaders::ParamsBytes(cd.code), 0, {}});
  if (!program.ok()) return program.status();
  gpu::Dispatch d = record.realized[dispatch];
  d.program = program->get();
  d.groups = GroupsFor(cd.grid, workgroup);
  auto recording = device.Record({d}, gpu::RecordOptions{true});
  if (!recording.ok()) return recording.status();
  std::vector<double> us;
  for (int i = 0; i < repeats + 2; ++i) {
    if (absl::Status s = device.Run(**recording); !s.ok()) return s;
    const std::vector<double> ns = (*recording)->dispatch_ns();
    if (ns.empty()) return absl::FailedPreconditionError("the device has no timestamps: nothing to tune with");
    if (i >= 2) us.push_back(ns[0] / 1000);
  }
  std::nth_element(us.begin(), us.begin() + static_cast<long>(us.size() / 2), us.end());
  return us[us.size() / 2];
}

absl::StatusOr<TuneSummary> TunePrepared(const TuningRecorder& recorder, const gpu::GpuInfo& info,
                                         size_t first_partition, const TuneOptions& options,
                                         std::map<std::string, tuning::Entry>& done, tuning::Table& table) {
  size_t total = 0, seen = 0;
  for (size_t p = first_partition; p < recorder.partitions(); ++p) {
    for (const CompiledDispatch& d : recorder.dispatches(p)) total += Tunable(d);
  }
  TuneSummary summary;
  for (size_t p = first_partition; p < recorder.partitions(); ++p) {
    const std::vector<CompiledDispatch>& dispatches = recorder.dispatches(p);
    for (size_t i = 0; i < dispatches.size(); ++i) {
      const CompiledDispatch& d = dispatches[i];
      if (!Tunable(d)) continue;
      ++summary.dispatches;
      const std::string key = d.key.ToString();
      if (!done.count(key)) {
        auto time = [&](const tuning::Workgroup& wg, int repeats) { return recorder.TimeWorkgroup(p, i, wg, repeats); };
        const tuning::Workgroup fallback = tuning::DefaultWorkgroup(d.grid, info);
        auto ranked = tuning::SuccessiveHalving(Spread(tuning::Candidates(d.grid, info.limits, fallback), options.max_candidates), time);
        if (!ranked.ok()) return ranked.status();
        // The winner and the default side by side, with the most repeats.
        tuning::Entry entry{d.key, false, ranked->front().workgroup, 0, 0};
        auto default_us = time(fallback, options.final_repeats);
        if (!default_us.ok()) return default_us.status();
        entry.default_us = entry.time_us = *default_us;
        if (entry.workgroup != fallback) {
          auto us = time(entry.workgroup, options.final_repeats);
          if (!us.ok()) return us.status();
          entry.time_us = *us;
        }
        if (entry.time_us >= entry.default_us * 0.99) {  // no measurable gain: keep the default
          entry.workgroup = fallback;
          entry.time_us = entry.default_us;
        }
        done[key] = entry;
        tuning::Merge(table, entry);
        ++summary.tuned;
      }
      summary.default_us += done[key].default_us;
      summary.tuned_us += done[key].time_us;
      if (options.progress) options.progress(++seen, total);
    }
  }
  return summary;
}

}  // namespace mgd
