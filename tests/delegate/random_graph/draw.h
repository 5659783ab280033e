// The random-graph test's drawing state (random_graph_test.cc): the values a
// graph computes and the pseudorandom draws that build it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <random>
#include <string>
#include <vector>

#include "model/graph.h"
#include "tests/graph_builder.h"

namespace mgd::random_graph {

using testing::GraphBuilder;

inline constexpr int kDefaultGraphs = 200;
inline constexpr int kMaxNodes = 8;
// Limits that keep graphs cheap on CPU-emulated GPUs.
inline constexpr int kMaxSpatial = 24;
inline constexpr int kMaxChannels = 64;
inline constexpr int64_t kMaxElements = 8192;
// Values are kept small so that the absolute part of the op bound means
// something, and error multipliers (see Value) small so the bound stays tight.
inline constexpr float kMaxScale = 16.0f;
inline constexpr float kMaxErrorMultiplier = 32.0f;

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
  // An int32 graph input (indices, as token ids are) whose values the test
  // draws in [-1, bound]: -1 and bound lie outside [0, bound). Not a Value:
  // only the maker that adds it reads it.
  int AddIndexInput(const Shape& shape, int bound) {
    const int t = builder_.Input(shape, DataType::kInt32);
    index_bounds_[t] = bound;
    return t;
  }
  // The bound of an index input; none (float input): nullopt.
  std::optional<int> IndexBound(int tensor) const {
    auto it = index_bounds_.find(tensor);
    return it == index_bounds_.end() ? std::nullopt : std::optional<int>(it->second);
  }

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
  // A variable tensor (an LSTM's state), zero until a node writes it.
  int Variable(const Shape& shape) { return builder_.Variable(shape); }
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
  // and an error gain of `gain` (Value::error); the node adds `own` op
  // bounds of its own (an LSTM one per time step). False, with the node not
  // added, when the output would be too large for a quick test.
  bool Add(OpKind op, Attributes attributes, const std::vector<int>& inputs, const Shape& shape, float scale,
           float floor, float gain, float own = 1.0f) {
    return Add(op, std::move(attributes), inputs, std::vector<Shape>{shape}, scale, floor, gain, own);
  }
  // The same with one output per shape (SPLIT), each with that scale and floor.
  bool Add(OpKind op, Attributes attributes, const std::vector<int>& inputs, const std::vector<Shape>& shapes,
           float scale, float floor, float gain, float own = 1.0f) {
    for (const Shape& shape : shapes) {
      if (shape.empty() || shape.size() > 4 || NumElements(shape) > kMaxElements || NumElements(shape) == 0) return false;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] > (d + 1 == shape.size() ? kMaxChannels : kMaxSpatial)) return false;
      }
    }
    float error = 0.0f;
    for (int t : inputs) {
      if (const Value* v = Find(t)) error = std::max(error, v->error * gain);
    }
    error += own;
    if (error > kMaxErrorMultiplier || !(scale <= kMaxScale)) return false;
    std::vector<int> outs;
    for (const Shape& shape : shapes) {
      outs.push_back(builder_.Tensor(shape));
      values_.push_back({outs.back(), shape, scale, floor, error});
    }
    builder_.Op(op, std::move(attributes), inputs, outs);
    return true;
  }

  // Adds a node whose output (of `type`) no other maker reads: a
  // comparison's bools, their CAST to 0.0/1.0, which jump where an input
  // rounds across the comparison, so that only the maker's own next node,
  // which makes the jump continuous again, reads them. Returns the output.
  int AddHidden(OpKind op, const std::vector<int>& inputs, const Shape& shape, DataType type) {
    const int out = builder_.Tensor(shape, type);
    builder_.Op(op, {}, inputs, {out});
    return out;
  }

  // Where the graph stood before a node was drawn, to drop the node.
  struct Mark {
    size_t tensors, nodes, values, inputs;
  };
  Mark Here() { return {graph().tensors.size(), graph().nodes.size(), values_.size(), graph().inputs.size()}; }
  void Rollback(const Mark& m) {
    for (size_t i = m.inputs; i < graph().inputs.size(); ++i) index_bounds_.erase(graph().inputs[i]);
    graph().tensors.resize(m.tensors);
    graph().nodes.resize(m.nodes);
    graph().inputs.resize(m.inputs);
    values_.resize(m.values);
  }

 private:
  std::mt19937 rng_;
  GraphBuilder builder_;
  std::vector<Value> values_;
  std::map<int, int> index_bounds_;  // int32 input tensor -> bound
};

inline bool Rank4(const Value& v) { return v.shape.size() == 4; }
inline bool Any(const Value&) { return true; }

// What a fused activation does to a value's scale and floor.
inline float ActivatedScale(float scale, Activation a) {
  switch (a) {
    case Activation::kRelu6: return std::min(scale, 6.0f);
    case Activation::kReluN1To1:
    case Activation::kTanh: return std::min(scale, 1.0f);
    default: return scale;
  }
}
inline float ActivatedFloor(float floor, Activation a) {
  return a == Activation::kNone || a == Activation::kRelu || a == Activation::kRelu6 ? floor : 0.0f;
}

// TFLite's windowed output size.
inline int WindowOut(Padding padding, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  return padding == Padding::kSame ? (in + stride - 1) / stride : (in - effective + stride) / stride;
}

inline Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace mgd::random_graph
