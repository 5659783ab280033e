// DEQUANTIZE: fp16 and int8/uint8 (per tensor or per channel) to fp32. The
// interpreter folds it at load when its input is a constant, which is how
// every MediaPipe model uses it; it has no GPU generator.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

std::vector<OpDefinition> DequantizeOps();

}  // namespace mgd::ops
