#include "tools/mgd/tune_int8_filters.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/timed_invokes.h"

namespace mgd::cli {
namespace {

// Whether the graph holds 8-bit constants: an int8 model's filters, or a
// dynamic-range model's.
bool HasInt8Constants(const Graph& graph) {
  return std::any_of(graph.tensors.begin(), graph.tensors.end(), [](const Tensor& t) {
    return t.is_constant && (t.type == DataType::kInt8 || t.type == DataType::kUInt8);
  });
}

// How a setting stores the filters.
enum class Storage { k8Bit, kDot, kFloat };

// Model `graph` prepared with its filters stored as `storage` says.
absl::StatusOr<TimedModel> Prepare(const std::string& path, const Graph& graph, GpuDelegateOptions options,
                                   const std::string& backend, const tuning::Table& table, Storage storage) {
  options.workgroups = table;
  options.int8_filters = storage != Storage::kFloat;
  options.int8_dot = storage == Storage::kDot;
  return PrepareTimed(path, graph, options, backend);
}

}  // namespace

absl::StatusOr<Int8FilterChoice> TuneInt8Filters(const std::vector<std::string>& models, const RunOptions& run,
                                                 const std::string& backend, tuning::Table& table) {
  MGD_ASSIGN_OR_RETURN(const GpuDelegateOptions options, DelegateOptionsFrom(run));
  Int8FilterChoice choice;
  for (const std::string& path : models) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    if (!HasInt8Constants(graph)) continue;
    MGD_ASSIGN_OR_RETURN(TimedModel as_int8, Prepare(path, graph, options, backend, table, Storage::k8Bit));
    MGD_ASSIGN_OR_RETURN(TimedModel as_float, Prepare(path, graph, options, backend, table, Storage::kFloat));
    // Filters that no shader stores 8-bit (depthwise only, off the grid)
    // say nothing about the choice.
    if (GpuMemoryOf(as_int8.backend.delegate.get()).constant_bytes ==
        GpuMemoryOf(as_float.backend.delegate.get()).constant_bytes) {
      continue;
    }
    // Dot products only where the device has them: elsewhere that prepare
    // would only repeat the 8-bit one.
    std::optional<TimedModel> as_dot;
    if (as_int8.backend.delegate->device().info().int8_dot_products) {
      MGD_ASSIGN_OR_RETURN(TimedModel dot, Prepare(path, graph, options, backend, table, Storage::kDot));
      as_dot = std::move(dot);
    }
    const auto infinity = std::numeric_limits<double>::infinity();
    double best_int8 = infinity, best_float = infinity, best_dot = infinity;
    for (int round = 0; round < kTimedRounds; ++round) {
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
