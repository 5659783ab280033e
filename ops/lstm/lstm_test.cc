// LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM: on the CPU one unit by hand, the
// sequence as steps of the cell (state carried between invokes), every
// option of the cell, resetting the state, and bad cells refused by name;
// on the GPU every option against the CPU over invokes that carry the state.
// The keyword spotter (mgd modelgen lstm_kws) checks the cell against LiteRT.
#include "ops/lstm/lstm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "interpreter/interpreter.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;

struct Cell {
  int batch = 1, time = 3, input = 3, cell = 4, output = 4;
  bool cifg = false, peephole = false, projection = false, layer_norm = false, time_major = false;
  bool sequence = true;
  float cell_clip = 0.0f, proj_clip = 0.0f;
};

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-0.6f, 0.6f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A graph of one cell with deterministic weights (the same for the same
// options whatever `sequence` is): its input is graph input 0.
Graph CellGraph(const Cell& o) {
  GraphBuilder b;
  std::mt19937 rng(7);
  const Shape x_shape = !o.sequence   ? Shape{o.batch, o.input}
                        : o.time_major ? Shape{o.time, o.batch, o.input}
                                       : Shape{o.batch, o.time, o.input};
  const int x = b.Input(x_shape, "x");
  std::vector<int> in(24, kNoTensor);
  in[0] = x;
  auto matrix = [&](int rows, int cols) { return b.Constant({rows, cols}, Random(size_t(rows) * cols, rng)); };
  auto vector = [&](int n) { return b.Constant({n}, Random(size_t(n), rng)); };
  for (int gate = 0; gate < 4; ++gate) {
    const bool present = gate != 0 || !o.cifg;
    if (present) {
      in[1 + gate] = matrix(o.cell, o.input);
      in[5 + gate] = matrix(o.cell, o.output);
      in[12 + gate] = vector(o.cell);
      if (o.layer_norm) in[20 + gate] = vector(o.cell);
    }
    if (o.peephole && present && gate != 2) in[gate == 3 ? 11 : 9 + gate] = vector(o.cell);
  }
  if (o.projection) {
    in[16] = matrix(o.output, o.cell);
    in[17] = vector(o.output);
  }
  in[18] = b.Variable({o.batch, o.output}, "h");
  in[19] = b.Variable({o.batch, o.cell}, "c");
  if (!o.layer_norm) in.resize(20);
  Shape y_shape = x_shape;
  y_shape.back() = o.output;
  const int y = b.Tensor(y_shape, DataType::kFloat32, "y");
  b.Op(o.sequence ? OpKind::kUnidirectionalSequenceLstm : OpKind::kLstm,
       LstmAttributes{Activation::kTanh, o.cell_clip, o.proj_clip, o.time_major}, in, {y});
  b.Output(y);
  return b.Build();
}

std::vector<float> Invoke(Interpreter& interpreter, const std::vector<float>& x) {
  TensorRef& in = interpreter.input(0);
  EXPECT_EQ(in.bytes, x.size() * sizeof(float));
  std::memcpy(in.data, x.data(), in.bytes);
  EXPECT_TRUE(interpreter.Invoke().ok());
  const TensorRef& out = interpreter.output(0);
  return std::vector<float>(out.as<float>(), out.as<float>() + out.elements());
}

std::unique_ptr<Interpreter> Make(const Cell& o) {
  auto interpreter = Interpreter::Create(CellGraph(o), InterpreterOptions{});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  return interpreter.ok() ? std::move(*interpreter) : nullptr;
}

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

TEST(LstmTest, OneUnitByHand) {
  // One input, one unit, every weight 0.5, every recurrent weight -1 and
  // every bias 0.25, two steps of x = 1 then x = -2.
  GraphBuilder b;
  const int x = b.Input({1, 2, 1}, "x");
  std::vector<int> in(20, kNoTensor);
  in[0] = x;
  for (int gate = 0; gate < 4; ++gate) {
    in[1 + gate] = b.Constant({1, 1}, {0.5f});
    in[5 + gate] = b.Constant({1, 1}, {-1.0f});
    in[12 + gate] = b.Constant({1}, {0.25f});
  }
  in[18] = b.Variable({1, 1}, "h");
  in[19] = b.Variable({1, 1}, "c");
  const int y = b.Tensor({1, 2, 1}, DataType::kFloat32, "y");
  b.Op(OpKind::kUnidirectionalSequenceLstm, LstmAttributes{}, in, {y});
  b.Output(y);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const std::vector<float> out = Invoke(**interpreter, {1.0f, -2.0f});
  // Step 1: every gate's sum is 0.5 * 1 - 1 * 0 + 0.25 = 0.75.
  const float c1 = Sigmoid(0.75f) * std::tanh(0.75f);  // f * 0 + i * g
  const float h1 = Sigmoid(0.75f) * std::tanh(c1);
  // Step 2: every gate's sum is 0.5 * -2 - h1 + 0.25.
  const float s2 = -0.75f - h1;
  const float c2 = Sigmoid(s2) * c1 + Sigmoid(s2) * std::tanh(s2);
  const float h2 = Sigmoid(s2) * std::tanh(c2);
  EXPECT_NEAR(out[0], h1, 1e-6f);
  EXPECT_NEAR(out[1], h2, 1e-6f);
  EXPECT_NEAR(h1, 0.27607f, 1e-5f);  // the same sums on a calculator
}

// Every option of the cell: the sequence equals one LSTM step per invoke
// (its state carried from one invoke to the next), batch-major or
// time-major alike.
class LstmOptionsTest : public ::testing::TestWithParam<int> {};

Cell OptionsCase(int i) {
  Cell o;
  o.batch = 2;
  o.cifg = i & 1;
  o.peephole = i & 2;
  o.projection = i & 4;
  o.layer_norm = i & 8;
  if (o.projection) o.output = 3;
  if (i == 15) o.cell_clip = o.proj_clip = 0.3f;
  return o;
}

TEST_P(LstmOptionsTest, TheSequenceIsOneStepPerInvoke) {
  Cell o = OptionsCase(GetParam());
  std::mt19937 rng(11);
  const std::vector<float> x = Random(size_t(o.batch) * o.time * o.input, rng);  // [batch, time, input]
  auto sequence = Make(o);
  ASSERT_NE(sequence, nullptr);
  const std::vector<float> all = Invoke(*sequence, x);
  o.sequence = false;
  auto cell = Make(o);
  ASSERT_NE(cell, nullptr);
  for (int t = 0; t < o.time; ++t) {
    std::vector<float> step;
    for (int b = 0; b < o.batch; ++b) {
      const auto row = x.begin() + (int64_t{b} * o.time + t) * o.input;
      step.insert(step.end(), row, row + o.input);
    }
    const std::vector<float> y = Invoke(*cell, step);
    for (int b = 0; b < o.batch; ++b) {
      for (int j = 0; j < o.output; ++j) {
        EXPECT_EQ(y[size_t(b) * o.output + j], all[(size_t(b) * o.time + t) * o.output + j]) << "t " << t << " b " << b;
      }
    }
  }
  // Time-major: the same sequence transposed.
  o.sequence = o.time_major = true;
  auto time_major = Make(o);
  ASSERT_NE(time_major, nullptr);
  std::vector<float> xt;
  for (int t = 0; t < o.time; ++t) {
    for (int b = 0; b < o.batch; ++b) {
      const auto row = x.begin() + (int64_t{b} * o.time + t) * o.input;
      xt.insert(xt.end(), row, row + o.input);
    }
  }
  const std::vector<float> yt = Invoke(*time_major, xt);
  for (int t = 0; t < o.time; ++t) {
    for (int b = 0; b < o.batch; ++b) {
      for (int j = 0; j < o.output; ++j) {
        EXPECT_EQ(yt[(size_t(t) * o.batch + b) * o.output + j], all[(size_t(b) * o.time + t) * o.output + j]);
      }
    }
  }
  for (float v : all) {
    EXPECT_TRUE(std::isfinite(v));
    if (o.proj_clip > 0.0f) {
      EXPECT_LE(std::abs(v), o.proj_clip);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOption, LstmOptionsTest, ::testing::Range(0, 16), [](const auto& info) {
  const Cell o = OptionsCase(info.param);
  std::string name = o.cifg ? "Cifg" : "InputGate";
  if (o.peephole) name += "Peephole";
  if (o.projection) name += "Projection";
  if (o.layer_norm) name += "LayerNorm";
  if (o.cell_clip > 0.0f) name += "Clipped";
  return name;
});

TEST(LstmTest, StateCarriesOverUntilReset) {
  Cell o;
  auto interpreter = Make(o);
  ASSERT_NE(interpreter, nullptr);
  std::mt19937 rng(3);
  const std::vector<float> x = Random(size_t(o.time) * o.input, rng);
  const std::vector<float> first = Invoke(*interpreter, x);
  const std::vector<float> second = Invoke(*interpreter, x);
  EXPECT_NE(first, second);  // the second sequence starts from the first's state
  interpreter->ResetVariableTensors();
  EXPECT_EQ(Invoke(*interpreter, x), first);
}

std::string Refusal(Graph graph) {
  return std::string(Interpreter::Create(std::move(graph), InterpreterOptions{}).status().message());
}

TEST(LstmTest, BadCellsAreRefusedByName) {
  {
    Graph g = CellGraph(Cell{});
    g.tensors[size_t(g.nodes[0].inputs[18])].is_variable = false;
    g.inputs.push_back(g.nodes[0].inputs[18]);
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("input 18 (output_state) must be a variable tensor"));
  }
  {
    Graph g = CellGraph(Cell{});
    g.nodes[0].inputs[13] = kNoTensor;
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("input 13 (forget_gate_bias) is required but omitted"));
  }
  {
    Graph g = CellGraph(Cell{});
    g.nodes[0].inputs[5] = kNoTensor;  // an input gate without its recurrent weights
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("input 5 (recurrent_to_input_weights) is omitted"));
  }
  {
    Graph g = CellGraph(Cell{});
    g.tensors[size_t(g.nodes[0].inputs[7])].shape = {4, 2};
    g.tensors[size_t(g.nodes[0].inputs[7])].data.assign(8 * sizeof(float), 0);
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("input 7 (recurrent_to_cell_weights) has shape [4,2], expected [4,4]"));
  }
  {
    Cell o;
    o.layer_norm = true;
    Graph g = CellGraph(o);
    g.nodes[0].inputs[22] = kNoTensor;
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("layer normalization"));
  }
  {
    Graph g = CellGraph(Cell{});
    g.nodes[0].inputs[19] = g.nodes[0].inputs[18];
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("input 18 (output_state) and input 19 (cell_state) are one tensor"));
  }
  {
    Graph g = CellGraph(Cell{});
    g.nodes[0].inputs.resize(21, kNoTensor);
    EXPECT_THAT(Refusal(g), ::testing::HasSubstr("has 21 inputs, expected 20 or 24"));
  }
  {
    GraphBuilder b;  // a node may not write a variable tensor
    const int x = b.Input({2});
    const int v = b.Variable({2}, "state");
    b.Op(OpKind::kRelu, {}, {x}, {v});
    b.Output(v);
    EXPECT_THAT(Refusal(b.Build()), ::testing::HasSubstr("writes to variable tensor tensor 1 'state'"));
  }
}

class LstmGpuTest : public testing::DelegateTest {
 protected:
  // The cell on the GPU and on the CPU: three invokes (the state carried
  // over), a reset, one more; every node on the GPU.
  void ExpectSameAsCpuOverInvokes(const Cell& o) {
    const Graph graph = CellGraph(o);
    std::unique_ptr<Interpreter> cpu = Make(o);
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    auto gpu = Interpreter::Create(graph, std::move(options));
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    for (const NodePlacement& p : (*gpu)->placements()) ASSERT_EQ(p.where, NodePlacement::Where::kDelegate) << p.reason;
    std::mt19937 rng(5);
    const std::vector<float> x = Random(static_cast<size_t>(NumElements(graph.tensors[0].shape)), rng);
    for (int run = 0; run < 4; ++run) {
      if (run == 3) {
        cpu->ResetVariableTensors();
        (*gpu)->ResetVariableTensors();
      }
      // Later runs start from a state several steps deep: a wider bound.
      ExpectNear({Invoke(**gpu, x)}, {Invoke(*cpu, x)}, run == 3 ? 4 : 4 * (run + 1));
    }
  }
};

TEST_P(LstmGpuTest, EveryCellOptionMatchesTheCpu) {
  for (int i = 0; i < 8; ++i) {  // all but layer normalization
    SCOPED_TRACE(i);
    ExpectSameAsCpuOverInvokes(OptionsCase(i));
  }
}

TEST_P(LstmGpuTest, ClippedTimeMajorAndSingleSteps) {
  Cell o = OptionsCase(7);
  o.cell_clip = 0.2f;
  o.proj_clip = 0.1f;
  o.time_major = true;
  ExpectSameAsCpuOverInvokes(o);
  Cell step;
  step.sequence = false;
  step.batch = 3;
  ExpectSameAsCpuOverInvokes(step);
  Cell wide;  // more units than a workgroup's invocations, odd sizes
  wide.input = 13;
  wide.cell = wide.output = 150;
  ExpectSameAsCpuOverInvokes(wide);
}

TEST_P(LstmGpuTest, WhatTheGpuLeavesToTheCpuSaysWhy) {
  Cell norm;
  norm.layer_norm = true;
  Cell huge;  // a frame beyond what a workgroup shares
  huge.input = 3100;
  for (const auto& [cell, why] : {std::pair{norm, "layer-normalized"}, std::pair{huge, "shared memory"}}) {
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    auto interpreter = Interpreter::Create(CellGraph(cell), std::move(options));
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    EXPECT_EQ((*interpreter)->placements()[0].where, NodePlacement::Where::kCpu);
    EXPECT_THAT((*interpreter)->placements()[0].reason, ::testing::HasSubstr(why));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LstmGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
