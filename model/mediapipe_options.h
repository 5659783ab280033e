// The custom options of MediaPipe's ops, decoded once for the CPU kernels
// and the shader generators. They are raw C structs (TfLiteTransposeConvParams
// and TfLitePoolParams: little-endian int32 fields), not flexbuffers.
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

// MaxPoolingWithArgmax2D and MaxUnpooling2D: TfLitePoolParams.
struct MediaPipePoolOptions {
  Padding padding = Padding::kSame;
  int stride_w = 1, stride_h = 1, filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};

// An error names the field ("custom_options: ...") for the caller to put
// after the node's label.
absl::StatusOr<MediaPipeTransposeConvOptions> DecodeTransposeConvOptions(const std::vector<uint8_t>& options);
absl::StatusOr<MediaPipePoolOptions> DecodePoolOptions(const std::vector<uint8_t>& options);

}  // namespace mgd
