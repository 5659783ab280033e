#include "tuning/conv_settings.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd::tuning {

std::string ConvSettings::ToString() const {
  const std::string split = split_conv_outputs <= 1 ? "no split sums"
                                                    : fmt::format("split sums up to {} outputs", split_conv_outputs);
  return fmt::format("block {}x{}{}, {}{}, gates of {}", block_x, block_slices, flat ? " flat" : "", split,
                     split_fused && split_conv_outputs > 1 ? " (fused pairs too)" : "", gate_invocations);
}

ConvSettings ConvSettingsOf(const std::vector<const Table*>& tables, const ConvSettings& defaults) {
  ConvSettings s;
  s.block_x = FirstSet(tables, &Table::conv_block_x, defaults.block_x);
  s.block_slices = FirstSet(tables, &Table::conv_block_slices, defaults.block_slices);
  s.flat = FirstSet(tables, &Table::conv_block_flat, defaults.flat);
  s.split_conv_outputs = FirstSet(tables, &Table::split_conv_outputs, defaults.split_conv_outputs);
  s.gate_invocations = FirstSet(tables, &Table::gate_invocations, defaults.gate_invocations);
  s.split_fused = FirstSet(tables, &Table::split_fused_sums, defaults.split_fused);
  return s;
}

void SetConvSettings(Table& table, const ConvSettings& settings) {
  table.conv_block_x = settings.block_x;
  table.conv_block_slices = settings.block_slices;
  table.conv_block_flat = settings.flat;
  table.split_conv_outputs = settings.split_conv_outputs;
  table.gate_invocations = settings.gate_invocations;
  table.split_fused_sums = settings.split_fused;
}

bool SaysConvSettings(const Table& table) {
  return table.conv_block_x > 0 || table.conv_block_slices > 0 || table.conv_block_flat.has_value() ||
         table.split_conv_outputs > 0 || table.gate_invocations > 0 || table.split_fused_sums.has_value();
}

absl::StatusOr<ConvSearch> SearchConvSettings(const ConvSettings& start, const MeasureFn& measure, double min_gain) {
  ConvSearch search;
  search.start = search.best = start;
  // One step: `candidates` measured together, the first being the one to
  // beat; the settings so far become the winner.
  auto step = [&](int number, std::vector<ConvSettings> candidates) -> absl::Status {
    for (size_t i = candidates.size(); i-- > 1;) {
      if (std::find(candidates.begin(), candidates.begin() + i, candidates[i]) != candidates.begin() + i) {
        candidates.erase(candidates.begin() + i);
      }
    }
    if (candidates.size() == 1 && number > 1) return absl::OkStatus();
    auto ms = measure(candidates);
    if (!ms.ok()) return ms.status();
    if (ms->size() != candidates.size()) {
      return absl::InternalError(fmt::format("{} times for {} convolution settings", ms->size(), candidates.size()));
    }
    size_t fastest = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      search.tried.push_back({number, candidates[i], (*ms)[i]});
      if ((*ms)[i] < (*ms)[fastest]) fastest = i;
    }
    if (number == 1) search.start_ms = (*ms)[0];
    const size_t winner = (*ms)[fastest] < (*ms)[0] * (1.0 - min_gain) ? fastest : 0;
    search.best = candidates[winner];
    search.best_ms = (*ms)[winner];
    return absl::OkStatus();
  };
  auto varied = [&](auto change, std::initializer_list<int64_t> values) {
    std::vector<ConvSettings> v{search.best};
    for (int64_t value : values) {
      ConvSettings c = search.best;
      change(c, value);
      v.push_back(c);
    }
    return v;
  };
  std::vector<ConvSettings> blocks{start};
  for (int64_t slices : {1, 2}) {
    for (int64_t x : {1, 2, 4, 8}) {
      ConvSettings c = start;
      c.block_x = x;
      c.block_slices = slices;
      blocks.push_back(c);
    }
  }
  if (absl::Status s = step(1, blocks); !s.ok()) return s;
  // Flatness means nothing to a block of one output.
  if (search.best.block_x * search.best.block_slices > 1) {
    if (absl::Status s = step(2, varied([](ConvSettings& c, int64_t) { c.flat = !c.flat; }, {0})); !s.ok()) return s;
  }
  const auto split = [](ConvSettings& c, int64_t outputs) { c.split_conv_outputs = outputs; };
  if (absl::Status s = step(3, varied(split, {1, 2048, 8192, 32768})); !s.ok()) return s;
  // Whether fused pairs split means nothing where no sum splits.
  if (search.best.split_conv_outputs > 1) {
    const auto other = [](ConvSettings& c, int64_t) { c.split_fused = !c.split_fused; };
    if (absl::Status s = step(4, varied(other, {0})); !s.ok()) return s;
  }
  // Models without squeeze-and-excitation gates time alike here, and the
  // margin keeps the size they started with.
  const auto gate = [](ConvSettings& c, int64_t invocations) { c.gate_invocations = invocations; };
  if (absl::Status s = step(5, varied(gate, {128, 256, 512, 1024})); !s.ok()) return s;
  // Steps measured apart drift apart: what the steps chose must also beat
  // the start head to head.
  if (!(search.best == start)) {
    if (absl::Status s = step(6, {start, search.best}); !s.ok()) return s;
  }
  return search;
}

}  // namespace mgd::tuning
