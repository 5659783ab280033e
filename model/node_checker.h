// Checks of one node's signature (arity, dtypes, ranks, constants, fields)
// with error messages that name the node: what the validator and each op's
// own validation rules (ops/) are written with.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/graph.h"

namespace mgd {

// Checks a node's arity and the dtypes of its inputs.
class NodeChecker {
 public:
  NodeChecker(const Graph& graph, int index)
      : graph_(graph), index_(index), node_(graph.nodes[static_cast<size_t>(index)]) {}

  absl::Status Fail(const std::string& message) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}", NodeLabel(graph_, index_), message));
  }

  absl::Status Arity(size_t min_inputs, size_t max_inputs, size_t outputs) const {
    if (node_.inputs.size() < min_inputs || node_.inputs.size() > max_inputs) {
      return Fail(min_inputs == max_inputs
                      ? fmt::format("has {} inputs, expected {}", node_.inputs.size(), min_inputs)
                      : fmt::format("has {} inputs, expected {} to {}", node_.inputs.size(),
                                    min_inputs, max_inputs));
    }
    if (node_.outputs.size() != outputs) {
      return Fail(fmt::format("has {} outputs, expected {}", node_.outputs.size(), outputs));
    }
    for (size_t i = 0; i < min_inputs; ++i) {
      if (node_.inputs[i] == kNoTensor) return Fail(fmt::format("input {} is required but omitted", i));
    }
    return absl::OkStatus();
  }

  bool Present(size_t input) const {
    return input < node_.inputs.size() && node_.inputs[input] != kNoTensor;
  }
  const Tensor& In(size_t input) const { return graph_.tensors[static_cast<size_t>(node_.inputs[input])]; }
  const Tensor& Out(size_t output) const { return graph_.tensors[static_cast<size_t>(node_.outputs[output])]; }

  absl::Status InputType(size_t input, std::initializer_list<DataType> allowed) const {
    if (!Present(input)) return absl::OkStatus();
    const Tensor& t = In(input);
    if (std::find(allowed.begin(), allowed.end(), t.type) != allowed.end()) return absl::OkStatus();
    std::vector<std::string> names;
    for (DataType d : allowed) names.push_back(DataTypeName(d));
    return Fail(fmt::format("input {} ({}) has type {}, expected {}", input,
                            TensorLabel(graph_, node_.inputs[input]), DataTypeName(t.type),
                            fmt::join(names, " or ")));
  }

  absl::Status OutputType(size_t output, DataType type) const {
    const Tensor& t = Out(output);
    if (t.type == type) return absl::OkStatus();
    return Fail(fmt::format("output {} ({}) has type {}, expected {}", output,
                            TensorLabel(graph_, node_.outputs[output]), DataTypeName(t.type),
                            DataTypeName(type)));
  }

  absl::Status InputRank(size_t input, size_t rank) const {
    if (!Present(input) || In(input).shape.size() == rank) return absl::OkStatus();
    return Fail(fmt::format("input {} ({}) has shape {}, expected rank {}", input,
                            TensorLabel(graph_, node_.inputs[input]),
                            ShapeToString(In(input).shape), rank));
  }

  absl::Status Constant(size_t input) const {
    if (!Present(input) || In(input).is_constant) return absl::OkStatus();
    return Fail(fmt::format("input {} ({}) must be a constant tensor", input,
                            TensorLabel(graph_, node_.inputs[input])));
  }

  absl::Status Positive(const char* field, int32_t value) const {
    if (value >= 1) return absl::OkStatus();
    return Fail(fmt::format("field {}: {} must be at least 1", field, value));
  }

  absl::Status ActivationOk(Activation a) const {
    if (a != Activation::kSignBit) return absl::OkStatus();
    return Fail("field fused_activation_function: SIGN_BIT is not supported");
  }

  // A float tensor and a constant int32/int64 tensor that indexes it (axes,
  // a permutation, paddings), giving one float output: MEAN, TRANSPOSE, PAD.
  absl::Status FloatWithConstantIndices() const {
    if (auto s = Arity(2, 2, 1); !s.ok()) return s;
    if (auto s = InputType(0, {DataType::kFloat32}); !s.ok()) return s;
    if (auto s = InputType(1, {DataType::kInt32, DataType::kInt64}); !s.ok()) return s;
    if (auto s = Constant(1); !s.ok()) return s;
    return OutputType(0, DataType::kFloat32);
  }

  const Node& node() const { return node_; }

 private:
  const Graph& graph_;
  int index_;
  const Node& node_;
};

}  // namespace mgd
