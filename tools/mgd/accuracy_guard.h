// The fp16 accuracy guard's search (mgd tune --accuracy): which layers must
// compute in fp32 for every output of an fp16 run to stay within a budget of
// the GPU's fp32 run, on a representative input.
//
// Greedy, as a person would do it with mgd check: run fp32 once and fp16
// with the layers kept so far; while an output is past its budget, try the
// layer that grows the error most (its error over its inputs', among the
// layers the failing outputs depend on), and keep it if the outputs' excess
// shrinks by a tenth or more, else pass it over. Runs keep every tensor
// (fusion off), so each layer's error shows; fused runs store fewer
// roundings, so they meet the budget too.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {

struct GuardSearch {
  RunOptions run;       // model, backend, inputs, workgroups, fp16_arithmetic, fp32_layers to start from
  double budget = 5e-3;  // relative RMS, every output
  int max_tries = 24;   // fp16 runs with a layer added, at most
  std::string work;     // a folder for the dumps
};

struct GuardResult {
  std::string backend, device;
  std::string model_digest;              // ModelStructureDigest of the model as the interpreter holds it
  std::vector<std::string> fp32_layers;  // sorted
  nlohmann::json outputs_before, outputs_after;  // [{name, relative_rms}] against fp32
  int runs = 0;                          // fp16 runs made
  bool met = false;                      // every output within the budget
};

absl::StatusOr<GuardResult> SearchAccuracyGuard(const GuardSearch& search);

}  // namespace mgd::cli
