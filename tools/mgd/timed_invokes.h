// Whole models timed end to end for mgd tune's choices among settings that
// change what a model compiles to (int8 filters, convolution blocks): each
// setting's model prepared once on its own delegate, then its invokes timed
// in rounds that alternate between the settings.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "interpreter/interpreter.h"
#include "tools/mgd/backend_choice.h"

namespace mgd::cli {

// Rounds of MedianInvokeMs per setting; the better one counts.
constexpr int kTimedRounds = 2;

struct TimedModel {
  BackendChoice backend;  // outlives the interpreter, which uses its delegate
  std::unique_ptr<Interpreter> interpreter;
};

// `graph` (read from `path`, which errors name) prepared on a delegate of
// `backend` made with `options`.
absl::StatusOr<TimedModel> PrepareTimed(const std::string& path, const Graph& graph, const GpuDelegateOptions& options,
                                        const std::string& backend);

// The median of 15 invokes after 3 untimed ones, in ms.
absl::StatusOr<double> MedianInvokeMs(const std::string& path, Interpreter& interpreter);

}  // namespace mgd::cli
