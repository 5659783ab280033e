// The custom options of MediaPipe's ops, decoded once for the CPU kernels
// and the shader generators. They are raw C structs (TfLiteTransposeConvParams
// and TfLitePoolParams: little-endian int32 fields), not flexbuffers; the
// pools' are decoded in ops/pool/.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

// Convolution2DTransposeBias: TfLiteTransposeConvParams.
struct MediaPipeTransposeConvOptions {
  Padding padding = Padding::kSame;
  int stride_w = 1, stride_h = 1;
};

// An error names the field ("custom_options: ...") for the caller to put
// after the node's label.
absl::StatusOr<MediaPipeTransposeConvOptions> DecodeTransposeConvOptions(const std::vector<uint8_t>& options);

// The struct's first `count` int32 fields; `struct_name` names it in the
// error when the options are shorter.
absl::StatusOr<std::vector<int32_t>> ReadCustomInts(const std::vector<uint8_t>& options, size_t count,
                                                    const char* struct_name);
// TfLitePadding: 1 = SAME, 2 = VALID.
absl::StatusOr<Padding> ReadTfLitePadding(int32_t value);

}  // namespace mgd
