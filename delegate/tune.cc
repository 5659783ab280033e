#include "delegate/tune.h"

#include "tuning/tuner.h"

namespace mgd {
namespace {

bool Tunable(const GpuDelegate::DispatchInfo& d) { return d.grid != std::array<uint32_t, 3>{0, 0, 0}; }

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

absl::StatusOr<TuneSummary> TunePrepared(GpuDelegate& delegate, size_t first_partition, const TuneOptions& options,
                                         std::map<std::string, tuning::Entry>& done, tuning::Table& table) {
  const gpu::GpuInfo& info = delegate.device().info();
  const auto& partitions = delegate.dispatch_infos();
  size_t total = 0, seen = 0;
  for (size_t p = first_partition; p < partitions.size(); ++p) {
    for (const auto& d : partitions[p]) total += Tunable(d);
  }
  TuneSummary summary;
  for (size_t p = first_partition; p < partitions.size(); ++p) {
    for (size_t i = 0; i < partitions[p].size(); ++i) {
      const GpuDelegate::DispatchInfo& d = partitions[p][i];
      if (!Tunable(d)) continue;
      ++summary.dispatches;
      const std::string key = d.key.ToString();
      if (!done.count(key)) {
        auto time = [&](const tuning::Workgroup& wg, int repeats) { return delegate.TimeWorkgroup(p, i, wg, repeats); };
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
