// The convolution settings a workgroup table holds beside its entries
// ("conv_block_x", "conv_block_slices", "conv_block_flat",
// "split_conv_outputs", "gate_invocations", "split_fused_sums"), and mgd
// tune --conv-settings's search over them:
// whole models timed end to end under each candidate, one setting at a time,
// since a block or a split changes which dispatches a model has, not only how
// one of them runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuning/workgroups.h"

namespace mgd::tuning {

struct ConvSettings {
  // The block of outputs a plain convolution's invocation computes
  // (shaders::OutputBlock) and whether its grid is flat.
  int64_t block_x = 1, block_slices = 1;
  bool flat = false;
  // Convolutions with at most this many output vec4s split each sum across
  // invocations (1: none does).
  int64_t split_conv_outputs = 1;
  // A squeeze-and-excitation gate's workgroup (Table::gate_invocations).
  int64_t gate_invocations = 128;
  // Whether a fused depthwise + 1x1 splits its sums as the convolution
  // would (Table::split_fused_sums).
  bool split_fused = false;
  // "block 8x2 flat, split sums up to 8192 outputs (fused pairs too), gates of 512"
  std::string ToString() const;
  bool operator==(const ConvSettings&) const = default;
};

// The settings `tables` give, in order of precedence; `defaults` where none
// says.
ConvSettings ConvSettingsOf(const std::vector<const Table*>& tables, const ConvSettings& defaults);
void SetConvSettings(Table& table, const ConvSettings& settings);
// Whether `table` sets any of the six fields.
bool SaysConvSettings(const Table& table);

// The end-to-end time (ms, summed over the models) of each of `candidates`,
// measured together so that the machine's drift falls on all of them alike.
using MeasureFn = std::function<absl::StatusOr<std::vector<double>>(const std::vector<ConvSettings>& candidates)>;

struct ConvSearch {
  ConvSettings start, best;
  double start_ms = 0, best_ms = 0;  // as measured in the first and last step
  struct Tried {
    int step = 0;
    ConvSettings settings;
    double ms = 0;
  };
  std::vector<Tried> tried;
};

// Steps, each measuring the settings so far against their variations: the
// block (1, 2, 4, 8 pixels by 1, 2 slices), then the other flatness (for a
// block of more than one output), then split sums (none, or up to 2048,
// 8192 or 32768 outputs), then the other split_fused (where sums split),
// then the gates' workgroup (128, 256, 512 or 1024 invocations); last,
// what they chose against `start`. A
// variation replaces the settings so far only when it is faster by
// `min_gain` (a fraction) in the same step, so that noise does not move a
// table.
absl::StatusOr<ConvSearch> SearchConvSettings(const ConvSettings& start, const MeasureFn& measure, double min_gain = 0.02);

}  // namespace mgd::tuning
