// What TFLite's integer kernels read of an 8-bit tensor: its per-tensor
// scale and zero point, its range, and a fused activation as an integer
// range (CalculateActivationRangeQuantized).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"
#include "model/graph.h"

namespace mgd::ops::quantized {

struct Params {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// The per-tensor parameters of an int8 or uint8 tensor; an error naming the
// tensor when it has none or has per-channel ones.
absl::StatusOr<Params> PerTensor(const KernelContext& ctx, const TensorRef& t);

inline int32_t Lowest(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
inline int32_t Highest(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

inline int32_t Read(const TensorRef& t, int64_t i) {
  return t.type == DataType::kInt8 ? int32_t{t.as<int8_t>()[i]} : int32_t{t.as<uint8_t>()[i]};
}
inline void Write(const TensorRef& t, int64_t i, int32_t v) {
  if (t.type == DataType::kInt8) {
    t.as<int8_t>()[i] = static_cast<int8_t>(v);
  } else {
    t.as<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
}

struct IntRange {
  int32_t lo, hi;
};

// A fused activation on an output of `type` with `out` parameters:
// RELU from the zero point, RELU6 and RELU_N1_TO_1 to their bounds quantized
// (rounded half away from zero), all within the type's range.
IntRange ActivationRangeOf(Activation a, DataType type, const Params& out);

}  // namespace mgd::ops::quantized
