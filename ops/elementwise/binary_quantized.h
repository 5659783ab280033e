// ADD, SUB and MUL of int8 or uint8 tensors (binary.cc hands them here), as
// LiteRT's CPU path computes them: XNNPACK's arithmetic (ADD and SUB: each
// input times a 21-bit multiplier of its scale over the output's, one shift,
// rounding half up; MUL: the product of the zero-point-offset inputs times
// the scales' ratio in float, rounded to nearest even). Where XNNPACK
// refuses the scales, TFLite's (reference_integer_ops::Add and Mul: both
// inputs rescaled to twice the larger input scale with 20 bits of headroom
// in fixed point, rounded half away from zero). Then offset by the output's
// zero point and clamped to the fused activation's range.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"

namespace mgd::ops {

// The kernel for a node whose inputs are 8-bit, prepared: checks the
// parameters and precomputes the multipliers.
absl::StatusOr<std::unique_ptr<Kernel>> PrepareQuantizedBinary(KernelContext& ctx);

}  // namespace mgd::ops
