// Which backend a command runs on. GPU backends arrive with the backend issue;
// until then `auto` is the CPU and naming a GPU backend is a clear error.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace mgd::cli {

struct BackendChoice {
  std::string backend;  // "cpu"
  std::string device;   // human-readable device name
  std::string why;      // how auto chose it
};

absl::StatusOr<BackendChoice> ChooseBackend(const std::string& requested);

}  // namespace mgd::cli
