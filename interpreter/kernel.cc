#include "interpreter/kernel.h"

#include <fmt/format.h>

namespace mgd {

absl::Status KernelContext::Error(const std::string& message) const {
  return absl::InvalidArgumentError(fmt::format("{}: {}", NodeLabel(*graph, node_index), message));
}

absl::Status KernelContext::ExpectOutputShape(size_t output, const Shape& expected) const {
  const TensorRef& t = *outputs[output];
  if (t.shape == expected) return absl::OkStatus();
  return Error(fmt::format("output {} ({}) has shape {}, but the inputs give {}", output,
                           TensorLabel(*graph, t.index), ShapeToString(t.shape), ShapeToString(expected)));
}

}  // namespace mgd
