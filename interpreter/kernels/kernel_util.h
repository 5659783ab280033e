// Helpers shared by the CPU reference kernels.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "interpreter/kernel.h"
#include "model/geometry.h"

namespace mgd {

// A fused activation. NaN and Inf as IEEE 754 and TFLite's reference
// kernels have them (docs/numerics.md): no activation changes nothing (Inf
// stays Inf, not FLT_MAX), and a clamp keeps NaN.
struct ActivationRange {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  bool tanh = false;

  float Apply(float x) const {
    if (tanh) return std::tanh(x);
    return x < min ? min : x > max ? max : x;
  }
};

inline ActivationRange RangeOf(Activation a) {
  ActivationRange r;
  switch (a) {
    case Activation::kRelu: r.min = 0.0f; break;
    case Activation::kRelu6: r.min = 0.0f; r.max = 6.0f; break;
    case Activation::kReluN1To1: r.min = -1.0f; r.max = 1.0f; break;
    case Activation::kTanh: r.tanh = true; break;
    default: break;
  }
  return r;
}

// max and min where a NaN in either operand gives NaN (IEEE 754-2019's
// maximum and minimum): MAXIMUM, MINIMUM and max pools. TFLite's kernels
// differ among themselves here (docs/numerics.md); these never hide a NaN.
template <typename T>
T MaxKeepingNan(T a, T b) {
  return (a > b || std::isnan(a)) ? a : b;
}
template <typename T>
T MinKeepingNan(T a, T b) {
  return (a < b || std::isnan(a)) ? a : b;
}

// A custom op's node: `inputs` float32 inputs, none omitted, and `outputs`
// float32 outputs (builtins have this checked by their validate rules).
inline absl::Status ExpectArity(const KernelContext& ctx, size_t inputs, size_t outputs) {
  if (ctx.inputs.size() != inputs || ctx.outputs.size() != outputs) {
    return ctx.Error(fmt::format("has {} inputs and {} outputs, expected {} and {}", ctx.inputs.size(),
                                 ctx.outputs.size(), inputs, outputs));
  }
  for (size_t i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i)) return ctx.Error(fmt::format("input {} is omitted", i));
    if (ctx.in(i).type != DataType::kFloat32) return ctx.Error(fmt::format("input {} must be float32", i));
  }
  for (size_t i = 0; i < outputs; ++i) {
    if (ctx.out(i).type != DataType::kFloat32) return ctx.Error(fmt::format("output {} must be float32", i));
  }
  return absl::OkStatus();
}

inline absl::Status ExpectRank4(const KernelContext& ctx, const TensorRef& t, const char* what) {
  if (t.rank() == 4) return absl::OkStatus();
  return ctx.Error(fmt::format("{} has shape {}, expected rank 4", what, ShapeToString(t.shape)));
}

// Reads element i of an int32 or int64 constant as int64.
inline int64_t IndexValue(const TensorRef& t, int64_t i) {
  if (t.type == DataType::kInt64) return t.as<int64_t>()[i];
  return t.as<int32_t>()[i];
}

// Row-major strides of a shape.
inline std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = strides[static_cast<size_t>(i) + 1] * shape[static_cast<size_t>(i) + 1];
  }
  return strides;
}

}  // namespace mgd
