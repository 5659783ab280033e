// `mgd run --dump-tensors`: writes the tensors of a run (see cmd_tensors.cc).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"

namespace mgd::cli {

// Every float32 tensor of the last Invoke as DIR/<name>.npy and the list in
// execution order as DIR/tensors.json. `delegate` (may be null) must have been
// created with keep_tensors, the interpreter with preserve_all_tensors.
absl::Status DumpTensors(const Interpreter& interpreter, GpuDelegate* delegate, const std::string& dir, const std::string& backend);

}  // namespace mgd::cli
