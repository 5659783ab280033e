// Reading the custom options of MediaPipe's ops: raw C structs
// (TfLiteTransposeConvParams, TfLitePoolParams: little-endian int32
// fields), and the flexbuffer maps of its newer ops (TransformTensorBilinear,
// TransformLandmarks, Landmarks2TransformMatrix). The ops' folders decode
// them (ops/conv/, ops/pool/, ops/transform/); errors name the field
// ("custom_options: ...") for the caller to put after the node's label.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

// The struct's first `count` int32 fields; `struct_name` names it in the
// error when the options are shorter.
absl::StatusOr<std::vector<int32_t>> ReadCustomInts(const std::vector<uint8_t>& options, size_t count,
                                                    const char* struct_name);
// TfLitePadding: 1 = SAME, 2 = VALID.
absl::StatusOr<Padding> ReadTfLitePadding(int32_t value);

// A flexbuffer map of numbers and vectors of numbers, verified before it is
// read (a damaged one is an error, not a crash).
class FlexOptions {
 public:
  static absl::StatusOr<FlexOptions> Parse(const std::vector<uint8_t>& options);
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  // The field as one number / an integer in [lo, hi] / integers.
  absl::StatusOr<float> Float(const std::string& key) const;
  absl::StatusOr<int> Int(const std::string& key, int lo, int hi) const;
  absl::StatusOr<std::vector<int>> Ints(const std::string& key, int lo, int hi) const;

 private:
  std::map<std::string, std::vector<double>> values_;  // scalars as one value
};

}  // namespace mgd
