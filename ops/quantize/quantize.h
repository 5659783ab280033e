// QUANTIZE: float32 to int8 or uint8 (per tensor, or per channel along the
// output's quantized_dimension), and int8/uint8 to int8/uint8 with other
// parameters (requantization), in TFLite's arithmetic: round(x / scale) + zero
// point, half away from zero, saturated; a requantization multiplies by
// in_scale / out_scale in fixed point (fixed_point.h).
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

std::vector<OpDefinition> QuantizeOps();

}  // namespace mgd::ops
