#include "tools/mgd/tune_int8_filters.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>

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

// How a setting stores the filters.
enum class Storage { k8Bit, kDot, kFloat };

// Model `graph` prepared on its own delegate with its filters stored as
// `storage` says, once, so that the rounds time invokes only.
struct Prepared {
  BackendChoice backend;  // outlives the interpreter, which uses its delegate
  std::unique_ptr<Interpreter> interpreter;
  uint64_t constant_bytes = 0;
};

absl::StatusOr<Prepared> Prepare(const std::string& path, const Graph& graph, GpuDelegateOptions options,
                                 const std::string& backend, const tuning::Table& table, Storage storage) {
  options.workgroups = table;
  options.int8_filters = storage != Storage::kFloat;
  options.int8_dot = storage == Storage::kDot;
  Prepared p;
  MGD_ASSIGN_OR_RETURN(p.backend, ChooseBackend(backend, options));
  if (p.backend.delegate == nullptr) return absl::FailedPreconditionError("no GPU found");
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(p.backend.delegate.get());
  auto interpreter = Interpreter::Create(graph, std::move(interpreter_options));
  if (!interpreter.ok()) return WithModelPath(path, interpreter.status());
  p.interpreter = std::move(*interpreter);
  p.constant_bytes = GpuMemoryOf(p.backend.delegate.get()).constant_bytes;
  return p;
}

// The median of kRuns invokes after kWarmup ones.
absl::StatusOr<double> MedianInvokeMs(const std::string& path, Interpreter& interpreter) {
  std::vector<double> ms;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = interpreter.Invoke(); !s.ok()) return WithModelPath(path, s);
    if (i >= kWarmup) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return ms[kRuns / 2];
}

}  // namespace

absl::StatusOr<Int8FilterChoice> TuneInt8Filters(const std::vector<std::string>& models, const RunOptions& run,
                                                 const std::string& backend, tuning::Table& table) {
  MGD_ASSIGN_OR_RETURN(const GpuDelegateOptions options, DelegateOptionsFrom(run));
  Int8FilterChoice choice;
  for (const std::string& path : models) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    if (!HasInt8Constants(graph)) continue;
    MGD_ASSIGN_OR_RETURN(Prepared as_int8, Prepare(path, graph, options, backend, table, Storage::k8Bit));
    MGD_ASSIGN_OR_RETURN(Prepared as_float, Prepare(path, graph, options, backend, table, Storage::kFloat));
    // Filters that no shader stores 8-bit (depthwise only, off the grid)
    // say nothing about the choice.
    if (as_int8.constant_bytes == as_float.constant_bytes) continue;
    // Dot products only where the device has them: elsewhere that prepare
    // would only repeat the 8-bit one.
    std::optional<Prepared> as_dot;
    if (as_int8.backend.delegate->device().info().int8_dot_products) {
      MGD_ASSIGN_OR_RETURN(Prepared dot, Prepare(path, graph, options, backend, table, Storage::kDot));
      as_dot = std::move(dot);
    }
    const auto infinity = std::numeric_limits<double>::infinity();
    double best_int8 = infinity, best_float = infinity, best_dot = infinity;
    for (int round = 0; round < kRounds; ++round) {
      MGD_ASSIGN_OR_RETURN(const double int8_ms, MedianInvokeMs(path, *as_int8.interpreter));
      MGD_ASSIGN_OR_RETURN(const double float_ms, MedianInvokeMs(path, *as_float.interpreter));
      best_int8 = std::min(best_int8, int8_ms);
      best_float = std::min(best_float, float_ms);
      if (!as_dot) continue;
      MGD_ASSIGN_OR_RETURN(const double dot_ms, MedianInvokeMs(path, *as_dot->interpreter));
      best_dot = std::min(best_dot, dot_ms);
    }
    ++choice.models;
    choice.int8_ms += best_int8;
    choice.float_ms += best_float;
    if (as_dot) choice.dot_ms = choice.dot_ms.value_or(0.0) + best_dot;
  }
  if (choice.models == 0) return choice;
  const bool fp16 = options.precision.half_storage();
  const double best_8bit = std::min(choice.int8_ms, choice.dot_ms.value_or(choice.int8_ms));
  choice.bits = best_8bit < choice.float_ms ? 8 : 32;
  (fp16 ? table.int8_filter_bits_fp16 : table.int8_filter_bits_fp32) = choice.bits;
  if (choice.dot_ms) {
    choice.dot = choice.bits == 8 && *choice.dot_ms < choice.int8_ms;
    (fp16 ? table.int8_dot_products_fp16 : table.int8_dot_products_fp32) = choice.dot;
  }
  return choice;
}

}  // namespace mgd::cli
