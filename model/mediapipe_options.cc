#include "model/mediapipe_options.h"

#include <flatbuffers/flexbuffers.h>
#include <fmt/format.h>

#include <cmath>
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

absl::StatusOr<FlexOptions> FlexOptions::Parse(const std::vector<uint8_t>& options) {
  if (options.empty() || !flexbuffers::VerifyBuffer(options.data(), options.size())) {
    return InvalidArgumentError(fmt::format("custom_options: {} bytes are not a flexbuffer", options.size()));
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(options.data(), options.size());
  if (!root.IsMap()) return InvalidArgumentError("custom_options: the flexbuffer is not a map");
  const flexbuffers::Map map = root.AsMap();
  const flexbuffers::TypedVector keys = map.Keys();
  const flexbuffers::Vector values = map.Values();
  FlexOptions out;
  for (size_t i = 0; i < keys.size(); ++i) {
    const flexbuffers::Reference v = values[i];
    std::vector<double> numbers;
    if (v.IsNumeric() || v.IsBool()) {
      numbers.push_back(v.AsDouble());
    } else if (v.IsVector() || v.IsTypedVector() || v.IsFixedTypedVector()) {
      auto add = [&](const auto& list) {
        for (size_t k = 0; k < list.size(); ++k) {
          if (list[k].IsNumeric()) numbers.push_back(list[k].AsDouble());
        }
      };
      if (v.IsVector()) add(v.AsVector());
      else if (v.IsTypedVector()) add(v.AsTypedVector());
      else add(v.AsFixedTypedVector());
    } else {
      continue;  // strings and the like: no op of mgd's reads them
    }
    out.values_[keys[i].AsKey()] = std::move(numbers);
  }
  return out;
}

absl::StatusOr<float> FlexOptions::Float(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.size() != 1) return InvalidArgumentError(fmt::format("custom_options: no number {}", key));
  const double v = it->second[0];
  if (!std::isfinite(v)) return InvalidArgumentError(fmt::format("custom_options: {} is not finite", key));
  return static_cast<float>(v);
}

absl::StatusOr<int> FlexOptions::Int(const std::string& key, int lo, int hi) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.size() != 1) return InvalidArgumentError(fmt::format("custom_options: no integer {}", key));
  const double v = it->second[0];
  if (!(v >= lo && v <= hi) || v != std::floor(v)) {
    return InvalidArgumentError(fmt::format("custom_options: {} {} is not an integer in [{}, {}]", key, v, lo, hi));
  }
  return static_cast<int>(v);
}

absl::StatusOr<std::vector<int>> FlexOptions::Ints(const std::string& key, int lo, int hi) const {
  auto it = values_.find(key);
  if (it == values_.end()) return InvalidArgumentError(fmt::format("custom_options: no list {}", key));
  std::vector<int> out;
  for (double v : it->second) {
    if (!(v >= lo && v <= hi) || v != std::floor(v)) {
      return InvalidArgumentError(fmt::format("custom_options: {} holds {}, not an integer in [{}, {}]", key, v, lo, hi));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace mgd
