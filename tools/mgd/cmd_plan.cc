// mgd plan: every memory strategy's bytes for the model's GPU partitions, on
// both problems (shared objects, offsets), against the lower bound, and the
// plan the delegate would choose. Compiles without running anything; the
// device only supplies the offset alignment and the buffer size limit.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"
#include "backends/gpu/gpu.h"
#include "delegate/compile_only.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/plan_svg.h"

namespace mgd::cli {
namespace {

struct Target {
  std::string backend, device;
  gpu::GpuLimits limits;
};

// The device whose limits the plan follows: as `run` would pick it, but
// without creating it. With no GPU, `auto` plans for 16-byte alignment.
absl::StatusOr<Target> ChooseTarget(const std::string& requested) {
  if (requested == "cpu") return UsageError("--backend cpu: the CPU path has no GPU memory to plan");
  for (bool software : {false, true}) {
    for (gpu::Api api : {gpu::Api::kVulkan, gpu::Api::kGles}) {
      if (requested != "auto" && requested != gpu::ApiName(api)) continue;
      auto devices = gpu::ListDevices(api);
      if (!devices.ok() || devices->empty()) continue;
      if (requested == "auto" && (*devices)[0].is_software() != software) continue;
      return Target{gpu::ApiName(api), (*devices)[0].device_name, (*devices)[0].limits};
    }
  }
  if (requested != "auto") return absl::FailedPreconditionError(fmt::format("--backend {}: no device", requested));
  gpu::GpuLimits assumed;
  assumed.storage_buffer_offset_alignment = 16;
  assumed.max_storage_buffer_bytes = UINT64_MAX;
  return Target{"none", "no GPU found: 16-byte alignment assumed", assumed};
}

struct Sums {
  uint64_t shared = 0, offsets = 0;
  bool has_shared = true, has_offsets = true;
};

nlohmann::json OrNull(bool has, uint64_t value) { return has ? nlohmann::json(value) : nlohmann::json(nullptr); }

std::string KiB(uint64_t bytes) { return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024); }

}  // namespace

absl::Status Plan(const PlanOptions& options) {
  MGD_ASSIGN_OR_RETURN(Target target, ChooseTarget(options.backend));
  MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(options.model));
  CompileOptions compile;
  compile.precision.storage = options.precision == "fp16" ? StorageType::kFloat16 : StorageType::kFloat32;
  compile.fusion = !options.no_fusion;
  compile.memory.alignment = target.limits.storage_buffer_offset_alignment;
  compile.memory.max_object_bytes = target.limits.max_storage_buffer_bytes;
  CompileOnlyDelegate delegate(compile);
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(&delegate);
  interpreter_options.logger = [](LogLevel, const std::string&) {};  // nothing runs: no fallback chatter
  auto created = Interpreter::Create(std::move(graph), std::move(interpreter_options));
  if (!created.ok()) return WithModelPath(options.model, created.status());
  const Graph& g = (*created)->graph();

  uint64_t lower_bound = 0, chosen_bytes = 0, naive_bytes = 0;
  double planning_ms = 0;
  std::map<memory::Strategy, Sums> sums;
  nlohmann::json partitions = nlohmann::json::array();
  std::vector<PlannedPartition> pictures;
  size_t largest = 0;  // the partition with the most activation bytes names "chosen"
  uint64_t largest_bytes = 0;
  for (size_t i = 0; i < delegate.compiled().size(); ++i) {
    const CompiledModel& m = delegate.compiled()[i];
    const ActivationUsages records = ActivationUsagesOf(m, compile.memory.alignment);
    // What prepare pays: best-of over every strategy.
    CompiledModel copy = m;
    const auto start = std::chrono::steady_clock::now();
    MGD_RETURN_IF_ERROR(PlanMemory(copy, compile.memory));
    planning_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const uint64_t bound = memory::LowerBound(records.usages);
    uint64_t bytes = 0;
    for (uint64_t b : m.memory_objects) bytes += b;
    for (memory::Strategy s : memory::kStrategies) {
      Sums& sum = sums[s];
      const auto shared = memory::PlanSharedObjects(s, records.usages);
      const auto offsets = memory::PlanOffsets(s, records.usages);
      sum.has_shared = sum.has_shared && shared.has_value();
      sum.has_offsets = sum.has_offsets && offsets.has_value();
      if (shared) sum.shared += shared->total();
      if (offsets) sum.offsets += offsets->arena_bytes;
      if (s == memory::Strategy::kNaive && offsets) naive_bytes += offsets->arena_bytes;
    }
    lower_bound += bound;
    if (bytes > largest_bytes) {
      largest = i;
      largest_bytes = bytes;
    }
    chosen_bytes += bytes;
    partitions.push_back({{"nodes", delegate.partitions()[i].nodes.size()},
                          {"activations", records.usages.size()},
                          {"lower_bound_bytes", bound},
                          {"chosen", memory::StrategyName(m.memory_strategy)},
                          {"problem", memory::ProblemName(m.memory_problem)},
                          {"bytes", bytes}});
    PlannedPartition picture{&m, {}, bound};
    for (const CompiledBuffer& b : m.buffers) {
      picture.tensor_names.push_back(b.tensor >= 0 ? g.tensors[static_cast<size_t>(b.tensor)].name : "");
    }
    pictures.push_back(std::move(picture));
  }
  const bool any = !delegate.compiled().empty();
  const std::string chosen = any ? memory::StrategyName(delegate.compiled()[largest].memory_strategy) : "none";
  const std::string problem = any ? memory::ProblemName(delegate.compiled()[largest].memory_problem) : "none";

  if (!options.svg.empty()) {
    const absl::Status s =
        WriteFileAtomically(options.svg, PlanSvg(fmt::format("{}: {} ({}), {}", options.model, chosen, problem, options.precision), pictures));
    if (!s.ok()) return absl::Status(s.code(), fmt::format("--svg {}", s.message()));
  }
  if (options.json) {
    nlohmann::json strategies = nlohmann::json::object();
    for (const auto& [s, sum] : sums) {
      strategies[memory::StrategyName(s)] = {{"shared_objects_bytes", OrNull(sum.has_shared && any, sum.shared)},
                                             {"offsets_bytes", OrNull(sum.has_offsets && any, sum.offsets)}};
    }
    std::printf("%s\n", JsonText(nlohmann::json{{"model", options.model},
                                      {"backend", target.backend},
                                      {"device", target.device},
                                      {"precision", options.precision},
                                      {"alignment", compile.memory.alignment},
                                      {"lower_bound_bytes", lower_bound},
                                      {"strategies", strategies},
                                      {"chosen", chosen},
                                      {"chosen_problem", problem},
                                      {"chosen_bytes", chosen_bytes},
                                      {"planning_ms", planning_ms},
                                      {"partitions", partitions}}
                           ).c_str());
    return absl::OkStatus();
  }
  fmt::print("model     {}\n", options.model);
  fmt::print("device    {} ({}), {}, offsets aligned to {} bytes\n", target.device, target.backend, options.precision,
             compile.memory.alignment);
  size_t activations = 0;
  for (const auto& p : partitions) activations += p["activations"].get<size_t>();
  fmt::print("{} GPU partition(s), {} activation tensors\n", delegate.compiled().size(), activations);
  if (!any) return absl::OkStatus();
  const double bound = static_cast<double>(std::max<uint64_t>(lower_bound, 1));
  auto cell = [&](bool has, uint64_t bytes) {
    return has ? fmt::format("{:>12} {:>6.2f}x", KiB(bytes), static_cast<double>(bytes) / bound) : fmt::format("{:>20}", "-");
  };
  fmt::print("\n{:<20}{:>20}{:>20}\n", "strategy", "shared objects", "offsets");
  for (const auto& [s, sum] : sums) {
    fmt::print("{:<20}{}{}\n", memory::StrategyName(s), cell(sum.has_shared, sum.shared), cell(sum.has_offsets, sum.offsets));
  }
  fmt::print("{:<20}{:>12}\n\n", "lower bound", KiB(lower_bound));
  fmt::print("chosen    {} ({}): {}, {:.3f}x the lower bound, {:.1f}x less than no reuse ({}); planned in {:.1f} ms\n",
             chosen, problem, KiB(chosen_bytes), static_cast<double>(chosen_bytes) / bound,
             static_cast<double>(naive_bytes) / static_cast<double>(std::max<uint64_t>(chosen_bytes, 1)), KiB(naive_bytes),
             planning_ms);
  if (!options.svg.empty()) fmt::print("picture   {}\n", options.svg);
  return absl::OkStatus();
}

}  // namespace mgd::cli
