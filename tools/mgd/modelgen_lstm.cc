// An LSTM keyword spotter for `mgd modelgen lstm_kws`, as the TFLite
// converter writes a keras model of it: 49 frames of 10 MFCC features
// through two LSTM layers of 64 units (UNIDIRECTIONAL_SEQUENCE_LSTM, the
// cells' state in variable tensors), the last frame's output taken by
// STRIDED_SLICE, and a dense layer to the 12 classes of the Speech Commands
// task (Zhang et al., "Hello Edge", 2017), then SOFTMAX.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/concatenation/concatenation.h"
#include "ops/lstm/lstm.h"
#include "ops/movement/movement.h"
#include "ops/split/split.h"
#include "tools/mgd/modelgen.h"
#include "model/status_macros.h"
#include "tools/mgd/modelgen_builder.h"

namespace mgd {
namespace {

using modelgen::Builder;

// keras LSTM(units) over x [batch, time, features], batch-major: its output
// for every frame [batch, time, units]. keras' gate order is i, f, c, o;
// its kernel [features, 4 units] and recurrent kernel [units, 4 units] are
// written transposed, one [units, features] matrix per gate. The forget
// gate's bias starts at 1 (keras' unit_forget_bias), plus the draw.
int Lstm(Builder& b, const std::string& scope, int x, int units) {
  const Shape in = b.Dims(x);
  std::vector<int> inputs(20, kNoTensor);
  inputs[0] = x;
  const char* gates[] = {"input", "forget", "cell", "output"};
  for (int g = 0; g < 4; ++g) {
    const std::string gate = scope + "/" + gates[g];
    inputs[static_cast<size_t>(1 + g)] = b.Weights(gate + "/kernel", {units, in[2]}, in[2], Activation::kNone);
    inputs[static_cast<size_t>(5 + g)] = b.Weights(gate + "/recurrent_kernel", {units, units}, units, Activation::kNone);
    std::vector<float> bias(static_cast<size_t>(units));
    for (float& v : bias) v = (g == 1 ? 1.0f : 0.0f) + modelgen::kBiasRange * b.Uniform();
    inputs[static_cast<size_t>(12 + g)] = b.FloatConstant(gate + "/bias", {units}, bias);
  }
  for (int s = 0; s < 2; ++s) {
    const int state = b.AddTensor(scope + (s == 0 ? "/output_state" : "/cell_state"), {in[0], units});
    b.graph().tensors[static_cast<size_t>(state)].is_variable = true;
    inputs[static_cast<size_t>(18 + s)] = state;
  }
  return b.Node(OpKind::kUnidirectionalSequenceLstm, ops::LstmAttributes{}, inputs, scope + "/lstm",
                {in[0], in[1], units});
}

// Rewrites a graph's UNIDIRECTIONAL_SEQUENCE_LSTMs (batch-major, the plain
// keras cell) as one step of ops per frame: the frame by STRIDED_SLICE, the
// gates by two FULLY_CONNECTED (input and recurrent weights of the four
// gates stacked) and a SPLIT, LOGISTIC and TANH, the state by MUL and ADD,
// the frames' outputs by PACK. The same weights, no variable tensors.
class Unroller {
 public:
  explicit Unroller(Graph& g) : g_(g) {}

  absl::Status Unroll() {
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& node : old) {
      if (node.op != OpKind::kUnidirectionalSequenceLstm) {
        g_.nodes.push_back(std::move(node));
        continue;
      }
      const auto& a = AttributesOf<ops::LstmAttributes>(node.attributes);
      // The plain keras cell: an input gate, no peepholes, projection, layer
      // norms or clipping, batch-major.
      bool plain = node.inputs.size() == 20 && node.inputs[1] != kNoTensor && !a.time_major && a.cell_clip == 0.0f;
      for (size_t i : {9, 10, 11, 16, 17}) plain = plain && node.inputs[i] == kNoTensor;
      if (!plain) return absl::UnimplementedError("unrolling takes the plain keras LSTM cell only");
      Step(node);
    }
    for (mgd::Tensor& t : g_.tensors) t.is_variable = false;  // now unread
    return absl::OkStatus();
  }

 private:
  void Step(const Node& lstm) {
    const std::string scope = g_.tensors[static_cast<size_t>(lstm.outputs[0])].name;
    const Shape in = Dims(lstm.inputs[0]);
    const int units = Dims(lstm.inputs[2])[0];
    const int wx = Stack(scope + "/kernel", {lstm.inputs[1], lstm.inputs[2], lstm.inputs[3], lstm.inputs[4]});
    const int wh = Stack(scope + "/recurrent_kernel", {lstm.inputs[5], lstm.inputs[6], lstm.inputs[7], lstm.inputs[8]});
    const int bias = Stack(scope + "/bias", {lstm.inputs[12], lstm.inputs[13], lstm.inputs[14], lstm.inputs[15]});
    int h = Zeros(scope + "/h0", {1, units}), c = Zeros(scope + "/c0", {1, units});
    std::vector<int> frames;
    for (int t = 0; t < in[1]; ++t) {
      const std::string step = fmt::format("{}/step{}", scope, t);
      ops::StridedSliceAttributes frame;
      frame.begin_mask = frame.end_mask = 0b101;
      frame.shrink_axis_mask = 0b010;
      const int x = Add(OpKind::kStridedSlice, frame,
                        {lstm.inputs[0], Ints(step + "/begin", {0, t, 0}), Ints(step + "/end", {0, t + 1, 0}),
                         Ints(step + "/strides", {1, 1, 1})},
                        step + "/frame", {1, in[2]});
      const int from_x = Add(OpKind::kFullyConnected, ops::FullyConnectedAttributes{}, {x, wx, bias}, step + "/x", {1, 4 * units});
      const int from_h = Add(OpKind::kFullyConnected, ops::FullyConnectedAttributes{}, {h, wh, kNoTensor}, step + "/h", {1, 4 * units});
      const int sum = Add(OpKind::kAdd, ops::ElementwiseAttributes{}, {from_x, from_h}, step + "/gates", {1, 4 * units});
      std::vector<int> gates;
      for (int k = 0; k < 4; ++k) gates.push_back(NewTensor(fmt::format("{}/gates:{}", step, k), {1, units}));
      Node split;
      split.op = OpKind::kSplit;
      split.attributes = ops::SplitAttributes{4};
      split.inputs = {Ints(step + "/axis", {1}), sum};
      split.outputs = gates;
      g_.nodes.push_back(std::move(split));
      const int i = Add(OpKind::kLogistic, {}, {gates[0]}, step + "/i", {1, units});
      const int f = Add(OpKind::kLogistic, {}, {gates[1]}, step + "/f", {1, units});
      const int g = Add(OpKind::kTanh, {}, {gates[2]}, step + "/g", {1, units});
      const int o = Add(OpKind::kLogistic, {}, {gates[3]}, step + "/o", {1, units});
      c = Add(OpKind::kAdd, ops::ElementwiseAttributes{},
              {Mul(step + "/fc", f, c, units), Mul(step + "/ig", i, g, units)}, step + "/c", {1, units});
      h = Mul(step + "/h_out", o, Add(OpKind::kTanh, {}, {c}, step + "/tanh_c", {1, units}), units);
      frames.push_back(h);
    }
    Node pack;
    pack.op = OpKind::kPack;
    pack.attributes = ops::PackAttributes{in[1], 1};
    pack.inputs = frames;
    pack.outputs = lstm.outputs;
    g_.nodes.push_back(std::move(pack));
  }

  Shape Dims(int t) const { return g_.tensors[static_cast<size_t>(t)].shape; }
  int NewTensor(const std::string& name, Shape shape) {
    mgd::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    g_.tensors.push_back(std::move(t));
    return static_cast<int>(g_.tensors.size() - 1);
  }
  int Constant(const std::string& name, Shape shape, DataType type, std::vector<uint8_t> bytes) {
    const int t = NewTensor(name, std::move(shape));
    g_.tensors[static_cast<size_t>(t)].type = type;
    g_.tensors[static_cast<size_t>(t)].is_constant = true;
    g_.tensors[static_cast<size_t>(t)].data = std::move(bytes);
    return t;
  }
  int Ints(const std::string& name, const std::vector<int32_t>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return Constant(name, {static_cast<int>(values.size())}, DataType::kInt32, std::move(bytes));
  }
  int Zeros(const std::string& name, Shape shape) {
    return Constant(name, shape, DataType::kFloat32, std::vector<uint8_t>(NumElements(shape) * sizeof(float), 0));
  }
  // The gates' constants one after another along the first axis.
  int Stack(const std::string& name, const std::vector<int>& parts) {
    Shape shape = Dims(parts[0]);
    std::vector<uint8_t> bytes;
    for (int p : parts) {
      const ConstantBytes& d = g_.tensors[static_cast<size_t>(p)].data;
      bytes.insert(bytes.end(), d.data(), d.data() + d.size());
    }
    shape[0] *= static_cast<int>(parts.size());
    return Constant(name, shape, DataType::kFloat32, std::move(bytes));
  }
  int Add(OpKind op, Attributes a, std::vector<int> inputs, const std::string& name, Shape shape) {
    const int y = NewTensor(name, std::move(shape));
    Node n;
    n.op = op;
    n.attributes = std::move(a);
    n.inputs = std::move(inputs);
    n.outputs = {y};
    g_.nodes.push_back(std::move(n));
    return y;
  }
  int Mul(const std::string& name, int a, int b, int units) {
    return Add(OpKind::kMul, ops::ElementwiseAttributes{}, {a, b}, name, {1, units});
  }

  Graph& g_;
};

}  // namespace

absl::StatusOr<Graph> BuildLstmKwsUnrolled(uint64_t seed) {
  MGD_ASSIGN_OR_RETURN(Graph graph, BuildLstmKws(seed));
  MGD_RETURN_IF_ERROR(Unroller(graph).Unroll());
  graph.description = "mgd modelgen lstm_kws_unrolled: lstm_kws with its LSTMs as one step of ops per frame";
  return graph;
}

absl::StatusOr<Graph> BuildLstmKws(uint64_t seed) {
  constexpr int kFrames = 49, kFeatures = 10, kUnits = 64, kClasses = 12;
  Builder b(seed, false);
  const int features = b.Input("mfcc", {1, kFrames, kFeatures});
  const int sequence = Lstm(b, "lstm_2", Lstm(b, "lstm_1", features, kUnits), kUnits);
  // x[:, -1, :] as the converter writes it: begin [0, -1, 0], end [0, 0, 0],
  // strides 1, the first and last axes masked whole, the time axis shrunk.
  ops::StridedSliceAttributes last;
  last.begin_mask = last.end_mask = 0b101;
  last.shrink_axis_mask = 0b010;
  const int frame = b.Node(OpKind::kStridedSlice, last,
                           {sequence, b.Ints("strided_slice/begin", {0, -1, 0}), b.Ints("strided_slice/end", {0, 0, 0}),
                            b.Ints("strided_slice/strides", {1, 1, 1})},
                           "strided_slice", {1, kUnits});
  b.SoftmaxOutput("Identity", b.FullyConnected("dense", frame, kClasses));
  return b.Finish("mgd modelgen lstm_kws: an LSTM keyword spotter, 49x10 MFCC frames to 12 classes");
}

}  // namespace mgd
