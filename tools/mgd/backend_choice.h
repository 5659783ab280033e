// Which backend a command runs on, and the GPU delegate for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "delegate/gpu_delegate.h"

namespace mgd::cli {

struct BackendChoice {
  std::string backend;  // "cpu", "vulkan", "gl"
  std::string device;   // human-readable device name
  std::string why;      // how it was chosen
  std::unique_ptr<GpuDelegate> delegate;  // null for the CPU
};

// `auto` picks a hardware GPU (Vulkan before GL), then a software GPU, then
// the CPU, and says which; `vulkan` / `gl` fail clearly when there is no device.
// `options` (precision, fusion) apply to the GPU delegate; its api is set here.
absl::StatusOr<BackendChoice> ChooseBackend(const std::string& requested, GpuDelegateOptions options = {});

struct RunOptions;
// The GPU delegate options run's flags ask for (--precision, --no-fusion,
// --memory-strategy NAME[:offsets|:shared_objects]); a usage error names a
// bad flag.
absl::StatusOr<GpuDelegateOptions> DelegateOptionsFrom(const RunOptions& run);

// An offline compiled model (mgd compile) runs on the backend and precision
// it was compiled for unless --backend / --precision say otherwise; its
// metadata must parse unless --recompile. No-op for a plain model.
absl::Status FollowCompiledModel(const Graph& graph, RunOptions& run);

// The delegate's prepare steps as [{partition, name, ms}] (empty for the CPU).
nlohmann::json PrepareSteps(const GpuDelegate* delegate);
// What its compilation cache did ([] for the CPU).
nlohmann::json CacheEvents(const GpuDelegate* delegate);

// The GPU memory the delegate's partitions take (zero for the CPU):
// activations, and constants (weights; an int8 model's filters 8-bit or
// float).
struct GpuMemory {
  uint64_t activation_bytes = 0, constant_bytes = 0;
};
GpuMemory GpuMemoryOf(const GpuDelegate* delegate);

}  // namespace mgd::cli
