// What LSTM's CPU kernel (lstm.cc) and GPU generator (lstm_shader.cc)
// share: TFLite's numbering of the cell's inputs, and the generator.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "shaders/generator.h"

namespace mgd::ops {

// TFLite's input numbering, the same for LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM. Inputs 20-23
// exist in the 24-input form only.
enum LstmInput : size_t {
  kInput = 0,
  kInputToInputWeights = 1,  // absent: CIFG (the input gate is 1 - the forget gate)
  kInputToForgetWeights = 2,
  kInputToCellWeights = 3,
  kInputToOutputWeights = 4,
  kRecurrentToInputWeights = 5,
  kRecurrentToForgetWeights = 6,
  kRecurrentToCellWeights = 7,
  kRecurrentToOutputWeights = 8,
  kCellToInputWeights = 9,  // peepholes, optional
  kCellToForgetWeights = 10,
  kCellToOutputWeights = 11,
  kInputGateBias = 12,
  kForgetGateBias = 13,
  kCellGateBias = 14,
  kOutputGateBias = 15,
  kProjectionWeights = 16,  // optional
  kProjectionBias = 17,
  kOutputState = 18,  // variable tensors, updated in place
  kCellState = 19,
  kInputLayerNorm = 20,  // layer-normalized gates, optional
  kForgetLayerNorm = 21,
  kCellLayerNorm = 22,
  kOutputLayerNorm = 23,
};

inline constexpr const char* kInputNames[] = {
    "input",
    "input_to_input_weights",
    "input_to_forget_weights",
    "input_to_cell_weights",
    "input_to_output_weights",
    "recurrent_to_input_weights",
    "recurrent_to_forget_weights",
    "recurrent_to_cell_weights",
    "recurrent_to_output_weights",
    "cell_to_input_weights",
    "cell_to_forget_weights",
    "cell_to_output_weights",
    "input_gate_bias",
    "forget_gate_bias",
    "cell_gate_bias",
    "output_gate_bias",
    "projection_weights",
    "projection_bias",
    "output_state",
    "cell_state",
    "input_layer_norm_coefficients",
    "forget_layer_norm_coefficients",
    "cell_layer_norm_coefficients",
    "output_layer_norm_coefficients",
};

// The four gates, in TFLite's order: the offset of each gate's input among
// the weights, biases and layer norms above.
constexpr size_t kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3;

// The whole sequence in one dispatch, one workgroup per batch row.
absl::StatusOr<shaders::GeneratedShader> LstmShader(const shaders::NodeContext& ctx);

}  // namespace mgd::ops
