#include "ops/lstm/lstm.h"
#include "ops/lstm/lstm_inputs.h"
#include "ops/reshape/reshape.h"
#include "tests/delegate/random_graph/makers.h"

namespace mgd::random_graph {

// An LSTM cell as exporters write it: UNIDIRECTIONAL_SEQUENCE_LSTM over a
// [B,T,C] value (or time-major [T,B,C]; a [B,H,W,C] one is reshaped to
// [B,H*W,C] first), or LSTM for one step of a [B,C] value, with or without
// CIFG, peepholes, a projection and clipping. Its state is two variable
// tensors, zero at the start of each interpreter's first invoke (the test
// makes new interpreters). Layer-normalized gates are left out: the GPU
// leaves them to the CPU. The output is within +-1 (with a projection,
// within its weights' absolute sum plus bias); each time step adds about one
// op bound, and an input's error reaches the output through gates of slope
// at most 1.
bool MakeLstm(Draw& d) {
  const Value* x = d.Pick([](const Value& v) {
    return v.shape.size() == 2 || v.shape.size() == 3 || (v.shape.size() == 4 && v.shape[1] * v.shape[2] <= kMaxSpatial);
  });
  if (x == nullptr) return false;
  if (x->shape.size() == 4) {
    // A feature map read as a sequence (CRNN-style text recognizers), or a
    // small one flattened into one step.
    const Shape& s = x->shape;
    const Shape to = s[1] * s[2] * s[3] <= 256 && d.Chance(0.3f) ? Shape{s[0], s[1] * s[2] * s[3]}
                                                                : Shape{s[0], s[1] * s[2], s[3]};
    if (!d.Add(OpKind::kReshape, ops::ReshapeAttributes{},
               {x->tensor, d.Ints({static_cast<int>(to.size())}, to)}, to, x->scale, x->floor, 1.0f))
      return false;
    x = &d.values().back();
  }
  const bool sequence = x->shape.size() == 3;
  ops::LstmAttributes a;
  a.time_major = sequence && d.Chance(0.3f);
  const int batch = x->shape[sequence && a.time_major ? 1 : 0];
  const int steps = sequence ? x->shape[a.time_major ? 0 : 1] : 1;
  const int input = x->shape.back();
  const int cell = d.Int(1, 20);
  const bool cifg = d.Chance(0.3f), peephole = d.Chance(0.3f), projection = d.Chance(0.3f);
  const int output = projection ? d.Int(1, 20) : cell;
  if (d.Chance(0.2f)) a.cell_clip = d.Real(0.5f, 3.0f);
  if (projection && d.Chance(0.3f)) a.proj_clip = d.Real(0.5f, 2.0f);

  std::vector<int> in(20, kNoTensor);
  in[ops::kInput] = x->tensor;
  for (size_t gate = ops::kInputGate; gate <= ops::kOutputGate; ++gate) {
    if (gate == ops::kInputGate && cifg) continue;
    in[ops::kInputToInputWeights + gate] = d.Weights({cell, input}, input);
    in[ops::kRecurrentToInputWeights + gate] = d.Weights({cell, output}, output);
    in[ops::kInputGateBias + gate] = d.Floats({cell}, d.Uniform(cell, 0.5f));
  }
  if (peephole) {
    if (!cifg) in[ops::kCellToInputWeights] = d.Floats({cell}, d.Uniform(cell, 0.5f));
    in[ops::kCellToForgetWeights] = d.Floats({cell}, d.Uniform(cell, 0.5f));
    in[ops::kCellToOutputWeights] = d.Floats({cell}, d.Uniform(cell, 0.5f));
  }
  float scale = 1.0f;
  if (projection) {
    in[ops::kProjectionWeights] = d.Weights({output, cell}, cell);
    if (d.Chance(0.5f)) in[ops::kProjectionBias] = d.Floats({output}, d.Uniform(output, 0.5f));
    scale = a.proj_clip > 0.0f ? a.proj_clip : std::sqrt(static_cast<float>(cell)) + 0.5f;
  }
  in[ops::kOutputState] = d.Variable({batch, output});
  in[ops::kCellState] = d.Variable({batch, cell});
  Shape out = x->shape;
  out.back() = output;
  return d.Add(sequence ? OpKind::kUnidirectionalSequenceLstm : OpKind::kLstm, a, in, out, scale, 0.0f, 1.0f,
               static_cast<float>(steps));
}

}  // namespace mgd::random_graph
