// Reading the custom options of MediaPipe's ops: raw C structs
// (TfLiteTransposeConvParams, TfLitePoolParams: little-endian int32
// fields), not flexbuffers. The ops' folders decode them (ops/conv/,
// ops/pool/); errors name the field ("custom_options: ...") for the caller
// to put after the node's label.
#pragma once

#include <cstdint>
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

}  // namespace mgd
