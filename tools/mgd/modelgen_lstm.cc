// An LSTM keyword spotter for `mgd modelgen lstm_kws`, as the TFLite
// converter writes a keras model of it: 49 frames of 10 MFCC features
// through two LSTM layers of 64 units (UNIDIRECTIONAL_SEQUENCE_LSTM, the
// cells' state in variable tensors), the last frame's output taken by
// STRIDED_SLICE, and a dense layer to the 12 classes of the Speech Commands
// task (Zhang et al., "Hello Edge", 2017), then SOFTMAX. Its unrolled twin
// has the same weights and each LSTM written out as plain ops per frame.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ops/concatenation/concatenation.h"
#include "ops/lstm/lstm.h"
#include "ops/movement/movement.h"
#include "tools/mgd/modelgen.h"
#include "tools/mgd/modelgen_builder.h"

namespace mgd {
namespace {

using modelgen::Builder;

// x[:, t, :] of [batch, time, features] as the converter writes it: the
// first and last axes masked whole, the time axis shrunk.
int Frame(Builder& b, const std::string& name, int x, int t) {
  ops::StridedSliceAttributes frame;
  frame.begin_mask = frame.end_mask = 0b101;
  frame.shrink_axis_mask = 0b010;
  const Shape in = b.Dims(x);
  return b.Node(OpKind::kStridedSlice, frame,
                {x, b.Ints(name + "/begin", {0, t, 0}), b.Ints(name + "/end", {0, t == -1 ? 0 : t + 1, 0}),
                 b.Ints(name + "/strides", {1, 1, 1})},
                name, {in[0], in[2]});
}

// One frame of the cell as plain ops: per gate a FULLY_CONNECTED of the
// frame (with the bias) and of the previous output, their ADD and the
// gate's activation; then c = f * c + i * g and h = o * tanh(c).
void Step(Builder& b, const std::string& step, const std::vector<int>& cell, int x, int& h, int& c) {
  const Shape shape = b.Dims(h);
  int gate[4];
  for (int g = 0; g < 4; ++g) {
    const std::string name = fmt::format("{}/gate{}", step, g);
    const int from_x = b.Node(OpKind::kFullyConnected, ops::FullyConnectedAttributes{},
                              {x, cell[static_cast<size_t>(1 + g)], cell[static_cast<size_t>(12 + g)]}, name + "/x", shape);
    const int from_h = b.Node(OpKind::kFullyConnected, ops::FullyConnectedAttributes{},
                              {h, cell[static_cast<size_t>(5 + g)], kNoTensor}, name + "/h", shape);
    gate[g] = b.Node(g == 2 ? OpKind::kTanh : OpKind::kLogistic, {}, {b.Add(name + "/sum", from_x, from_h)}, name, shape);
  }
  c = b.Add(step + "/c", b.Elementwise(OpKind::kMul, step + "/fc", gate[1], c),
            b.Elementwise(OpKind::kMul, step + "/ig", gate[0], gate[2]));
  h = b.Elementwise(OpKind::kMul, step + "/h", gate[3], b.Node(OpKind::kTanh, {}, {c}, step + "/tanh_c", shape));
}

// keras LSTM(units) over x [batch, time, features], batch-major: its output
// for every frame [batch, time, units]. keras' gate order is i, f, c, o;
// its kernel [features, 4 units] and recurrent kernel [units, 4 units] are
// written transposed, one [units, features] matrix per gate. The forget
// gate's bias starts at 1 (keras' unit_forget_bias), plus the draw.
// `unrolled`: the same constants, each frame by Step, the frames' outputs
// by PACK, no state kept.
int Lstm(Builder& b, const std::string& scope, int x, int units, bool unrolled) {
  const Shape in = b.Dims(x);
  std::vector<int> cell(20, kNoTensor);
  cell[0] = x;
  const char* gates[] = {"input", "forget", "cell", "output"};
  for (int g = 0; g < 4; ++g) {
    const std::string gate = scope + "/" + gates[g];
    cell[static_cast<size_t>(1 + g)] = b.Weights(gate + "/kernel", {units, in[2]}, in[2], Activation::kNone);
    cell[static_cast<size_t>(5 + g)] = b.Weights(gate + "/recurrent_kernel", {units, units}, units, Activation::kNone);
    std::vector<float> bias(static_cast<size_t>(units));
    for (float& v : bias) v = (g == 1 ? 1.0f : 0.0f) + modelgen::kBiasRange * b.Uniform();
    cell[static_cast<size_t>(12 + g)] = b.FloatConstant(gate + "/bias", {units}, bias);
  }
  const Shape out{in[0], in[1], units};
  if (unrolled) {
    const std::vector<float> zeros(static_cast<size_t>(in[0]) * units, 0.0f);
    int h = b.FloatConstant(scope + "/h0", {in[0], units}, zeros), c = b.FloatConstant(scope + "/c0", {in[0], units}, zeros);
    std::vector<int> frames;
    for (int t = 0; t < in[1]; ++t) {
      const std::string step = fmt::format("{}/step{}", scope, t);
      Step(b, step, cell, Frame(b, step + "/frame", x, t), h, c);
      frames.push_back(h);
    }
    return b.Node(OpKind::kPack, ops::PackAttributes{in[1], 1}, frames, scope + "/lstm", out);
  }
  for (int s = 0; s < 2; ++s) {
    const int state = b.AddTensor(scope + (s == 0 ? "/output_state" : "/cell_state"), {in[0], units});
    b.graph().tensors[static_cast<size_t>(state)].is_variable = true;
    cell[static_cast<size_t>(18 + s)] = state;
  }
  return b.Node(OpKind::kUnidirectionalSequenceLstm, ops::LstmAttributes{}, cell, scope + "/lstm", out);
}

Graph Kws(uint64_t seed, bool unrolled) {
  constexpr int kFrames = 49, kFeatures = 10, kUnits = 64, kClasses = 12;
  Builder b(seed, false);
  const int features = b.Input("mfcc", {1, kFrames, kFeatures});
  const int sequence = Lstm(b, "lstm_2", Lstm(b, "lstm_1", features, kUnits, unrolled), kUnits, unrolled);
  b.SoftmaxOutput("Identity", b.FullyConnected("dense", Frame(b, "strided_slice", sequence, -1), kClasses));
  return b.Finish(unrolled ? "mgd modelgen lstm_kws_unrolled: lstm_kws with its LSTMs as plain ops per frame"
                           : "mgd modelgen lstm_kws: an LSTM keyword spotter, 49x10 MFCC frames to 12 classes");
}

}  // namespace

absl::StatusOr<Graph> BuildLstmKws(uint64_t seed) { return Kws(seed, false); }
absl::StatusOr<Graph> BuildLstmKwsUnrolled(uint64_t seed) { return Kws(seed, true); }

}  // namespace mgd
