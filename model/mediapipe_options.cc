#include "model/mediapipe_options.h"

#include <fmt/format.h>

#include <cstring>

namespace mgd {

using absl::InvalidArgumentError;

absl::StatusOr<std::vector<int32_t>> ReadCustomInts(const std::vector<uint8_t>& options, size_t count, const char* struct_name) {
  if (options.size() < count * 4) {
    return InvalidArgumentError(fmt::format("custom_options hold {} bytes, expected at least {} ({})", options.size(),
                                            count * 4, struct_name));
  }
  std::vector<int32_t> values(count);
  std::memcpy(values.data(), options.data(), count * 4);
  return values;
}

absl::StatusOr<Padding> ReadTfLitePadding(int32_t value) {
  if (value == 1) return Padding::kSame;
  if (value == 2) return Padding::kValid;
  return InvalidArgumentError(fmt::format("custom_options: padding {} is neither SAME (1) nor VALID (2)", value));
}

}  // namespace mgd
