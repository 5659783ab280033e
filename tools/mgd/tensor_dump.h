// `mgd run --dump-tensors`: writes the tensors of a run, and compares two
// such dumps (see cmd_tensors.cc).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "delegate/observer.h"
#include "interpreter/interpreter.h"

namespace mgd::cli {

// Every float32 tensor of the last Invoke as DIR/<name>.npy and the list in
// execution order as DIR/tensors.json. `gpu_tensors` (null without a GPU
// delegate) observed the delegate's prepares; the interpreter was created
// with preserve_all_tensors.
absl::Status DumpTensors(const Interpreter& interpreter, const TensorKeeper* gpu_tensors, const std::string& dir,
                         const std::string& backend);

// The tensors of dump `a` that dump `b` has too (by name), in `a`'s order:
// {"a_backend", "b_backend", "tensors": [{name, op, shape, node, tensor,
// max_abs_error, relative_rms (of a against b; "nan"/"inf" when not
// finite) or error (sizes differ)}]}.
absl::StatusOr<nlohmann::json> DiffDumps(const std::string& a, const std::string& b);
// Whether a row of DiffDumps is past `threshold` (or not finite, or unequal in size).
bool Diverges(const nlohmann::json& row, double threshold);

}  // namespace mgd::cli
