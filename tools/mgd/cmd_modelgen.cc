#include "tools/mgd/commands.h"

namespace mgd::cli {

absl::Status Modelgen(const ModelgenOptions& options) {
  return UsageError("modelgen " + options.name + ": not implemented yet");
}

}  // namespace mgd::cli
