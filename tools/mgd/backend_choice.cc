#include "tools/mgd/backend_choice.h"

#include <cstdio>
#include <cstdlib>

#include "delegate/compiled_file.h"

#include <fmt/format.h>

#include "model/status_macros.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

absl::StatusOr<BackendChoice> OnGpu(gpu::Api api, const std::string& why, GpuDelegateOptions options) {
  options.api = api;
  auto delegate = GpuDelegate::Create(options);
  // A workgroup table for another GPU is the user's mistake, not the device's.
  if (!delegate.ok() && delegate.status().code() == absl::StatusCode::kInvalidArgument) return delegate.status();
  if (!delegate.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("--backend {}: no usable device ({})", gpu::ApiName(api), delegate.status().message()));
  }
  BackendChoice choice;
  choice.backend = gpu::ApiName(api);
  choice.device = (*delegate)->device().info().device_name;
  choice.why = why;
  choice.delegate = std::move(*delegate);
  return choice;
}

}  // namespace

absl::StatusOr<BackendChoice> ChooseBackend(const std::string& requested, GpuDelegateOptions options) {
  if (requested == "cpu") return BackendChoice{"cpu", "CPU reference kernels", "requested", nullptr};
  if (requested == "vulkan") return OnGpu(gpu::Api::kVulkan, "requested", options);
  if (requested == "gl") return OnGpu(gpu::Api::kGles, "requested", options);
  if (requested != "auto") {
    return UsageError(fmt::format("--backend {}: unknown backend (expected auto, vulkan, gl or cpu)", requested));
  }
  auto best = CreateOnBestGpu(options);
  if (best.ok()) {
    BackendChoice choice;
    choice.backend = gpu::ApiName(best->delegate->options().api);
    choice.device = best->delegate->device().info().device_name;
    choice.why = "auto: " + best->why;
    choice.delegate = std::move(best->delegate);
    return choice;
  }
  // A table for another GPU is the user's mistake on every API.
  if (absl::IsInvalidArgument(best.status())) return best.status();
  // A device the user named (MGD_DEVICE) that no API has is their mistake,
  // not a reason to run on the CPU unasked.
  const char* env = std::getenv("MGD_DEVICE");
  const std::string selector = !options.device.empty() ? options.device : env != nullptr ? env : "";
  if (!selector.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("--backend auto: no device '{}' (MGD_DEVICE) on any GPU API: {}", selector, best.status().message()));
  }
  return BackendChoice{"cpu", "CPU reference kernels", "auto: no GPU found", nullptr};
}

nlohmann::json PrepareSteps(const GpuDelegate* delegate) {
  nlohmann::json steps = nlohmann::json::array();
  if (delegate == nullptr) return steps;
  for (const GpuDelegate::PrepareStep& s : delegate->prepare_steps()) {
    steps.push_back({{"partition", s.prepare}, {"name", s.name}, {"ms", s.ms}});
  }
  return steps;
}

nlohmann::json CacheEvents(const GpuDelegate* delegate) {
  return delegate ? nlohmann::json(delegate->cache_events()) : nlohmann::json::array();
}

GpuMemory GpuMemoryOf(const GpuDelegate* delegate) {
  GpuMemory m;
  if (delegate == nullptr) return m;
  for (const GpuDelegate::MemoryUse& use : delegate->memory_uses()) {
    m.activation_bytes += use.bytes;
    m.constant_bytes += use.constant_bytes;
  }
  return m;
}

absl::Status FollowCompiledModel(const Graph& graph, RunOptions& run) {
  const auto metadata = graph.metadata.find(kCompiledMetadataName);
  if (metadata == graph.metadata.end()) return absl::OkStatus();
  auto file = CompiledFile::Parse(reinterpret_cast<const uint8_t*>(metadata->second.data()), metadata->second.size());
  if (!file.ok()) {
    if (run.recompile) return absl::OkStatus();
    return absl::InvalidArgumentError(fmt::format("{}: {} (--recompile compiles the embedded model instead)", run.model,
                                                  file.status().message()));
  }
  if (!run.backend_given || run.backend == "auto") run.backend = file->target().api;
  if (!run.precision_given) run.precision = file->target().fp16 ? "fp16" : "fp32";
  return absl::OkStatus();
}

absl::StatusOr<GpuDelegateOptions> DelegateOptionsFrom(const RunOptions& run) {
  GpuDelegateOptions options;
  options.recompile = run.recompile;
  // Warnings on stderr; with MGD_LOG=debug also the debug messages (what the
  // compilation cache did and why).
  const char* log = std::getenv("MGD_LOG");
  const bool debug = log != nullptr && std::string(log) == "debug";
  options.logger = [debug](LogLevel level, const std::string& message) {
    if (level >= LogLevel::kWarning) std::fprintf(stderr, "mgd: warning: %s\n", message.c_str());
    else if (debug) std::fprintf(stderr, "mgd: debug: %s\n", message.c_str());
  };
  options.precision = Precision::Of(run.precision == "fp16");
  options.fusion = !run.no_fusion;
  options.int8_as_float = !run.int8_integer;
  if (run.int8_filters != "auto") {
    options.int8_filters = run.int8_filters != "float";
    options.int8_dot = run.int8_filters == "dot";
  }
  options.share_programs = run.share_programs;
  for (gpu::WaitMode mode : {gpu::WaitMode::kAuto, gpu::WaitMode::kPassive, gpu::WaitMode::kActive}) {
    if (run.wait == gpu::WaitModeName(mode)) options.wait = mode;
  }
  options.keep_fp16_arithmetic = run.fp16_arithmetic;
  options.fp32_layers = run.fp32_layers;
  options.table_guard = run.table_guard;
  options.cache_dir = run.cache_dir;
  if (!run.workgroups.empty()) {
    auto table = tuning::ReadTableFile(run.workgroups);
    if (!table.ok()) return UsageError(fmt::format("--workgroups {}", table.status().message()));
    options.workgroups = std::move(*table);
  }
  if (run.memory_strategy.empty()) return options;
  const std::string& flag = run.memory_strategy;
  const size_t colon = flag.find(':');
  const std::string name = flag.substr(0, colon);
  const auto strategy = memory::ParseStrategy(name);
  if (!strategy) {
    return UsageError(fmt::format("--memory-strategy {}: unknown strategy '{}' (expected one of {}, optionally followed "
                                  "by :offsets or :shared_objects)",
                                  flag, name, memory::StrategyNames()));
  }
  options.memory_strategy = *strategy;
  if (colon != std::string::npos) {
    const std::string problem = flag.substr(colon + 1);
    options.memory_problem = memory::ParseProblem(problem);
    if (!options.memory_problem) {
      return UsageError(fmt::format("--memory-strategy {}: '{}' is neither offsets nor shared_objects", flag, problem));
    }
    // Equality and min-cost flow only place tensors in shared buffers.
    if (*strategy != memory::Strategy::kBest && *options.memory_problem == memory::Problem::kOffsets &&
        !memory::PlanOffsets(*strategy, {})) {
      return UsageError(fmt::format("--memory-strategy {}: {} has no offsets plan (it only solves shared_objects)", flag, name));
    }
  }
  return options;
}

}  // namespace mgd::cli
