// Random graphs (docs/design.md section 5, after NNAPI's random-graph CTS):
// pseudorandom DAGs of small float32 tensors and the ops the GPU delegate
// runs, every node on the GPU, against the CPU reference kernels, with the op
// bounds widened along the paths from the inputs (see ErrorBound).
//
//   MGD_RANDOM_GRAPHS=N       N graphs per backend (default 200)
//   MGD_RANDOM_GRAPH_SEED=S   only the graph of seed S (to reproduce a failure)
//
// Each graph runs once per backend, in one of four variants taken in turn by
// seed: fp32 or GpuDelegateOptions.precision fp16, fusion on or off.
// A failing graph is written to $TEST_UNDECLARED_OUTPUTS_DIR (else
// ./random_graph_failures)/<backend>/seed_<S>/: model.tflite, input_<k>.npy,
// expected_<k>.npy (CPU), actual_<precision>_<k>.npy (GPU), failure.txt.
//
// Each op kind has one maker: it picks its activation inputs among the values
// drawn so far, draws its parameters and constants, and adds one node. A node
// the delegate does not support is dropped and another drawn, so makers for
// ops the GPU cannot run yet cost nothing and start being tested when their
// shader lands. Adding an op is adding a maker, a line in Makers() and its op
// in the list of RandomGraphMakersTest, which checks every maker against the
// validator and the CPU interpreter without a GPU.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/validator.h"
#include "model/writer.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"
#include "tools/mgd/npy.h"

namespace mgd {
namespace {

using testing::GraphBuilder;

constexpr int kDefaultGraphs = 200;
constexpr int kMaxNodes = 8;
// Limits that keep graphs cheap on CPU-emulated GPUs.
constexpr int kMaxSpatial = 24;
constexpr int kMaxChannels = 64;
constexpr int64_t kMaxElements = 8192;
// Values are kept small so that the absolute part of the op bound means
// something, and error multipliers (see Value) small so the bound stays tight.
constexpr float kMaxScale = 16.0f;
constexpr float kMaxErrorMultiplier = 32.0f;

// A tensor computed by the graph (or a graph input) that later nodes may read.
struct Value {
  int tensor = -1;
  Shape shape;
  float scale = 1.0f;  // about the largest |x| to expect (inputs: 1)
  float floor = 0.0f;  // when > 0: every element is at least this
  // How many op bounds the error of this value may reach: 0 for inputs, and
  // for a node's output max over its inputs (multiplier * gain) + 1, where
  // the gain is how much the op scales an error of its inputs. With unit
  // gains that is the longest path from an input, in nodes.
  float error = 0.0f;
};

// The pseudorandom state of one graph being drawn: the numbers, the graph so
// far and its values.
class Draw {
 public:
  explicit Draw(uint32_t seed) : rng_(seed) {}

  // Only mt19937's own output is used (the standard distributions differ
  // between standard libraries; a seed must mean the same graph everywhere).
  int Int(int lo, int hi) { return lo + static_cast<int>(rng_() % static_cast<uint32_t>(hi - lo + 1)); }
  float Unit() { return static_cast<float>(rng_() >> 8) * 0x1p-24f; }
  float Real(float lo, float hi) { return lo + (hi - lo) * Unit(); }
  bool Chance(float p) { return Unit() < p; }
  template <typename T>
  T OneOf(std::initializer_list<T> options) {
    return *(options.begin() + Int(0, static_cast<int>(options.size()) - 1));
  }
  std::vector<float> Uniform(int64_t n, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = Real(-scale, scale);
    return v;
  }

  Graph& graph() { return builder_.graph(); }
  const std::vector<Value>& values() const { return values_; }

  void AddInput(const Shape& shape) { values_.push_back({builder_.Input(shape), shape, 1.0f, 0.0f, 0.0f}); }

  // An activation input for a new node among the values `ok` accepts: a graph
  // input nothing reads yet if there is one, else mostly a value nothing
  // reads yet (graphs grow deep rather than wide), else any. `avoid` is not
  // preferred (the other operand of a binary op). Null when none fits.
  const Value* Pick(const std::function<bool(const Value&)>& ok, int avoid = -1) {
    std::vector<const Value*> inputs, leaves, any;
    for (const Value& v : values_) {
      if (!ok(v)) continue;
      any.push_back(&v);
      if (v.tensor == avoid || Consumed(v.tensor)) continue;
      (IsGraphInput(v.tensor) ? inputs : leaves).push_back(&v);
    }
    if (!inputs.empty()) return inputs[static_cast<size_t>(Int(0, static_cast<int>(inputs.size()) - 1))];
    if (!leaves.empty() && Chance(0.6f))
      return leaves[static_cast<size_t>(Int(0, static_cast<int>(leaves.size()) - 1))];
    if (any.empty()) return nullptr;
    return any[static_cast<size_t>(Int(0, static_cast<int>(any.size()) - 1))];
  }

  const Value* Find(int tensor) const {
    for (const Value& v : values_) {
      if (v.tensor == tensor) return &v;
    }
    return nullptr;
  }
  bool Consumed(int tensor) {
    for (const Node& n : builder_.graph().nodes) {
      for (int t : n.inputs) {
        if (t == tensor) return true;
      }
    }
    return false;
  }
  bool IsGraphInput(int tensor) {
    const auto& in = builder_.graph().inputs;
    return std::find(in.begin(), in.end(), tensor) != in.end();
  }

  int Floats(const Shape& shape, const std::vector<float>& values) { return builder_.Constant(shape, values); }
  int Ints(const Shape& shape, const std::vector<int32_t>& values) { return builder_.ConstantInt(shape, values); }
  // Weights uniform in +-1/sqrt(fan_in) (docs/design.md section 5).
  int Weights(const Shape& shape, int fan_in) {
    return Floats(shape, Uniform(NumElements(shape), 1.0f / std::sqrt(static_cast<float>(fan_in))));
  }

  Activation FusedActivation() {
    const float p = Unit();
    if (p < 0.5f) return Activation::kNone;
    if (p < 0.65f) return Activation::kRelu;
    if (p < 0.8f) return Activation::kRelu6;
    if (p < 0.9f) return Activation::kReluN1To1;
    return Activation::kTanh;
  }

  // Adds a node with one output of `shape` whose value has `scale`, `floor`
  // and an error gain of `gain` (Value::error). False, with the node not
  // added, when the output would be too large for a quick test.
  bool Add(OpKind op, Attributes attributes, const std::vector<int>& inputs, const Shape& shape, float scale,
           float floor, float gain) {
    if (shape.empty() || shape.size() > 4 || NumElements(shape) > kMaxElements || NumElements(shape) == 0) return false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] > (d + 1 == shape.size() ? kMaxChannels : kMaxSpatial)) return false;
    }
    float error = 0.0f;
    for (int t : inputs) {
      if (const Value* v = Find(t)) error = std::max(error, v->error * gain);
    }
    error += 1.0f;
    if (error > kMaxErrorMultiplier || !(scale <= kMaxScale)) return false;
    const int out = builder_.Tensor(shape);
    builder_.Op(op, std::move(attributes), inputs, {out});
    values_.push_back({out, shape, scale, floor, error});
    return true;
  }

  // Where the graph stood before a node was drawn, to drop the node.
  struct Mark {
    size_t tensors, nodes, values;
  };
  Mark Here() { return {graph().tensors.size(), graph().nodes.size(), values_.size()}; }
  void Rollback(const Mark& m) {
    graph().tensors.resize(m.tensors);
    graph().nodes.resize(m.nodes);
    values_.resize(m.values);
  }

 private:
  std::mt19937 rng_;
  GraphBuilder builder_;
  std::vector<Value> values_;
};

bool Rank4(const Value& v) { return v.shape.size() == 4; }
bool Any(const Value&) { return true; }

// What a fused activation does to a value's scale and floor.
float ActivatedScale(float scale, Activation a) {
  switch (a) {
    case Activation::kRelu6: return std::min(scale, 6.0f);
    case Activation::kReluN1To1:
    case Activation::kTanh: return std::min(scale, 1.0f);
    default: return scale;
  }
}
float ActivatedFloor(float floor, Activation a) {
  return a == Activation::kNone || a == Activation::kRelu || a == Activation::kRelu6 ? floor : 0.0f;
}

// TFLite's windowed output size.
int WindowOut(Padding padding, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  return padding == Padding::kSame ? (in + stride - 1) / stride : (in - effective + stride) / stride;
}

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// ---- The makers: each adds one node or returns false (nothing fits). ----

// Kernel sizes, strides, dilation and padding of a window along one axis of
// size `in`: VALID windows are shrunk to fit.
struct Axis {
  int filter, stride, dilation;
};
Axis DrawAxis(Draw& d, int in, Padding padding, int max_filter, bool dilate) {
  Axis a{d.Int(1, max_filter), d.Chance(0.1f) ? 3 : d.Int(1, 2), dilate ? 2 : 1};
  if (padding == Padding::kValid) a.filter = std::min(a.filter, (in - 1) / a.dilation + 1);
  return a;
}

bool MakeConv2d(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  Conv2dAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const bool dilate = d.Chance(0.15f);
  Axis ay = DrawAxis(d, h, a.padding, 5, dilate), ax = DrawAxis(d, w, a.padding, 5, dilate);
  if (d.Chance(0.1f) && h <= 8 && w <= 8) {  // a "global" convolution down to 1x1
    a.padding = Padding::kValid;
    ay = {h, 1, 1};
    ax = {w, 1, 1};
  }
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  a.dilation_h = ay.dilation;
  a.dilation_w = ax.dilation;
  a.activation = d.FusedActivation();
  const int co = d.Chance(0.3f) ? ci : d.Int(1, 20);
  std::vector<int> inputs = {x->tensor, d.Weights({co, ay.filter, ax.filter, ci}, ay.filter * ax.filter * ci)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  const Shape out = {n, WindowOut(a.padding, h, ay.filter, ay.stride, ay.dilation),
                     WindowOut(a.padding, w, ax.filter, ax.stride, ax.dilation), co};
  return d.Add(OpKind::kConv2d, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation), 0.0f,
               1.0f);
}

bool MakeDepthwiseConv2d(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  DepthwiseConv2dAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const bool dilate = d.Chance(0.15f);
  const Axis ay = DrawAxis(d, h, a.padding, 5, dilate), ax = DrawAxis(d, w, a.padding, 5, dilate);
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  a.dilation_h = ay.dilation;
  a.dilation_w = ax.dilation;
  a.depth_multiplier = d.Chance(0.85f) ? 1 : 2;
  a.activation = d.FusedActivation();
  const int co = ci * a.depth_multiplier;
  std::vector<int> inputs = {x->tensor, d.Weights({1, ay.filter, ax.filter, co}, ay.filter * ax.filter)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  const Shape out = {n, WindowOut(a.padding, h, ay.filter, ay.stride, ay.dilation),
                     WindowOut(a.padding, w, ax.filter, ax.stride, ax.dilation), co};
  return d.Add(OpKind::kDepthwiseConv2d, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

bool MakeTransposeConv(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  TransposeConvAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  a.stride_h = d.Int(1, 2);
  a.stride_w = d.Chance(0.8f) ? a.stride_h : d.Int(1, 3);
  const int kh = d.Int(1, 4), kw = d.Int(1, 4), co = d.Int(1, 16);
  a.activation = d.FusedActivation();
  auto size = [&](int in, int k, int s) { return a.padding == Padding::kSame ? in * s : (in - 1) * s + k; };
  const Shape out = {n, size(h, kh, a.stride_h), size(w, kw, a.stride_w), co};
  // Each output sums about ceil(k/s)^2 * ci taps.
  const int fan_in = ((kh + a.stride_h - 1) / a.stride_h) * ((kw + a.stride_w - 1) / a.stride_w) * ci;
  std::vector<int> inputs = {d.Ints({4}, out), d.Weights({co, kh, kw, ci}, fan_in), x->tensor};
  const bool bias = d.Chance(0.7f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  return d.Add(OpKind::kTransposeConv, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

bool MakeFullyConnected(Draw& d) {
  // The GPU takes inputs that are spatially 1x1 ([B,C] or [B,1,1,C]); now and
  // then one that FULLY_CONNECTED flattens.
  const bool flatten = d.Chance(0.1f);
  const Value* x = d.Pick([&](const Value& v) {
    if (flatten) return v.shape.size() == 4;
    return v.shape.size() == 2 || (v.shape.size() == 4 && v.shape[1] == 1 && v.shape[2] == 1);
  });
  if (x == nullptr) return false;
  const int batch = x->shape[0];
  const int depth = static_cast<int>(NumElements(x->shape) / batch);
  const int units = d.Int(1, 20);
  FullyConnectedAttributes a;
  a.activation = d.FusedActivation();
  a.keep_num_dims = !flatten && d.Chance(0.5f);
  Shape out = {batch, units};
  if (a.keep_num_dims) {
    out = x->shape;
    out.back() = units;
  }
  std::vector<int> inputs = {x->tensor, d.Weights({units, depth}, depth)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({units}, d.Uniform(units, 1.0f)));
  return d.Add(OpKind::kFullyConnected, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

bool MakeUnary(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                             OpKind::kHardSwish, OpKind::kExp, OpKind::kRsqrt, OpKind::kElu, OpKind::kLeakyRelu});
  const Value* x = d.Pick([&](const Value& v) {
    if (op == OpKind::kExp) return v.scale <= 2.0f;     // exp's slope stays below e^2
    if (op == OpKind::kRsqrt) return v.floor >= 0.25f;  // and rsqrt's below 4
    return true;
  });
  if (x == nullptr) return false;
  const float s = x->scale, f = x->floor;
  Attributes a;
  float scale = s, floor = 0.0f, gain = 1.0f;
  switch (op) {
    case OpKind::kRelu: floor = f; break;
    case OpKind::kRelu6:
      scale = std::min(s, 6.0f);
      floor = std::min(f, 6.0f);
      break;
    case OpKind::kReluN1To1:
    case OpKind::kTanh: scale = std::min(s, 1.0f); break;
    case OpKind::kLogistic:
      scale = 1.0f;
      floor = 1.0f / (1.0f + std::exp(s));
      gain = 0.25f;
      break;
    case OpKind::kHardSwish: gain = std::max(1.0f, s / 3.0f + 0.5f); break;
    case OpKind::kExp:
      scale = std::exp(s);
      floor = std::exp(-s);
      gain = scale;
      break;
    case OpKind::kRsqrt:
      scale = 1.0f / std::sqrt(f);
      floor = 1.0f / std::sqrt(s);
      gain = 0.5f * scale * scale * scale;
      break;
    case OpKind::kElu: scale = std::max(s, 1.0f); break;
    case OpKind::kLeakyRelu: a = LeakyReluAttributes{d.Real(0.01f, 0.5f)}; break;
    default: break;
  }
  return d.Add(op, a, {x->tensor}, x->shape, scale, floor, gain);
}

// ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE on the broadcast
// forms the GPU reads: two activations of one shape, an activation and a
// per-channel [1,1,1,C] activation, a per-channel constant, a scalar constant.
bool MakeBinary(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMaximum, OpKind::kMinimum,
                             OpKind::kSquaredDifference});
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int c = x->shape.back();
  struct Operand {
    int tensor;
    Shape shape;
    float scale, floor;
    float smallest;  // the smallest |x|, for a divisor
    bool activation;
  };
  std::optional<Operand> other;
  const float form = d.Unit();
  if (form < 0.35f) {
    const Value* y = d.Pick([&](const Value& v) { return v.shape == x->shape; }, x->tensor);
    other = Operand{y->tensor, y->shape, y->scale, y->floor, y->floor, true};
  } else if (form < 0.5f && x->shape.size() == 4) {
    const Shape vector = {1, 1, 1, c};
    if (const Value* y = d.Pick([&](const Value& v) { return v.shape == vector && v.tensor != x->tensor; })) {
      other = Operand{y->tensor, y->shape, y->scale, y->floor, y->floor, true};
    }
  }
  if (other && op == OpKind::kDiv && other->floor < 0.5f) other.reset();  // dividing by ~0
  if (!other) {
    Shape shape;
    int64_t n = 1;
    if (d.Chance(0.6f)) {
      n = c;
      shape = x->shape.size() == 4 ? d.OneOf<Shape>({{c}, {1, 1, 1, c}, {1, 1, c}}) : Shape{c};
    } else {
      shape = d.OneOf<Shape>({{}, {1}, {1, 1, 1, 1}});
    }
    std::vector<float> values = d.Uniform(n, 1.0f);
    if (op == OpKind::kDiv) {
      for (float& v : values) v = (v < 0 ? -1.0f : 1.0f) * (0.5f + 1.5f * std::abs(v));
    }
    float largest = 0.0f, smallest = 2.0f, floor = 2.0f;
    for (float v : values) {
      largest = std::max(largest, std::abs(v));
      smallest = std::min(smallest, std::abs(v));
      floor = std::min(floor, v);
    }
    other = Operand{d.Floats(shape, values), shape, largest, std::max(floor, 0.0f), smallest, false};
  }
  // Either operand order, except that DIV divides by the operand kept away from 0.
  const bool swap = op == OpKind::kDiv ? (x->floor >= 0.5f && other->activation && d.Chance(0.5f)) : d.Chance(0.3f);
  Operand first{x->tensor, x->shape, x->scale, x->floor, x->floor, true};
  Operand second = *other;
  if (swap) std::swap(first, second);
  const float s1 = first.scale, s2 = second.scale;
  float scale = s1 + s2, floor = 0.0f, gain = 1.0f;
  switch (op) {
    case OpKind::kAdd: floor = first.floor > 0 && second.floor > 0 ? first.floor + second.floor : 0.0f; break;
    case OpKind::kMul:
      scale = s1 * s2;
      floor = first.floor * second.floor;
      gain = std::max(1.0f, (first.activation ? s2 : 0.0f) + (second.activation ? s1 : 0.0f));
      break;
    case OpKind::kDiv:
      scale = s1 / second.smallest;
      gain = 1.0f / second.smallest + (second.activation ? s1 / (second.smallest * second.smallest) : 0.0f);
      break;
    case OpKind::kMaximum:
      scale = std::max(s1, s2);
      floor = std::max(first.floor, second.floor);
      break;
    case OpKind::kMinimum:
      scale = std::max(s1, s2);
      floor = std::min(first.floor, second.floor);
      break;
    case OpKind::kSquaredDifference:
      scale = (s1 + s2) * (s1 + s2);
      gain = 2.0f * (s1 + s2);
      break;
    default: break;
  }
  Attributes a;
  if (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv) {
    const Activation act = d.FusedActivation();
    a = ElementwiseAttributes{act};
    scale = ActivatedScale(scale, act);
    floor = ActivatedFloor(floor, act);
  }
  return d.Add(op, a, {first.tensor, second.tensor}, BroadcastShapes(first.shape, second.shape), scale, floor, gain);
}

bool MakePrelu(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int c = x->shape.back();
  const size_t rank = x->shape.size();
  if (d.Chance(0.1f)) {  // a computed alpha: the GPU wants a constant
    const Value* alpha = d.Pick([&](const Value& v) { return v.shape == x->shape; }, x->tensor);
    return d.Add(OpKind::kPrelu, {}, {x->tensor, alpha->tensor}, x->shape, x->scale * std::max(1.0f, alpha->scale),
                 0.0f, std::max(1.0f, alpha->scale + x->scale));
  }
  Shape shape = {c};
  if (rank >= 3 && d.Chance(0.4f)) shape = {1, 1, c};
  if (rank == 4 && d.Chance(0.3f)) shape = {1, 1, 1, c};
  if (d.Chance(0.15f)) shape = {1};
  return d.Add(OpKind::kPrelu, {}, {x->tensor, d.Floats(shape, d.Uniform(NumElements(shape), 1.0f))}, x->shape,
               x->scale, 0.0f, 1.0f);
}

bool MakeSoftmax(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const float beta = d.OneOf({1.0f, 1.0f, 0.5f, 2.0f});
  // exp of differences up to 2 * scale * beta: kept small, as for EXP.
  if (2.0f * x->scale * beta > 8.0f) return false;
  return d.Add(OpKind::kSoftmax, SoftmaxAttributes{beta}, {x->tensor}, x->shape, 1.0f, 0.0f, beta);
}

bool MakePool2d(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kMaxPool2d, OpKind::kAveragePool2d});
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int h = x->shape[1], w = x->shape[2];
  Pool2dAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const Axis ay = DrawAxis(d, h, a.padding, 3, false), ax = DrawAxis(d, w, a.padding, 3, false);
  a.filter_h = ay.filter;
  a.filter_w = ax.filter;
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  if (d.Chance(0.1f)) {  // global pooling
    a.padding = Padding::kValid;
    a.filter_h = h;
    a.filter_w = w;
  }
  a.activation = d.FusedActivation();
  const Shape out = {x->shape[0], WindowOut(a.padding, h, a.filter_h, a.stride_h, 1),
                     WindowOut(a.padding, w, a.filter_w, a.stride_w, 1), x->shape[3]};
  return d.Add(op, a, {x->tensor}, out, ActivatedScale(x->scale, a.activation), 0.0f, 1.0f);
}

bool MakeMean(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  std::vector<int32_t> axes;
  if (rank == 4 && d.Chance(0.6f)) {
    axes = d.Chance(0.8f) ? std::vector<int32_t>{1, 2} : std::vector<int32_t>{2, 1};
  } else {
    axes = {d.Int(1, rank - 1)};
    if (d.Chance(0.2f)) axes[0] -= rank;
  }
  ReducerAttributes a{d.Chance(0.5f)};
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end() ||
                         std::find(axes.begin(), axes.end(), i - rank) != axes.end();
    if (!reduced)
      out.push_back(x->shape[static_cast<size_t>(i)]);
    else if (a.keep_dims)
      out.push_back(1);
  }
  return d.Add(OpKind::kMean, a, {x->tensor, d.Ints({static_cast<int>(axes.size())}, axes)}, out, x->scale, x->floor,
               1.0f);
}

bool MakeConcatenation(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = rank == 4 && d.Chance(0.6f) ? 3 : d.Int(0, rank - 1);
  auto fits = [&](const Value& v) {
    if (static_cast<int>(v.shape.size()) != rank) return false;
    for (int i = 0; i < rank; ++i) {
      if (i != axis && v.shape[static_cast<size_t>(i)] != x->shape[static_cast<size_t>(i)]) return false;
    }
    return true;
  };
  std::vector<int> inputs = {x->tensor};
  Shape out = x->shape;
  float scale = x->scale, floor = x->floor;
  const int more = d.Chance(0.3f) ? 2 : 1;
  for (int i = 0; i < more; ++i) {
    const Value* y = d.Pick(fits, x->tensor);  // x itself when nothing else fits
    inputs.push_back(y->tensor);
    out[static_cast<size_t>(axis)] += y->shape[static_cast<size_t>(axis)];
    scale = std::max(scale, y->scale);
    floor = std::min(floor, y->floor);
  }
  if (d.Chance(0.5f)) std::swap(inputs.front(), inputs.back());
  ConcatenationAttributes a;
  a.axis = d.Chance(0.2f) ? axis - rank : axis;
  a.activation = d.Chance(0.8f) ? Activation::kNone : d.FusedActivation();
  return d.Add(OpKind::kConcatenation, a, inputs, out, ActivatedScale(scale, a.activation),
               ActivatedFloor(floor, a.activation), 1.0f);
}

bool MakeReshape(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const Shape& s = x->shape;
  const int64_t n = NumElements(s);
  const int b = s[0];
  std::vector<Shape> targets;
  if (s.size() == 4) {
    targets = {{b, s[1] * s[2] * s[3]},
               {b, 1, 1, s[1] * s[2] * s[3]},
               {b, s[2], s[1], s[3]},
               {b, s[1] * s[2], s[3]},
               {b, s[1], s[2] * s[3], 1}};
  } else {
    targets = {
        {b, 1, 1, static_cast<int32_t>(n / b)}, {1, 1, 1, static_cast<int32_t>(n)}, {b, static_cast<int32_t>(n / b)}};
  }
  const Shape out = targets[static_cast<size_t>(d.Int(0, static_cast<int>(targets.size()) - 1))];
  Shape requested = out;
  if (d.Chance(0.3f)) requested[static_cast<size_t>(d.Int(0, static_cast<int>(out.size()) - 1))] = -1;
  if (d.Chance(0.3f)) {  // the older form: the shape in the options only
    return d.Add(OpKind::kReshape, ReshapeAttributes{requested}, {x->tensor}, out, x->scale, x->floor, 1.0f);
  }
  return d.Add(OpKind::kReshape, ReshapeAttributes{},
               {x->tensor, d.Ints({static_cast<int>(requested.size())}, requested)}, out, x->scale, x->floor, 1.0f);
}

bool MakeSqueezeOrExpandDims(Draw& d) {
  if (d.Chance(0.5f)) {
    const Value* x = d.Pick([](const Value& v) {
      return v.shape.size() >= 2 && std::count(v.shape.begin(), v.shape.end(), 1) > 0 &&
             std::count(v.shape.begin(), v.shape.end(), 1) < static_cast<long>(v.shape.size());
    });
    if (x == nullptr) return false;
    SqueezeAttributes a;
    Shape out;
    const bool all = d.Chance(0.3f);
    for (size_t i = 0; i < x->shape.size(); ++i) {
      if (x->shape[i] == 1 && (all || d.Chance(0.6f))) {
        if (!all) a.squeeze_dims.push_back(static_cast<int32_t>(i));
      } else {
        out.push_back(x->shape[i]);
      }
    }
    if (out.size() == x->shape.size()) return false;
    return d.Add(OpKind::kSqueeze, a, {x->tensor}, out, x->scale, x->floor, 1.0f);
  }
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() <= 3; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = d.Int(0, rank);
  Shape out = x->shape;
  out.insert(out.begin() + axis, 1);
  return d.Add(OpKind::kExpandDims, {}, {x->tensor, d.Ints({1}, {d.Chance(0.2f) ? axis - rank - 1 : axis})}, out,
               x->scale, x->floor, 1.0f);
}

bool MakePad(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const size_t rank = x->shape.size();
  std::vector<int32_t> paddings(rank * 2, 0);
  Shape out = x->shape;
  for (size_t i = 1; i < rank; ++i) {
    if (i + 1 == rank && rank == 4 && d.Chance(0.7f)) continue;  // channels: mostly not
    for (size_t side = 0; side < 2; ++side) {
      paddings[i * 2 + side] = d.Int(0, 2);
      out[i] += paddings[i * 2 + side];
    }
  }
  return d.Add(OpKind::kPad, {}, {x->tensor, d.Ints({static_cast<int>(rank), 2}, paddings)}, out, x->scale, 0.0f, 1.0f);
}

bool MakeSlice(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const size_t rank = x->shape.size();
  std::vector<int32_t> begin(rank, 0), size(rank);
  Shape out = x->shape;
  for (size_t i = 0; i < rank; ++i) {
    const int dim = x->shape[i];
    if (i == 0 || d.Chance(0.3f)) {  // the whole dimension
      size[i] = d.Chance(0.5f) ? -1 : dim;
      continue;
    }
    begin[i] = d.Int(0, dim - 1);
    out[i] = d.Int(1, dim - begin[i]);
    size[i] = d.Chance(0.2f) && begin[i] + out[i] == dim ? -1 : out[i];
  }
  const int r = static_cast<int>(rank);
  return d.Add(OpKind::kSlice, {}, {x->tensor, d.Ints({r}, begin), d.Ints({r}, size)}, out, x->scale, x->floor, 1.0f);
}

bool MakeStridedSlice(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  StridedSliceAttributes a;
  std::vector<int32_t> begin(4, 0), end(4, 0), strides(4, 1);
  Shape out;
  for (int i = 0; i < 4; ++i) {
    const int dim = x->shape[static_cast<size_t>(i)];
    if (i == 0 && dim == 1 && d.Chance(0.1f)) {  // shrink the batch axis: rank 3 out
      a.shrink_axis_mask |= 1;
      end[0] = 1;
      continue;
    }
    const int step = d.Chance(0.1f) ? -1 : d.Chance(0.3f) ? 2 : 1;
    strides[static_cast<size_t>(i)] = step;
    int start, stop;
    if (d.Chance(0.2f)) {
      a.begin_mask |= 1 << i;
      start = step > 0 ? 0 : dim - 1;
    } else {
      start = d.Int(0, dim - 1);
    }
    stop = step > 0 ? d.Int(start + 1, dim) : d.Int(-1, start - 1);
    // A reverse slice down to element 0 needs end_mask: an end of -1 would
    // mean the last element.
    if (d.Chance(0.2f) || stop == -1) {
      a.end_mask |= 1 << i;
      stop = step > 0 ? dim : -1;
    } else {
      end[static_cast<size_t>(i)] = stop;
    }
    begin[static_cast<size_t>(i)] = start;
    // Negative indices count from the end.
    if (d.Chance(0.2f) && start > 0) begin[static_cast<size_t>(i)] = start - dim;
    if (d.Chance(0.2f) && stop >= 0 && stop < dim) end[static_cast<size_t>(i)] = stop - dim;
    out.push_back(step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step);
  }
  return d.Add(OpKind::kStridedSlice, a, {x->tensor, d.Ints({4}, begin), d.Ints({4}, end), d.Ints({4}, strides)}, out,
               x->scale, x->floor, 1.0f);
}

bool MakeDepthToSpace(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() == 4 && v.shape[3] % 4 == 0; });
  if (x == nullptr) return false;
  const int block = x->shape[3] % 9 == 0 && d.Chance(0.3f) ? 3 : 2;
  const Shape out = {x->shape[0], x->shape[1] * block, x->shape[2] * block, x->shape[3] / (block * block)};
  return d.Add(OpKind::kDepthToSpace, BlockSizeAttributes{block}, {x->tensor}, out, x->scale, x->floor, 1.0f);
}

bool MakeSpaceToDepth(Draw& d) {
  const Value* x =
      d.Pick([](const Value& v) { return v.shape.size() == 4 && v.shape[1] % 2 == 0 && v.shape[2] % 2 == 0; });
  if (x == nullptr) return false;
  const Shape out = {x->shape[0], x->shape[1] / 2, x->shape[2] / 2, x->shape[3] * 4};
  return d.Add(OpKind::kSpaceToDepth, BlockSizeAttributes{2}, {x->tensor}, out, x->scale, x->floor, 1.0f);
}

bool MakeResize(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kResizeBilinear, OpKind::kResizeNearestNeighbor});
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const bool twice = d.Chance(0.5f);
  const int h = twice ? x->shape[1] * 2 : d.Int(1, 16), w = twice ? x->shape[2] * 2 : d.Int(1, 16);
  ResizeAttributes a;
  const float mode = d.Unit();
  a.align_corners = mode < 0.25f;
  a.half_pixel_centers = mode >= 0.25f && mode < 0.6f;
  return d.Add(op, a, {x->tensor, d.Ints({2}, {h, w})}, {x->shape[0], h, w, x->shape[3]}, x->scale, x->floor, 1.0f);
}

bool MakeTranspose(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  std::vector<int32_t> perm = {0, 1, 2, 3};
  for (int i = 3; i > 0; --i) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(d.Int(0, i))]);
  Shape out;
  for (int p : perm) out.push_back(x->shape[static_cast<size_t>(p)]);
  return d.Add(OpKind::kTranspose, {}, {x->tensor, d.Ints({4}, perm)}, out, x->scale, x->floor, 1.0f);
}

struct Maker {
  const char* name;
  int weight;  // how often it is drawn, relative to the others
  bool (*make)(Draw&);
};

const std::vector<Maker>& Makers() {
  static const std::vector<Maker> makers = {
      {"CONV_2D", 6, MakeConv2d},
      {"DEPTHWISE_CONV_2D", 4, MakeDepthwiseConv2d},
      {"FULLY_CONNECTED", 3, MakeFullyConnected},
      {"unary", 6, MakeUnary},
      {"binary", 8, MakeBinary},
      {"PRELU", 2, MakePrelu},
      {"SOFTMAX", 1, MakeSoftmax},
      {"pool", 2, MakePool2d},
      {"MEAN", 2, MakeMean},
      {"CONCATENATION", 2, MakeConcatenation},
      {"RESHAPE", 2, MakeReshape},
      {"SQUEEZE/EXPAND_DIMS", 1, MakeSqueezeOrExpandDims},
      {"PAD", 2, MakePad},
      {"SLICE", 1, MakeSlice},
      {"STRIDED_SLICE", 1, MakeStridedSlice},
      {"DEPTH_TO_SPACE", 1, MakeDepthToSpace},
      {"SPACE_TO_DEPTH", 1, MakeSpaceToDepth},
      {"resize", 2, MakeResize},
      {"TRANSPOSE_CONV", 2, MakeTransposeConv},
      {"TRANSPOSE", 1, MakeTranspose},
  };
  return makers;
}

const Maker& DrawMaker(Draw& d) {
  int total = 0;
  for (const Maker& m : Makers()) total += m.weight;
  int r = d.Int(0, total - 1);
  for (const Maker& m : Makers()) {
    if (r < m.weight) return m;
    r -= m.weight;
  }
  return Makers().front();
}

// ---- Drawing a whole graph ----

using SupportFn = std::function<NodeSupport(const Graph&, int)>;

struct Stats {
  int graphs = 0;                              // compared on the GPU
  std::map<std::string, int> discarded;        // graphs not compared, by why
  std::map<std::string, int> unsupported;      // node draws dropped, by op
  std::map<std::string, std::string> reasons;  // one reason per op
  std::map<std::string, int> nodes;            // nodes in compared graphs, by op
  int failures = 0;
  // The largest |gpu - cpu| / bound seen, per precision, and its seed: how
  // close the passing graphs come to the bound; and the same against one
  // op's bound (not widened).
  std::map<std::string, std::pair<double, uint32_t>> closest, closest_one_op;

  int total_discarded() const {
    int n = 0;
    for (const auto& [why, count] : discarded) n += count;
    return n;
  }
};

struct DrawnGraph {
  Graph graph;
  std::vector<float> error;  // per graph output: Value::error
  std::vector<std::vector<float>> inputs;
};

// The graph of `seed`: 1-2 inputs, 1-8 nodes the delegate supports. Null when
// no graph could be drawn (too many nodes dropped).
std::optional<DrawnGraph> DrawGraph(uint32_t seed, const SupportFn& supported, Stats& stats) {
  Draw d(seed);
  // Inputs: [B,H,W,C] (batch 1 mostly), now and then [B,C]; a second one of
  // the same shape, a per-channel [1,1,1,C] or an unrelated shape.
  auto input_shape = [&]() -> Shape {
    const int b = d.Chance(0.1f) ? 2 : 1;
    if (d.Chance(0.1f)) return {b, d.Int(1, 20)};
    return {b, d.Int(1, 12), d.Int(1, 12), d.Int(1, 20)};
  };
  const Shape first = input_shape();
  d.AddInput(first);
  if (d.Chance(0.4f)) {
    const float kind = d.Unit();
    if (kind < 0.5f)
      d.AddInput(first);
    else if (kind < 0.8f)
      d.AddInput({1, 1, 1, first.back()});
    else
      d.AddInput(input_shape());
  }
  const int target = d.Int(1, kMaxNodes);
  int nodes = 0;
  for (int attempt = 0; attempt < 20 * kMaxNodes; ++attempt) {
    bool inputs_read = true;
    for (int t : d.graph().inputs) inputs_read = inputs_read && d.Consumed(t);
    if (nodes >= target && inputs_read) break;
    const Draw::Mark mark = d.Here();
    const Maker& maker = DrawMaker(d);
    if (!maker.make(d)) {
      d.Rollback(mark);
      continue;
    }
    const int n = static_cast<int>(d.graph().nodes.size()) - 1;
    const NodeSupport support = supported(d.graph(), n);
    if (!support.supported) {
      const std::string op = OpName(d.graph().nodes.back().op);
      ++stats.unsupported[op];
      stats.reasons.emplace(op, support.reason);
      d.Rollback(mark);
      continue;
    }
    ++nodes;
  }
  for (int t : d.graph().inputs) {
    if (!d.Consumed(t)) return std::nullopt;
  }
  if (nodes == 0) return std::nullopt;
  // Outputs: every value nothing reads, and now and then one that is read too.
  DrawnGraph g;
  for (const Value& v : d.values()) {
    if (d.IsGraphInput(v.tensor)) continue;
    if (!d.Consumed(v.tensor) || d.Chance(0.15f)) {
      d.graph().outputs.push_back(v.tensor);
      g.error.push_back(v.error);
    }
  }
  // Inputs uniform in [-1, 1].
  for (int t : d.graph().inputs)
    g.inputs.push_back(d.Uniform(NumElements(d.graph().tensors[static_cast<size_t>(t)].shape), 1.0f));
  g.graph = std::move(d.graph());
  return g;
}

// The parameters a node's shapes do not show: " SAME s2x2 d1x1 RELU6".
std::string ParameterText(const Attributes& attributes) {
  return std::visit(
      [](const auto& a) -> std::string {
        using A = std::decay_t<decltype(a)>;
        std::string s;
        if constexpr (requires { a.padding; }) s += a.padding == Padding::kSame ? " SAME" : " VALID";
        if constexpr (requires { a.stride_h; }) s += fmt::format(" s{}x{}", a.stride_h, a.stride_w);
        if constexpr (requires { a.dilation_h; }) s += fmt::format(" d{}x{}", a.dilation_h, a.dilation_w);
        if constexpr (requires { a.filter_h; }) s += fmt::format(" f{}x{}", a.filter_h, a.filter_w);
        if constexpr (requires { a.axis; }) s += fmt::format(" axis {}", a.axis);
        if constexpr (std::is_same_v<A, ResizeAttributes>) {
          s += a.align_corners ? " align_corners" : a.half_pixel_centers ? " half_pixel_centers" : "";
        }
        if constexpr (requires { a.activation; }) {
          if (a.activation != Activation::kNone) s += std::string(" ") + ActivationName(a.activation);
        }
        return s;
      },
      attributes);
}

std::string Describe(const Graph& graph) {
  std::ostringstream s;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    s << "  input " << i << ": " << ShapeToString(graph.tensors[static_cast<size_t>(graph.inputs[i])].shape) << "\n";
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    s << "  " << NodeLabel(graph, static_cast<int>(n)) << ParameterText(node.attributes) << ":";
    for (int t : node.inputs) {
      if (t == kNoTensor) continue;
      const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
      s << " " << (tensor.is_constant ? "const" : "t" + std::to_string(t)) << ShapeToString(tensor.shape);
    }
    s << " -> t" << node.outputs[0] << ShapeToString(graph.tensors[static_cast<size_t>(node.outputs[0])].shape) << "\n";
  }
  s << "  outputs:";
  for (int t : graph.outputs) s << " t" << t;
  return s.str();
}

// The bound on |gpu - cpu| of one output element: docs/design.md section 5's op
// bound (fp32 1e-5 + 5*2^-23*|e|, fp16 5*2^-10*(1+|e|)) times the output's
// error multiplier (Value::error). The multiplier is the number of ops on the
// longest path from an input, each op weighted by how much it scales the
// errors of its inputs: an op adds at most its own bound and passes on the
// error it reads scaled by its gain. Convolutions and FULLY_CONNECTED have
// weights of about 1/sqrt(fan_in), so their gain is ~1; the generator keeps the
// ops that do amplify (EXP, MUL, DIV, RSQRT, SQUARED_DIFFERENCE) on values that
// keep the multiplier small (at most kMaxErrorMultiplier).
double ErrorBound(bool fp16, float multiplier, float expected) {
  const double e = std::abs(static_cast<double>(expected));
  const double op = fp16 ? 5 * std::ldexp(1.0, -10) * (1 + e) : 1e-5 + 5 * std::ldexp(1.0, -23) * e;
  return multiplier * op;
}

std::string FailureRoot() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::filesystem::path root = dir != nullptr && *dir != 0 ? dir : ".";
  return std::filesystem::absolute(root / "random_graph_failures").lexically_normal().string();
}

std::vector<float> Floats(const TensorRef& t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.elements());
}

// ---- The test ----

struct Variant {
  bool fp16;
  bool fusion;
};

class RandomGraphTest : public ::testing::TestWithParam<gpu::Api> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam());
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (mgd::testing::GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    // One delegate per option set, made once: creating devices is slow.
    for (const bool fp16 : {false, true}) {
      for (const bool fusion : {false, true}) {
        GpuDelegateOptions options;
        options.api = GetParam();
        options.validation = true;
        options.precision = Precision::Of(fp16);
        options.fusion = fusion;
        auto delegate = GpuDelegate::Create(options);
        ASSERT_TRUE(delegate.ok()) << delegate.status();
        delegates_[{fp16, fusion}] = std::move(*delegate);
      }
    }
  }
  void TearDown() override {
    for (const auto& [variant, delegate] : delegates_) {
      EXPECT_THAT(delegate->device().validation_messages(), ::testing::IsEmpty());
    }
  }

  // A node is kept only when every delegate takes it.
  NodeSupport Supported(const Graph& graph, int node) {
    for (const auto& [variant, delegate] : delegates_) {
      NodeSupport s = delegate->IsNodeSupported(graph, node);
      if (!s.supported) return s;
    }
    return {true, ""};
  }

  // Runs graph `seed` on the CPU and in both GPU variants; counts it in
  // `stats`. Failures are reported (with the graph written out) and counted.
  void RunSeed(uint32_t seed, Stats& stats);

  // Writes the failing graph, its inputs, the CPU outputs and the GPU outputs
  // of `precision`; returns the directory.
  std::string WriteFailure(uint32_t seed, const DrawnGraph& g, const Interpreter& cpu, const Interpreter* gpu,
                           const std::string& precision, const std::string& message);

  std::map<std::pair<bool, bool>, std::unique_ptr<GpuDelegate>> delegates_;  // by {fp16, fusion}
  std::set<uint32_t> written_;                                               // seeds whose failures this run wrote out
};

std::string RandomGraphTest::WriteFailure(uint32_t seed, const DrawnGraph& g, const Interpreter& cpu,
                                          const Interpreter* gpu, const std::string& precision,
                                          const std::string& message) {
  const std::string dir = FailureRoot() + "/" + gpu::ApiName(GetParam()) + "/seed_" + std::to_string(seed);
  std::error_code ec;
  if (written_.insert(seed).second) std::filesystem::remove_all(dir, ec);  // not a previous run's files
  std::filesystem::create_directories(dir, ec);
  if (ec) return "(could not create " + dir + ": " + ec.message() + ")";
  const absl::Status written = WriteModelFile(g.graph, dir + "/model.tflite");
  if (!written.ok()) return "(could not write " + dir + "/model.tflite: " + std::string(written.message()) + ")";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Shape& shape = g.graph.tensors[static_cast<size_t>(g.graph.inputs[i])].shape;
    (void)cli::WriteNpy(dir + "/input_" + std::to_string(i) + ".npy", shape, g.inputs[i].data(), g.inputs[i].size());
  }
  for (size_t k = 0; k < cpu.num_outputs(); ++k) {
    const TensorRef& e = cpu.output(k);
    (void)cli::WriteNpy(dir + "/expected_" + std::to_string(k) + ".npy", e.shape, e.as<float>(),
                        static_cast<size_t>(e.elements()));
    if (gpu != nullptr) {
      const TensorRef& a = gpu->output(k);
      (void)cli::WriteNpy(dir + "/actual_" + precision + "_" + std::to_string(k) + ".npy", a.shape, a.as<float>(),
                          static_cast<size_t>(a.elements()));
    }
  }
  std::ofstream(dir + "/failure.txt", std::ios::app) << message << "\n\n";
  return dir;
}

void RandomGraphTest::RunSeed(uint32_t seed, Stats& stats) {
  const char* api = gpu::ApiName(GetParam());
  std::optional<DrawnGraph> g = DrawGraph(
      seed, [this](const Graph& graph, int n) { return Supported(graph, n); }, stats);
  if (!g) {
    ++stats.discarded["no graph of supported nodes"];
    return;
  }
  const std::string where = std::to_string(seed);
  auto header = [&](const std::string& variant) {
    return "random graph seed " + where + " on " + api + (variant.empty() ? "" : " (" + variant + ")");
  };
  auto reproduce = [&]() {
    return "reproduce: MGD_RANDOM_GRAPH_SEED=" + where + " random_graph_test --gtest_filter='*/" + api + "'";
  };
  const absl::Status valid = ValidateGraph(g->graph);
  if (!valid.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": the validator rejects the drawn graph: " << valid << "\n" << Describe(g->graph);
    return;
  }
  auto cpu = Interpreter::Create(g->graph, InterpreterOptions{});
  if (!cpu.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": the CPU interpreter rejects the drawn graph: " << cpu.status() << "\n"
                  << Describe(g->graph);
    return;
  }
  for (size_t i = 0; i < g->inputs.size(); ++i)
    std::memcpy((*cpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
  if (absl::Status s = (*cpu)->Invoke(); !s.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": CPU invoke failed: " << s << "\n" << Describe(g->graph);
    return;
  }
  for (size_t k = 0; k < (*cpu)->num_outputs(); ++k) {
    for (float v : Floats((*cpu)->output(k))) {
      if (!std::isfinite(v)) {
        ++stats.discarded["non-finite CPU output"];
        return;
      }
    }
  }
  // One variant per graph, in turn by seed: fp32 and fp16, fusion on and off.
  // (Every graph in every variant would double the compile time on software
  // GPUs for little more coverage.)
  for (const Variant variant : {Variant{(seed / 2) % 2 == 1, seed % 2 == 0}}) {
    const std::string precision = variant.fp16 ? "fp16" : "fp32";
    const std::string name = precision + (variant.fusion ? ", fusion on" : ", fusion off");
    InterpreterOptions options;
    options.delegates.push_back(delegates_.at({variant.fp16, variant.fusion}).get());
    std::vector<std::string> log;
    options.logger = [&](LogLevel level, const std::string& m) {
      if (level >= LogLevel::kWarning) log.push_back(m);
    };
    auto gpu = Interpreter::Create(g->graph, std::move(options));
    auto fail = [&](const std::string& what, const Interpreter* run) {
      ++stats.failures;
      std::string message = header(name) + ": " + what + "\ngraph:\n" + Describe(g->graph);
      const std::string dir = WriteFailure(seed, *g, **cpu, run, precision, message);
      ADD_FAILURE() << message << "\nwritten to " << dir << "\n" << reproduce();
    };
    if (!gpu.ok()) return fail("creating the interpreter failed: " + std::string(gpu.status().message()), nullptr);
    if (!log.empty()) return fail("the delegate failed a partition it claimed: " + log.front(), nullptr);
    for (size_t n = 0; n < g->graph.nodes.size(); ++n) {
      if ((*gpu)->placements()[n].where != NodePlacement::Where::kDelegate) {
        ++stats.discarded["node not delegated"];
        return;
      }
    }
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      std::memcpy((*gpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
    }
    if (absl::Status s = (*gpu)->Invoke(); !s.ok())
      return fail("invoke failed: " + std::string(s.message()), gpu->get());
    std::string mismatches;
    for (size_t k = 0; k < g->graph.outputs.size(); ++k) {
      const TensorRef& e = (*cpu)->output(k);
      const TensorRef& a = (*gpu)->output(k);
      for (int64_t i = 0; i < e.elements(); ++i) {
        const float ev = e.as<float>()[i], av = a.as<float>()[i];
        const double bound = ErrorBound(variant.fp16, g->error[k], ev);
        const double ratio = std::abs(static_cast<double>(av) - ev) / bound;
        auto& closest = stats.closest[precision];
        if (ratio > closest.first) closest = {ratio, seed};
        auto& one_op = stats.closest_one_op[precision];
        if (ratio * g->error[k] > one_op.first) one_op = {ratio * g->error[k], seed};
        if (!(ratio <= 1.0)) {
          mismatches += fmt::format(
              "output {} (t{} {}) element {}: gpu {} cpu {}, |diff| {:.3g} > bound {:.3g} (error multiplier {})\n", k,
              g->graph.outputs[k], ShapeToString(e.shape), i, av, ev, std::abs(static_cast<double>(av) - ev), bound,
              g->error[k]);
          break;
        }
      }
    }
    if (!mismatches.empty()) return fail("results differ from the CPU:\n" + mismatches, gpu->get());
  }
  ++stats.graphs;
  for (const Node& node : g->graph.nodes) ++stats.nodes[OpName(node.op)];
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::atoi(v) : fallback;
}

TEST_P(RandomGraphTest, GpuMatchesTheCpu) {
  const auto start = std::chrono::steady_clock::now();
  Stats stats;
  const int seed_env = EnvInt("MGD_RANDOM_GRAPH_SEED", -1);
  const int wanted = seed_env >= 0 ? 1 : EnvInt("MGD_RANDOM_GRAPHS", kDefaultGraphs);
  int drawn = 0;
  if (seed_env >= 0) {
    RunSeed(static_cast<uint32_t>(seed_env), stats);
    drawn = 1;
  } else {
    // Seeds 1, 2, ... until `wanted` graphs ran (discarded ones do not count).
    for (uint32_t seed = 1; stats.graphs + stats.failures < wanted && drawn < 4 * wanted; ++seed, ++drawn) {
      RunSeed(seed, stats);
      if (stats.failures >= 10) {
        ADD_FAILURE() << "stopping after 10 failing graphs";
        break;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << gpu::ApiName(GetParam()) << ": " << stats.graphs << " random graphs matched the CPU, " << stats.failures
          << " failed, " << stats.total_discarded() << " discarded, in " << fmt::format("{:.1f}", seconds) << " s\n";
  for (const auto& [why, count] : stats.discarded) summary << "  discarded (" << why << "): " << count << "\n";
  for (const auto& [precision, worst] : stats.closest) {
    const auto& one_op = stats.closest_one_op[precision];
    summary << "  " << precision << ": largest |gpu - cpu| / bound " << fmt::format("{:.3g}", worst.first) << " (seed "
            << worst.second << "), / one op's bound " << fmt::format("{:.3g}", one_op.first) << " (seed "
            << one_op.second << ")\n";
  }
  summary << "  nodes run:";
  for (const auto& [op, count] : stats.nodes) summary << " " << op << " " << count;
  summary << "\n  node draws dropped (not supported):";
  for (const auto& [op, count] : stats.unsupported) summary << " " << op << " " << count;
  summary << "\n";
  for (const auto& [op, reason] : stats.reasons) summary << "    " << op << ": " << reason << "\n";
  std::cout << summary.str();
  if (seed_env < 0) {
    // Discards must stay the exception, or the test would quietly test little.
    EXPECT_LE(2 * stats.total_discarded(), drawn) << summary.str();
    EXPECT_GE(stats.graphs + stats.failures, wanted) << summary.str();
  }
  if (seed_env < 0 && wanted >= 100) {
    // Ops the GPU has run since its first version must keep turning up: a
    // generator that stopped taking them would otherwise go unnoticed here.
    for (OpKind op : {OpKind::kConv2d, OpKind::kDepthwiseConv2d, OpKind::kFullyConnected, OpKind::kAdd, OpKind::kMul,
                      OpKind::kPrelu, OpKind::kLogistic}) {
      EXPECT_GT(stats.nodes[OpName(op)], 0) << OpName(op) << " never ran on the GPU\n" << summary.str();
    }
  }
}

// The makers alone, every node kept (most ops have no GPU shader yet, so the
// GPU test drops them): every drawn graph must pass the validator, load in
// the CPU interpreter (whose kernels check each output shape), survive the
// writer and reader (what a failure report relies on), and run to finite
// outputs. A wrong maker then shows up here, not as a GPU failure later.
TEST(RandomGraphMakersTest, EveryGraphIsOneTheCpuRuns) {
  Stats stats;
  const SupportFn everything = [](const Graph&, int) { return NodeSupport{true, ""}; };
  int non_finite = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::optional<DrawnGraph> g = DrawGraph(seed, everything, stats);
    ASSERT_TRUE(g.has_value()) << "seed " << seed;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << "\n" << Describe(g->graph));
    ASSERT_TRUE(ValidateGraph(g->graph).ok()) << ValidateGraph(g->graph);
    auto bytes = WriteModel(g->graph);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto read = ReadModel(bytes->data(), bytes->size(), "random graph");
    ASSERT_TRUE(read.ok()) << read.status();
    auto cpu = Interpreter::Create(std::move(*read), InterpreterOptions{});
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      std::memcpy((*cpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
    }
    ASSERT_TRUE((*cpu)->Invoke().ok());
    for (size_t k = 0; k < (*cpu)->num_outputs(); ++k) {
      for (float v : Floats((*cpu)->output(k))) non_finite += std::isfinite(v) ? 0 : 1;
    }
    for (const Node& node : g->graph.nodes) ++stats.nodes[OpName(node.op)];
  }
  EXPECT_EQ(non_finite, 0);
  // Every maker's ops turn up.
  for (OpKind op : {OpKind::kConv2d,
                    OpKind::kDepthwiseConv2d,
                    OpKind::kTransposeConv,
                    OpKind::kFullyConnected,
                    OpKind::kExp,
                    OpKind::kRsqrt,
                    OpKind::kAdd,
                    OpKind::kDiv,
                    OpKind::kPrelu,
                    OpKind::kSoftmax,
                    OpKind::kMaxPool2d,
                    OpKind::kAveragePool2d,
                    OpKind::kMean,
                    OpKind::kConcatenation,
                    OpKind::kReshape,
                    OpKind::kSqueeze,
                    OpKind::kExpandDims,
                    OpKind::kPad,
                    OpKind::kSlice,
                    OpKind::kStridedSlice,
                    OpKind::kDepthToSpace,
                    OpKind::kSpaceToDepth,
                    OpKind::kResizeBilinear,
                    OpKind::kResizeNearestNeighbor,
                    OpKind::kTranspose}) {
    EXPECT_GT(stats.nodes[OpName(op)], 0) << OpName(op);
  }
}

INSTANTIATE_TEST_SUITE_P(BothApis, RandomGraphTest, ::testing::Values(gpu::Api::kVulkan, gpu::Api::kGles),
                         [](const ::testing::TestParamInfo<gpu::Api>& info) {
                           return std::string(gpu::ApiName(info.param));
                         });

}  // namespace
}  // namespace mgd
