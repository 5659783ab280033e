// The fp16 accuracy guard's search (mgd tune --accuracy): which layers must
// compute in fp32 for every output of an fp16 run to stay within a budget of
// the GPU's fp32 run, on a representative input.
//
// As a person would do it with mgd check: run fp32 once and fp16 with the
// layers kept so far. First one layer at a time: while an output is past
// its budget, try the layer that grows the error most (its error over its
// inputs', among the layers the failing outputs depend on), and keep it if
// the outputs' excess shrinks by a tenth or more, else pass it over. Where
// that is not enough (error built up over many layers and amplified by a
// head), every layer in fp32 gives each output its floor, the error of fp16
// storage alone; an output whose floor is past the budget is held to a
// quarter above its floor, and a bisection finds the fewest of the largest
// growths that meet those targets. The outputs are judged as the model runs
// (fused); the layers' growth comes from runs that keep every tensor (fusion
// off), where each layer's error shows.
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
  int max_single_tries = 8;  // fp16 runs with one layer added, at most
  std::string work;     // a folder for the dumps
};

struct GuardResult {
  std::string backend, device;
  std::string model_digest;              // ModelStructureDigest of the model as the interpreter holds it
  std::vector<std::string> fp32_layers;  // sorted
  nlohmann::json outputs_before, outputs_after;  // [{name, relative_rms}] against fp32
  nlohmann::json storage_bound = nlohmann::json::array();  // [{name, floor}]: outputs whose floor is past the budget
  int runs = 0;                          // fp16 runs made
  bool met = false;                      // every output within its target
};

absl::StatusOr<GuardResult> SearchAccuracyGuard(const GuardSearch& search);

}  // namespace mgd::cli
