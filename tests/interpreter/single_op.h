// Single-op graphs for the CPU kernel tests: operands, running one op
// through the Interpreter, and comparing with the fp32 bound of docs/design.md
// section 5.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "interpreter/interpreter.h"
#include "tests/graph_builder.h"

namespace mgd::testing::single_op {

// docs/design.md section 5: fp32 |a-e| <= 1e-5 + 5*2^-23*|e|.
// NaN and Inf must be the same NaN or Inf.
inline bool WithinTolerance(float actual, double expected) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return static_cast<double>(actual) == expected;
  return std::fabs(static_cast<double>(actual) - expected) <= 1e-5 + 5.0 * std::ldexp(1.0, -23) * std::fabs(expected);
}

// Elementwise comparison with the tolerance; reports at most 10 mismatches.
inline void ExpectClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  int failures = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (WithinTolerance(actual[i], expected[i])) continue;
    ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected " << expected[i];
    if (++failures >= 10) return;
  }
}

// Deterministic uniform values in [lo, hi).
inline std::vector<float> Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline size_t Count(const Shape& shape) { return static_cast<size_t>(NumElements(shape)); }

// One operand of a single-op graph.
struct Operand {
  enum class Kind { kInput, kConstant, kInt, kOmitted } kind = Kind::kInput;
  Shape shape;
  std::vector<float> values;
  std::vector<int32_t> ints;
};
inline Operand In(Shape shape, std::vector<float> values) {
  return {Operand::Kind::kInput, std::move(shape), std::move(values), {}};
}
inline Operand Const(Shape shape, std::vector<float> values) {
  return {Operand::Kind::kConstant, std::move(shape), std::move(values), {}};
}
inline Operand Ints(Shape shape, std::vector<int32_t> ints) {
  return {Operand::Kind::kInt, std::move(shape), {}, std::move(ints)};
}
inline Operand Omitted() { return {Operand::Kind::kOmitted, {}, {}, {}}; }

// Builds the graph of one op: kInput operands become graph inputs (in order),
// the others constants; one output tensor per entry of `outputs`.
inline Graph SingleOpGraph(OpKind op, Attributes attributes, const std::vector<Operand>& operands,
                    const std::vector<Shape>& outputs, std::vector<std::vector<float>>* input_data) {
  GraphBuilder b;
  std::vector<int> ins;
  for (const Operand& o : operands) {
    switch (o.kind) {
      case Operand::Kind::kInput:
        ins.push_back(b.Input(o.shape));
        if (input_data) input_data->push_back(o.values);
        break;
      case Operand::Kind::kConstant: ins.push_back(b.Constant(o.shape, o.values)); break;
      case Operand::Kind::kInt: ins.push_back(b.ConstantInt(o.shape, o.ints)); break;
      case Operand::Kind::kOmitted: ins.push_back(kNoTensor); break;
    }
  }
  std::vector<int> outs;
  for (const Shape& s : outputs) outs.push_back(b.Tensor(s));
  b.Op(op, std::move(attributes), ins, outs);
  for (int t : outs) b.Output(t);
  return b.Build();
}

// Creates an interpreter for `graph`, writes the inputs, invokes it once and
// returns every graph output as floats. Failures are reported to gtest.
inline std::vector<std::vector<float>> RunGraph(Graph graph, const std::vector<std::vector<float>>& inputs) {
  auto interpreter = Interpreter::Create(std::move(graph), InterpreterOptions{});
  if (!interpreter.ok()) {
    ADD_FAILURE() << "Create failed: " << interpreter.status();
    return {};
  }
  Interpreter& in = **interpreter;
  if (in.num_inputs() != inputs.size()) {
    ADD_FAILURE() << "graph has " << in.num_inputs() << " inputs, test gave " << inputs.size();
    return {};
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorRef& t = in.input(i);
    if (t.bytes != inputs[i].size() * sizeof(float)) {
      ADD_FAILURE() << "input " << i << " has " << t.bytes << " bytes, test gave " << inputs[i].size() << " floats";
      return {};
    }
    std::memcpy(t.data, inputs[i].data(), t.bytes);
  }
  if (absl::Status s = in.Invoke(); !s.ok()) {
    ADD_FAILURE() << "Invoke failed: " << s;
    return {};
  }
  std::vector<std::vector<float>> outputs;
  for (size_t k = 0; k < in.num_outputs(); ++k) {
    const TensorRef& t = in.output(k);
    const float* p = t.as<float>();
    outputs.emplace_back(p, p + t.elements());
  }
  return outputs;
}

inline std::vector<std::vector<float>> RunOp(OpKind op, Attributes attributes, const std::vector<Operand>& operands,
                                      const std::vector<Shape>& outputs) {
  std::vector<std::vector<float>> inputs;
  Graph graph = SingleOpGraph(op, std::move(attributes), operands, outputs, &inputs);
  return RunGraph(std::move(graph), inputs);
}

// The single output of a single-op graph (empty on failure, reported).
inline std::vector<float> RunSingleOp(OpKind op, Attributes attributes, const std::vector<Operand>& operands,
                               const Shape& output) {
  auto outs = RunOp(op, std::move(attributes), operands, {output});
  return outs.empty() ? std::vector<float>{} : outs[0];
}

// The status of Interpreter::Create for a single-op graph.
inline absl::Status CreateStatus(OpKind op, Attributes attributes, const std::vector<Operand>& operands,
                          const std::vector<Shape>& outputs) {
  return Interpreter::Create(SingleOpGraph(op, std::move(attributes), operands, outputs, nullptr), InterpreterOptions{})
      .status();
}

// An operand of any dtype, as its bytes: a graph input, or a constant.
struct Typed {
  DataType type;
  Shape shape;
  std::vector<uint8_t> bytes;
  bool constant = false;
};
template <typename T>
Typed Values(DataType type, Shape shape, const std::vector<T>& v, bool constant = false) {
  Typed t{type, std::move(shape), std::vector<uint8_t>(v.size() * sizeof(T)), constant};
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}
template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

// Runs one op on typed operands to an output of `out_type` and `out`; the
// output's bytes, or the error of Create or Invoke.
inline absl::StatusOr<std::vector<uint8_t>> RunTyped(OpKind op, Attributes attributes, const std::vector<Typed>& ins,
                                                     DataType out_type, const Shape& out) {
  GraphBuilder b;
  std::vector<int> inputs;
  std::vector<const Typed*> fed;
  for (const Typed& t : ins) {
    inputs.push_back(b.Tensor(t.shape, t.type));
    if (t.constant) {
      b.SetData(inputs.back(), t.bytes.data(), t.bytes.size());
    } else {
      b.graph().inputs.push_back(inputs.back());
      fed.push_back(&t);
    }
  }
  const int y = b.Tensor(out, out_type);
  b.Op(op, std::move(attributes), inputs, {y});
  b.Output(y);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  if (!interpreter.ok()) return interpreter.status();
  for (size_t i = 0; i < fed.size(); ++i) {
    std::memcpy((*interpreter)->input(i).data, fed[i]->bytes.data(), fed[i]->bytes.size());
  }
  if (absl::Status s = (*interpreter)->Invoke(); !s.ok()) return s;
  const TensorRef& t = (*interpreter)->output(0);
  return std::vector<uint8_t>(t.data, t.data + t.bytes);
}

}  // namespace mgd::testing::single_op
