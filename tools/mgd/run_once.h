// One run of a model as `mgd run` does it (load, prepare, feed the --input
// files, invoke once, --dump-tensors), kept for the caller to read: run
// prints it, check runs it twice and compares.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "delegate/observer.h"
#include "interpreter/interpreter.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {

struct RunResult {
  // Declared in the order they must outlive each other: the tensor keeper
  // observes the delegate, which the interpreter uses.
  std::unique_ptr<TensorKeeper> tensors;
  BackendChoice backend;
  std::unique_ptr<Interpreter> interpreter;
  RunOptions options;     // as run: a compiled model's backend and precision filled in
  std::string precision;  // what ran: the CPU path is fp32 whatever was asked
  double read_ms = 0, device_ms = 0, prepare_ms = 0, run_ms = 0;  // device_ms: making the delegate and its device
  InvokeTiming timing;  // the invoke's own account (measure_timing)
};

absl::StatusOr<RunResult> RunOnce(const RunOptions& options);

}  // namespace mgd::cli
