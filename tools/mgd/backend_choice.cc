#include "tools/mgd/backend_choice.h"

#include <fmt/format.h>

#include "tools/mgd/commands.h"

namespace mgd::cli {

absl::StatusOr<BackendChoice> ChooseBackend(const std::string& requested) {
  if (requested == "cpu") return BackendChoice{"cpu", "CPU reference kernels", "requested"};
  if (requested == "auto") {
    return BackendChoice{"cpu", "CPU reference kernels", "auto: no GPU backend is built into this mgd yet"};
  }
  if (requested == "vulkan" || requested == "gl") {
    return UsageError(fmt::format(
        "--backend {}: models cannot run on the GPU yet (the delegate is the next step; `mgd info` lists the GPUs "
        "found); use --backend cpu",
        requested));
  }
  return UsageError(fmt::format("--backend {}: unknown backend (expected auto, vulkan, gl or cpu)", requested));
}

}  // namespace mgd::cli
