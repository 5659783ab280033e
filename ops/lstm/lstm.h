// LSTM (one time step) and UNIDIRECTIONAL_SEQUENCE_LSTM (a whole sequence):
// TFLite's full LSTM cell with its options (CIFG: no input gate; peepholes;
// a projection; layer-normalized gates; cell and projection clipping). The
// cell's state lives in two variable tensors (inputs 18 and 19) that the op
// updates in place, so it carries over from one invoke to the next until
// the app resets it (Interpreter::ResetVariableTensors), as in TFLite.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct LstmAttributes {
  // The cell gate's and the output's activation (TFLite's
  // fused_activation_function; TANH in every exported model).
  Activation activation = Activation::kTanh;
  float cell_clip = 0.0f;  // 0: none
  float proj_clip = 0.0f;  // 0: none
  bool time_major = false;  // UNIDIRECTIONAL_SEQUENCE_LSTM: [time, batch, input]
};

std::vector<OpDefinition> LstmOps();

}  // namespace mgd::ops
