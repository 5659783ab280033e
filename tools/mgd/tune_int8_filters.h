// mgd tune's choice of how int8 models' filters are stored on the GPU
// (tuning::Table's "int8_filter_bits" and, where the device has integer dot
// products, "int8_dot_products", for the precision tuned): the models with
// 8-bit filters among those tuned, each timed end to end with them 8-bit,
// 8-bit in dot products, and as floats, in turn, over the freshly tuned
// workgroups; the fastest in sum wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/mgd/commands.h"
#include "tuning/workgroups.h"

namespace mgd::cli {

struct Int8FilterChoice {
  int64_t bits = 0;  // 8 or 32; 0: no model with 8-bit filters
  size_t models = 0;
  // Summed over the models: each one's median invoke, the better round's.
  double int8_ms = 0, float_ms = 0;
  // Where the device has integer dot products: their sum, and whether they
  // won (then bits is 8).
  std::optional<double> dot_ms;
  bool dot = false;
};

// Measures `models` on `backend` with `run`'s precision and `table`; sets
// the table's field for that storage precision when any model has 8-bit
// filters.
absl::StatusOr<Int8FilterChoice> TuneInt8Filters(const std::vector<std::string>& models, const RunOptions& run,
                                                 const std::string& backend, tuning::Table& table);

}  // namespace mgd::cli
