// The quantizer: a calibrated float graph rewritten as TFLite's converter
// writes a full-integer model. Activations become int8 with a scale and
// zero point from their calibrated range (widened to hold 0); filters int8
// of zero point 0, per output channel; biases int32 of scale input x
// filter. Each op goes int8 only where its QuantizeRule
// (ops/op_definition.h) allows and its inputs permit; the others stay
// float between a DEQUANTIZE and a QUANTIZE, so any model converts.
#pragma once

#include "absl/status/statusor.h"
#include "model/graph.h"
#include "quantizer/calibrate.h"

namespace mgd::quantizer {

struct QuantizeOptions {
  // Filters with one scale each instead of one per output channel.
  bool per_tensor = false;
  // Only the filters go int8 (stored behind DEQUANTIZE, which LiteRT and
  // mgd fold at load): a quarter of the weights' bytes, float activations
  // and float arithmetic.
  bool dynamic_range = false;
  // The graph's float inputs and outputs become int8 too; otherwise they
  // stay float, with a QUANTIZE after each input and a DEQUANTIZE before
  // each output, as the converter writes them by default.
  bool int8_io = false;
};

// What the rewrite did, for `mgd quantize` to report.
struct QuantizeReport {
  int int8_nodes = 0;   // ops that run on int8 tensors
  int float_nodes = 0;  // ops left float (no rule, or inputs that do not permit)
  int conversions = 0;  // QUANTIZE and DEQUANTIZE nodes added
};

absl::StatusOr<Graph> QuantizeGraph(const Calibration& calibration, const QuantizeOptions& options,
                                    QuantizeReport* report = nullptr);

// An activation's int8 parameters for a range, widened to hold 0 (TFLite's
// converter): scale (max - min) / 255 and the zero point that puts min at
// -128, rounded.
Quantization ActivationParams(const Range& range);

}  // namespace mgd::quantizer
