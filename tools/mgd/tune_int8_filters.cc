#include "tools/mgd/tune_int8_filters.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/backend_choice.h"

namespace mgd::cli {
namespace {

constexpr int kWarmup = 3, kRuns = 15, kRounds = 2;

// Whether the graph holds 8-bit constants: an int8 model's filters, or a
// dynamic-range model's.
bool HasInt8Constants(const Graph& graph) {
  return std::any_of(graph.tensors.begin(), graph.tensors.end(), [](const Tensor& t) {
    return t.is_constant && (t.type == DataType::kInt8 || t.type == DataType::kUInt8);
  });
}

struct Timed {
  double median_ms = 0;
  uint64_t constant_bytes = 0;
};

// Model `graph`'s median invoke with its filters 8-bit or as floats.
absl::StatusOr<Timed> TimeModel(const std::string& path, const Graph& graph, GpuDelegateOptions options,
                                const std::string& backend, const tuning::Table& table, bool int8_filters) {
  options.workgroups = table;
  options.int8_filters = int8_filters;
  MGD_ASSIGN_OR_RETURN(BackendChoice choice, ChooseBackend(backend, options));
  if (choice.delegate == nullptr) return absl::FailedPreconditionError("no GPU found");
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(choice.delegate.get());
  auto interpreter = Interpreter::Create(graph, std::move(interpreter_options));
  if (!interpreter.ok()) return WithModelPath(path, interpreter.status());
  std::vector<double> ms;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = (*interpreter)->Invoke(); !s.ok()) return WithModelPath(path, s);
    if (i >= kWarmup) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return Timed{ms[kRuns / 2], GpuMemoryOf(choice.delegate.get()).constant_bytes};
}

}  // namespace

absl::StatusOr<Int8FilterChoice> TuneInt8Filters(const std::vector<std::string>& models, const RunOptions& run,
                                                 const std::string& backend, tuning::Table& table) {
  MGD_ASSIGN_OR_RETURN(const GpuDelegateOptions options, DelegateOptionsFrom(run));
  Int8FilterChoice choice;
  for (const std::string& path : models) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    if (!HasInt8Constants(graph)) continue;
    double best_int8 = std::numeric_limits<double>::infinity(), best_float = best_int8;
    uint64_t int8_bytes = 0, float_bytes = 0;
    for (int round = 0; round < kRounds; ++round) {
      MGD_ASSIGN_OR_RETURN(const Timed as_int8, TimeModel(path, graph, options, backend, table, true));
      MGD_ASSIGN_OR_RETURN(const Timed as_float, TimeModel(path, graph, options, backend, table, false));
      best_int8 = std::min(best_int8, as_int8.median_ms);
      best_float = std::min(best_float, as_float.median_ms);
      int8_bytes = as_int8.constant_bytes;
      float_bytes = as_float.constant_bytes;
    }
    // Filters that no shader stores 8-bit (depthwise only, off the grid)
    // say nothing about the choice.
    if (int8_bytes == float_bytes) continue;
    ++choice.models;
    choice.int8_ms += best_int8;
    choice.float_ms += best_float;
  }
  if (choice.models == 0) return choice;
  choice.bits = choice.int8_ms < choice.float_ms ? 8 : 32;
  (options.precision.half_storage() ? table.int8_filter_bits_fp16 : table.int8_filter_bits_fp32) = choice.bits;
  return choice;
}

}  // namespace mgd::cli
