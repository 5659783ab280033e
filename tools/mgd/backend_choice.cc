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
    return UsageError(fmt::format("--backend {}: the GPU backends are not part of this build yet; use --backend cpu", requested));
  }
  return UsageError(fmt::format("--backend {}: unknown backend (expected auto, vulkan, gl or cpu)", requested));
}

}  // namespace mgd::cli
