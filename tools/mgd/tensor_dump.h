// `mgd run --dump-tensors`: writes the tensors of a run (see cmd_tensors.cc).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "delegate/observer.h"
#include "interpreter/interpreter.h"

namespace mgd::cli {

// Every float32 tensor of the last Invoke as DIR/<name>.npy and the list in
// execution order as DIR/tensors.json. `gpu_tensors` (null without a GPU
// delegate) observed the delegate's prepares; the interpreter was created
// with preserve_all_tensors.
absl::Status DumpTensors(const Interpreter& interpreter, const TensorKeeper* gpu_tensors, const std::string& dir,
                         const std::string& backend);

}  // namespace mgd::cli
