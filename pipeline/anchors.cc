#include "pipeline/anchors.h"

#include <fmt/format.h>

#include <cmath>

namespace mgd::pipeline {
namespace {

float Scale(float min_scale, float max_scale, int index, int count) {
  if (count == 1) return (min_scale + max_scale) * 0.5f;
  return min_scale + (max_scale - min_scale) * 1.0f * static_cast<float>(index) / (static_cast<float>(count) - 1.0f);
}

}  // namespace

absl::StatusOr<std::vector<float>> GenerateAnchors(const SsdAnchorOptions& o) {
  if (o.num_layers < 1 || static_cast<int>(o.strides.size()) != o.num_layers) {
    return absl::InvalidArgumentError(fmt::format("anchors: {} strides for {} layers", o.strides.size(), o.num_layers));
  }
  if (o.input_width < 1 || o.input_height < 1) return absl::InvalidArgumentError("anchors: no input size");
  for (int stride : o.strides) {
    if (stride < 1) return absl::InvalidArgumentError(fmt::format("anchors: stride {}", stride));
  }
  const int count = static_cast<int>(o.strides.size());
  std::vector<float> anchors;
  int layer = 0;
  while (layer < o.num_layers) {
    std::vector<float> heights, widths, ratios, scales;
    int last = layer;
    while (last < count && o.strides[static_cast<size_t>(last)] == o.strides[static_cast<size_t>(layer)]) {
      const float scale = Scale(o.min_scale, o.max_scale, last, count);
      if (last == 0 && o.reduce_boxes_in_lowest_layer) {
        ratios.insert(ratios.end(), {1.0f, 2.0f, 0.5f});
        scales.insert(scales.end(), {0.1f, scale, scale});
      } else {
        for (float ratio : o.aspect_ratios) {
          ratios.push_back(ratio);
          scales.push_back(scale);
        }
        if (o.interpolated_scale_aspect_ratio > 0.0f) {
          const float next = last == count - 1 ? 1.0f : Scale(o.min_scale, o.max_scale, last + 1, count);
          scales.push_back(std::sqrt(scale * next));
          ratios.push_back(o.interpolated_scale_aspect_ratio);
        }
      }
      ++last;
    }
    for (size_t i = 0; i < ratios.size(); ++i) {
      const float root = std::sqrt(ratios[i]);
      heights.push_back(scales[i] / root);
      widths.push_back(scales[i] * root);
    }
    const int stride = o.strides[static_cast<size_t>(layer)];
    const int fh = static_cast<int>(std::ceil(1.0f * static_cast<float>(o.input_height) / static_cast<float>(stride)));
    const int fw = static_cast<int>(std::ceil(1.0f * static_cast<float>(o.input_width) / static_cast<float>(stride)));
    for (int y = 0; y < fh; ++y)
      for (int x = 0; x < fw; ++x)
        for (size_t k = 0; k < heights.size(); ++k) {
          anchors.push_back((static_cast<float>(x) + o.anchor_offset_x) * 1.0f / static_cast<float>(fw));
          anchors.push_back((static_cast<float>(y) + o.anchor_offset_y) * 1.0f / static_cast<float>(fh));
          anchors.push_back(o.fixed_anchor_size ? 1.0f : widths[k]);
          anchors.push_back(o.fixed_anchor_size ? 1.0f : heights[k]);
        }
    layer = last;
  }
  return anchors;
}

}  // namespace mgd::pipeline
