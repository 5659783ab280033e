// The pipeline ops' options: float32 fields (ops/pipeline/pipeline_ops.h).
#include "ops/pipeline/options.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace mgd::ops {
namespace {

std::vector<uint8_t> Bytes(const std::vector<float>& fields) {
  std::vector<uint8_t> bytes(fields.size() * 4);
  std::memcpy(bytes.data(), fields.data(), bytes.size());
  return bytes;
}

}  // namespace

absl::StatusOr<std::vector<float>> ReadFloatFields(const std::vector<uint8_t>& options, size_t count, const char* op) {
  if (options.size() != count * 4) {
    return absl::InvalidArgumentError(
        fmt::format("custom_options hold {} bytes, expected {} ({} float32 fields of {})", options.size(), count * 4, count, op));
  }
  std::vector<float> fields(count);
  std::memcpy(fields.data(), options.data(), options.size());
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(fields[i])) return absl::InvalidArgumentError(fmt::format("custom_options: field {} of {} is not finite", i, op));
  }
  return fields;
}

absl::StatusOr<int> ReadIntField(float value, const char* name, int lo, int hi) {
  if (value != std::floor(value) || value < static_cast<float>(lo) || value > static_cast<float>(hi)) {
    return absl::InvalidArgumentError(fmt::format("custom_options: {} {} is not an integer in [{}, {}]", name, value, lo, hi));
  }
  return static_cast<int>(value);
}

std::vector<uint8_t> EncodeOptions(const ImageToTensorAttributes& a) {
  return Bytes({static_cast<float>(a.height), static_cast<float>(a.width), static_cast<float>(a.channels), a.range_min,
                a.range_max, a.clamp_to_edge ? 1.0f : 0.0f});
}

std::vector<uint8_t> EncodeOptions(const DecodeDetectionsAttributes& a) {
  return Bytes({static_cast<float>(a.num_coords), static_cast<float>(a.box_offset), static_cast<float>(a.keypoint_offset),
                static_cast<float>(a.num_keypoints), static_cast<float>(a.values_per_keypoint), a.x_scale, a.y_scale,
                a.w_scale, a.h_scale, a.reverse_order ? 1.0f : 0.0f, a.exp_size ? 1.0f : 0.0f, a.sigmoid ? 1.0f : 0.0f,
                a.score_clip});
}

std::vector<uint8_t> EncodeOptions(const NonMaxSuppressionAttributes& a) {
  return Bytes({static_cast<float>(a.max_detections), a.min_score, a.iou_threshold});
}

}  // namespace mgd::ops
