// mgd tune --conv-settings: the convolution settings of a GPU's table (the
// block of outputs per invocation, its flat grid, split sums) searched with
// the given models timed end to end (tuning/conv_settings.h), before their
// workgroups are tuned under the settings chosen. Every candidate runs with
// the default calculator's workgroups, the built-in table's entries set
// aside: they were tuned for its own settings' grids.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/mgd/commands.h"
#include "tuning/conv_settings.h"

namespace mgd::cli {

// Searches from `start` (the settings the models would compile with now) on
// `backend` with `run`'s precision; the settings chosen go into `table`.
absl::StatusOr<tuning::ConvSearch> TuneConvSettings(const std::vector<std::string>& models, const RunOptions& run,
                                                    const std::string& backend, const tuning::ConvSettings& start,
                                                    tuning::Table& table);

}  // namespace mgd::cli
