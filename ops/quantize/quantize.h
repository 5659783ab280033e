// QUANTIZE: float32 to int8 or uint8 (per tensor, or per channel along the
// output's quantized_dimension), and int8/uint8 to int8/uint8 with other
// parameters (requantization). Per tensor as LiteRT's CPU path (XNNPACK)
// computes it: x times the reciprocal scale in float, rounded to nearest
// even, plus the zero point, saturated; a requantization multiplies by
// in_scale / out_scale with 8 fractional bits, rounding half up. Elsewhere
// (per channel, ratios XNNPACK refuses, int8 to uint8) in TFLite's
// arithmetic: round(x / scale) half away from zero; the ratio in fixed
// point (fixed_point.h).
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

// FAKE_QUANT: float values rounded onto the grid of `num_bits` between min
// and max, nudged so that 0 is on it (TFLite's FakeQuant): what a
// quantization-aware model marks, and what the GPU runs an int8 model's
// rounding as.
struct FakeQuantAttributes {
  float min = 0.0f, max = 0.0f;
  int32_t num_bits = 8;
  bool narrow_range = false;
};

// The grid FAKE_QUANT rounds onto: its nudged ends and step.
struct FakeQuantGrid {
  float min = 0.0f, max = 0.0f, scale = 1.0f;
};
FakeQuantGrid NudgedGrid(const FakeQuantAttributes& a);

std::vector<OpDefinition> QuantizeOps();
std::vector<OpDefinition> FakeQuantOps();

}  // namespace mgd::ops
