// An int8 (or uint8) model as float ops that round as it does: how a GPU
// without integer kernels runs a quantized model (TFLite's GPU delegate's
// way). Each 8-bit activation becomes a float tensor of its real values;
// 8-bit and int32 weights become float constants, dequantized at load (the
// 8-bit ones keeping their parameters, for a GPU that stores them as 8-bit);
// after every op that computes new values, a FAKE_QUANT rounds them onto
// its output's int8 grid, so each op sees what the integer kernels would
// give it (within a quantum: float sums, another rounding of ties).
// QUANTIZE becomes that rounding, DEQUANTIZE of an activation a copy. The
// graph's own inputs and outputs keep their types, converted at its edges.
// The float activations keep their grid as int8 parameters (a uint8
// tensor's zero point less 128): their values are (q - zero point) x scale
// for integers q in [-128, 127], which a GPU may sum in integers
// (shaders::NodeContext::int8_dot). Only this pass says so: the reader drops
// what a file says of a float activation, as TFLite ignores it.
#pragma once

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

// Whether the graph computes on 8-bit activations.
bool HasInt8Activations(const Graph& graph);

absl::StatusOr<Graph> Int8AsFloat(const Graph& graph);

// A float graph's 8-bit filters (TFLite's dynamic-range "hybrid" models:
// int8 weights straight into a float CONV_2D, DEPTHWISE_CONV_2D or
// FULLY_CONNECTED) as float constants, dequantized per channel: what every
// backend then runs. TFLite's hybrid kernels quantize the activations on
// the fly instead; these are the float results they approximate.
Graph WithHybridFiltersDequantized(Graph graph);

}  // namespace mgd
