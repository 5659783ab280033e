#include "model/mediapipe_options.h"

#include <fmt/format.h>

#include <cstring>

namespace mgd {
namespace {

using absl::InvalidArgumentError;

absl::StatusOr<std::vector<int32_t>> ReadInts(const std::vector<uint8_t>& options, size_t count, const char* struct_name) {
  if (options.size() < count * 4) {
    return InvalidArgumentError(fmt::format("custom_options hold {} bytes, expected at least {} ({})", options.size(),
                                            count * 4, struct_name));
  }
  std::vector<int32_t> values(count);
  std::memcpy(values.data(), options.data(), count * 4);
  return values;
}

// TfLitePadding: 1 = SAME, 2 = VALID.
absl::StatusOr<Padding> ReadPadding(int32_t value) {
  if (value == 1) return Padding::kSame;
  if (value == 2) return Padding::kValid;
  return InvalidArgumentError(fmt::format("custom_options: padding {} is neither SAME (1) nor VALID (2)", value));
}

}  // namespace

absl::StatusOr<MediaPipeTransposeConvOptions> DecodeTransposeConvOptions(const std::vector<uint8_t>& options) {
  auto ints = ReadInts(options, 3, "TfLiteTransposeConvParams");
  if (!ints.ok()) return ints.status();
  auto padding = ReadPadding((*ints)[0]);
  if (!padding.ok()) return padding.status();
  MediaPipeTransposeConvOptions o{*padding, (*ints)[1], (*ints)[2]};
  if (o.stride_w < 1 || o.stride_h < 1) {
    return InvalidArgumentError(fmt::format("custom_options: strides {}x{} must be at least 1", o.stride_w, o.stride_h));
  }
  return o;
}

absl::StatusOr<MediaPipePoolOptions> DecodePoolOptions(const std::vector<uint8_t>& options) {
  auto ints = ReadInts(options, 6, "TfLitePoolParams");
  if (!ints.ok()) return ints.status();
  const std::vector<int32_t>& v = *ints;
  auto padding = ReadPadding(v[0]);
  if (!padding.ok()) return padding.status();
  MediaPipePoolOptions p{*padding, v[1], v[2], v[3], v[4], Activation::kNone};
  if (p.stride_w < 1 || p.stride_h < 1 || p.filter_w < 1 || p.filter_h < 1) {
    return InvalidArgumentError(fmt::format("custom_options: strides {}x{} and filter {}x{} must be at least 1", p.stride_w,
                                            p.stride_h, p.filter_w, p.filter_h));
  }
  if (v[5] < 0 || v[5] > 4) return InvalidArgumentError(fmt::format("custom_options: activation {} is not supported", v[5]));
  p.activation = static_cast<Activation>(v[5]);
  return p;
}

}  // namespace mgd
