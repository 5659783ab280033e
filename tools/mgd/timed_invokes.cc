#include "tools/mgd/timed_invokes.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "model/status_macros.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {

absl::StatusOr<TimedModel> PrepareTimed(const std::string& path, const Graph& graph, const GpuDelegateOptions& options,
                                        const std::string& backend) {
  TimedModel m;
  MGD_ASSIGN_OR_RETURN(m.backend, ChooseBackend(backend, options));
  if (m.backend.delegate == nullptr) return absl::FailedPreconditionError("no GPU found");
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(m.backend.delegate.get());
  auto interpreter = Interpreter::Create(graph, std::move(interpreter_options));
  if (!interpreter.ok()) return WithModelPath(path, interpreter.status());
  m.interpreter = std::move(*interpreter);
  return m;
}

absl::StatusOr<double> MedianInvokeMs(const std::string& path, Interpreter& interpreter) {
  constexpr int kWarmup = 3, kRuns = 15;
  std::vector<double> ms;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = interpreter.Invoke(); !s.ok()) return WithModelPath(path, s);
    if (i >= kWarmup) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return ms[kRuns / 2];
}

}  // namespace mgd::cli
