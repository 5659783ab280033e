// ADD, SUB and MUL of int8 or uint8 tensors (binary.cc hands them here), in
// TFLite's integer arithmetic (reference_integer_ops::Add and Mul): inputs
// offset by their zero points, rescaled in fixed point (ADD and SUB: both to
// twice the larger input scale with 20 bits of headroom), rounded, offset
// by the output's zero point and clamped to the fused activation's range.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"

namespace mgd::ops {

// The kernel for a node whose inputs are 8-bit, prepared: checks the
// parameters and precomputes the multipliers.
absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedBinary(KernelContext& ctx);

}  // namespace mgd::ops
