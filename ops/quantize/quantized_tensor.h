// What TFLite's integer kernels read of an 8-bit tensor: its per-tensor
// scale and zero point, its range, and a fused activation as an integer
// range (CalculateActivationRangeQuantized).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"
#include "model/graph.h"
#include "model/node_checker.h"

namespace mgd::ops::quantized {

struct Params {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// The per-tensor parameters of an int8 or uint8 tensor; an error naming the
// tensor when it has none or has per-channel ones.
absl::StatusOr<Params> PerTensor(const KernelContext& ctx, const TensorRef& t);

inline bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

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

// round(real / scale) + zero point, half away from zero, saturated to the
// type (NaN gives the zero point): TFLite's float-to-8-bit step.
int32_t Quantize(float real, const Params& p, DataType type);
inline float Dequantize(int32_t q, const Params& p) { return p.scale * static_cast<float>(q - p.zero_point); }

// Validation of an op with TFLite integer kernels: input `input` is float32,
// int8 or uint8, and output 0 has its type.
absl::Status FloatOr8Bit(const NodeChecker& c, size_t input = 0);

// Validation of an op that moves 8-bit values without computing on them
// (RESHAPE, PAD, MAX_POOL_2D...): where input `input` is 8-bit, output 0 has
// its scale and zero point, as TFLite's converter writes them; such an op
// does not requantize.
absl::Status KeepsQuantization(const NodeChecker& c, size_t input = 0);

// A function of an 8-bit value held as its 256 results: what an op whose
// output depends on one input value at a time computes on 8-bit tensors
// (TFLite's LOGISTIC and TANH tables, ConcatenationWithScaling).
class Table {
 public:
  Table() = default;
  // f(q) for each q of `type`.
  template <typename F>
  Table(DataType type, F f) : lowest_(Lowest(type)) {
    for (int32_t q = Lowest(type); q <= Highest(type); ++q) values_.push_back(f(q));
  }

  bool empty() const { return values_.empty(); }

  // y[to + k] = f(x[from + k]) for k in [0, n).
  void Map(const TensorRef& x, int64_t from, const TensorRef& y, int64_t to, int64_t n) const {
    for (int64_t k = 0; k < n; ++k) Write(y, to + k, values_[static_cast<size_t>(Read(x, from + k) - lowest_)]);
  }

 private:
  int32_t lowest_ = 0;
  std::vector<int32_t> values_;
};

struct IntRange {
  int32_t lo, hi;
};

// A fused activation on an output of `type` with `out` parameters:
// RELU from the zero point, RELU6 and RELU_N1_TO_1 to their bounds quantized
// (rounded half away from zero), all within the type's range.
IntRange ActivationRangeOf(Activation a, DataType type, const Params& out);

}  // namespace mgd::ops::quantized
