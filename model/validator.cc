#include "model/validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <deque>
#include <initializer_list>

#include "model/node_checker.h"
#include "model/status_macros.h"
#include "ops/registry.h"

namespace mgd {
namespace {

using absl::InvalidArgumentError;

constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

absl::Status ValidateTensor(const Graph& graph, int index) {
  const Tensor& t = graph.tensors[static_cast<size_t>(index)];
  if (t.shape.size() > 8) {
    return InvalidArgumentError(fmt::format("{}: field shape: rank {} is above the supported 8",
                                            TensorLabel(graph, index), t.shape.size()));
  }
  int64_t elements = 1;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] < 0) {
      return InvalidArgumentError(fmt::format(
          "{}: field shape: dimension {} is {} (dynamic shapes are not supported)",
          TensorLabel(graph, index), d, t.shape[d]));
    }
    elements *= t.shape[d];
    if (elements * static_cast<int64_t>(ElementSize(t.type)) > kMaxTensorBytes) {
      return InvalidArgumentError(fmt::format("{}: field shape: {} is larger than 2 GiB",
                                              TensorLabel(graph, index), ShapeToString(t.shape)));
    }
  }
  if (t.is_constant && !t.sparsity.has_value()) {
    const int64_t expected = elements * static_cast<int64_t>(ElementSize(t.type));
    if (static_cast<int64_t>(t.data.size()) != expected) {
      return InvalidArgumentError(fmt::format(
          "{}: field buffer: holds {} bytes, but shape {} x {} needs {}", TensorLabel(graph, index),
          t.data.size(), ShapeToString(t.shape), DataTypeName(t.type), expected));
    }
  }
  if (t.sparsity.has_value()) {
    const Sparsity& s = *t.sparsity;
    if (!t.is_constant) {
      return InvalidArgumentError(fmt::format("{}: field sparsity: only constant tensors can be sparse",
                                              TensorLabel(graph, index)));
    }
    if (s.traversal_order.size() != s.dimensions.size() ||
        s.traversal_order.size() != t.shape.size() + s.block_map.size()) {
      return InvalidArgumentError(fmt::format(
          "{}: field sparsity: traversal_order ({}), dim_metadata ({}) and rank + block_map ({}) disagree",
          TensorLabel(graph, index), s.traversal_order.size(), s.dimensions.size(),
          t.shape.size() + s.block_map.size()));
    }
  }
  return absl::OkStatus();
}

// TFLite's rules for an integer tensor's quantization parameters (its
// quantization spec): scales positive and finite, one zero point per scale,
// zero points the type can hold, and per-axis parameters along an existing
// dimension of as many entries as scales. A float tensor's are ignored, as
// TFLite ignores them.
absl::Status ValidateQuantization(const Graph& graph, int index) {
  const Tensor& t = graph.tensors[static_cast<size_t>(index)];
  if (!t.quantization.has_value()) return absl::OkStatus();
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (t.type) {
    case DataType::kInt8: lo = -128, hi = 127; break;
    case DataType::kUInt8: lo = 0, hi = 255; break;
    case DataType::kInt32:
    case DataType::kInt64: break;
    default: return absl::OkStatus();
  }
  const Quantization& q = *t.quantization;
  auto fail = [&](const std::string& what) {
    return InvalidArgumentError(fmt::format("{}: field quantization: {}", TensorLabel(graph, index), what));
  };
  for (size_t i = 0; i < q.scale.size(); ++i) {
    if (!(q.scale[i] > 0.0f) || !std::isfinite(q.scale[i])) {
      return fail(fmt::format("scale[{}] is {} (a scale must be positive and finite)", i, q.scale[i]));
    }
  }
  if (q.zero_point.size() != q.scale.size()) {
    return fail(fmt::format("{} zero points for {} scales", q.zero_point.size(), q.scale.size()));
  }
  for (size_t i = 0; i < q.zero_point.size(); ++i) {
    if (q.zero_point[i] < lo || q.zero_point[i] > hi) {
      return fail(fmt::format("zero_point[{}] is {}, outside [{}, {}] of {}", i, q.zero_point[i], lo, hi,
                              DataTypeName(t.type)));
    }
  }
  if (q.scale.size() > 1) {
    const int axis = q.quantized_dimension;
    if (axis < 0 || axis >= static_cast<int>(t.shape.size())) {
      return fail(fmt::format("quantized_dimension {} is not a dimension of {}", axis, ShapeToString(t.shape)));
    }
    if (static_cast<size_t>(t.shape[static_cast<size_t>(axis)]) != q.scale.size()) {
      return fail(fmt::format("{} per-channel scales, but dimension {} of {} has {}", q.scale.size(), axis,
                              ShapeToString(t.shape), t.shape[static_cast<size_t>(axis)]));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateNodeSignature(const Graph& graph, int index) {
  NodeChecker c(graph, index);
  const Node& node = c.node();
  if (const ops::OpDefinition* definition = ops::FindBuiltin(node.op)) return definition->validate(c);
  // A custom node is checked against its registration by the interpreter.
  if (node.op == OpKind::kCustom) return absl::OkStatus();
  return c.Fail("unknown operator");
}

}  // namespace

absl::StatusOr<std::vector<int>> TopologicalOrder(const Graph& graph) {
  const size_t num_nodes = graph.nodes.size();
  std::vector<int> producer(graph.tensors.size(), -1);
  for (size_t n = 0; n < num_nodes; ++n) {
    for (int t : graph.nodes[n].outputs) producer[static_cast<size_t>(t)] = static_cast<int>(n);
  }
  // Kahn's algorithm, taking ready nodes in model order so a model that is
  // already ordered keeps its order.
  std::vector<int> pending(num_nodes, 0);
  std::vector<std::vector<int>> consumers(num_nodes);
  for (size_t n = 0; n < num_nodes; ++n) {
    for (int t : graph.nodes[n].inputs) {
      if (t == kNoTensor) continue;
      const int p = producer[static_cast<size_t>(t)];
      if (p < 0) continue;
      ++pending[n];
      consumers[static_cast<size_t>(p)].push_back(static_cast<int>(n));
    }
  }
  std::vector<int> order;
  order.reserve(num_nodes);
  std::vector<int> ready;
  for (size_t n = 0; n < num_nodes; ++n) {
    if (pending[n] == 0) ready.push_back(static_cast<int>(n));
  }
  // A min-heap on node index keeps model order where possible.
  auto cmp = [](int a, int b) { return a > b; };
  std::make_heap(ready.begin(), ready.end(), cmp);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    const int n = ready.back();
    ready.pop_back();
    order.push_back(n);
    for (int consumer : consumers[static_cast<size_t>(n)]) {
      if (--pending[static_cast<size_t>(consumer)] == 0) {
        ready.push_back(consumer);
        std::push_heap(ready.begin(), ready.end(), cmp);
      }
    }
  }
  if (order.size() != num_nodes) {
    for (size_t n = 0; n < num_nodes; ++n) {
      if (pending[n] > 0) {
        return InvalidArgumentError(fmt::format("the graph has a cycle through {}",
                                                NodeLabel(graph, static_cast<int>(n))));
      }
    }
  }
  return order;
}

absl::Status ValidateGraph(const Graph& graph) {
  const int num_tensors = static_cast<int>(graph.tensors.size());
  auto in_range = [&](int t) { return t >= 0 && t < num_tensors; };
  for (int t = 0; t < num_tensors; ++t) {
    MGD_RETURN_IF_ERROR(ValidateTensor(graph, t));
    MGD_RETURN_IF_ERROR(ValidateQuantization(graph, t));
  }

  std::vector<int> producer(graph.tensors.size(), -1);
  std::vector<bool> is_graph_input(graph.tensors.size(), false);
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const int t = graph.inputs[i];
    if (!in_range(t)) {
      return InvalidArgumentError(fmt::format("graph input {}: tensor index {} out of range ({} tensors)", i, t, num_tensors));
    }
    if (graph.tensors[static_cast<size_t>(t)].is_constant) {
      return InvalidArgumentError(fmt::format("graph input {}: {} is a constant", i, TensorLabel(graph, t)));
    }
    if (graph.tensors[static_cast<size_t>(t)].is_variable) {
      return InvalidArgumentError(fmt::format("graph input {}: {} is a variable tensor (state the model keeps itself)", i, TensorLabel(graph, t)));
    }
    is_graph_input[static_cast<size_t>(t)] = true;
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const std::string label = NodeLabel(graph, static_cast<int>(n));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int t = node.inputs[i];
      if (t != kNoTensor && !in_range(t)) {
        return InvalidArgumentError(fmt::format("{}: field inputs: input {} is tensor index {}, out of range ({} tensors)", label, i, t, num_tensors));
      }
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int t = node.outputs[i];
      if (!in_range(t)) {
        return InvalidArgumentError(fmt::format("{}: field outputs: output {} is tensor index {}, out of range ({} tensors)", label, i, t, num_tensors));
      }
      const size_t ut = static_cast<size_t>(t);
      if (graph.tensors[ut].is_constant) {
        return InvalidArgumentError(fmt::format("{}: output {} writes to constant {}", label, i, TensorLabel(graph, t)));
      }
      if (graph.tensors[ut].is_variable) {
        return InvalidArgumentError(fmt::format("{}: output {} writes to variable tensor {} (only stateful ops update one, in place)",
                                                label, i, TensorLabel(graph, t)));
      }
      if (is_graph_input[ut]) {
        return InvalidArgumentError(fmt::format("{}: output {} writes to graph input {}", label, i, TensorLabel(graph, t)));
      }
      if (producer[ut] >= 0) {
        return InvalidArgumentError(fmt::format("{}: output {} ({}) is already written by {}", label, i,
                                                TensorLabel(graph, t), NodeLabel(graph, producer[ut])));
      }
      producer[ut] = static_cast<int>(n);
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int t : graph.nodes[n].inputs) {
      if (t == kNoTensor) continue;
      const size_t ut = static_cast<size_t>(t);
      if (!graph.tensors[ut].is_constant && !graph.tensors[ut].is_variable && !is_graph_input[ut] && producer[ut] < 0) {
        return InvalidArgumentError(fmt::format("{}: reads {}, which is neither a constant, a variable, a graph input nor written by any node",
                                                NodeLabel(graph, static_cast<int>(n)), TensorLabel(graph, t)));
      }
    }
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const int t = graph.outputs[i];
    if (!in_range(t)) {
      return InvalidArgumentError(fmt::format("graph output {}: tensor index {} out of range ({} tensors)", i, t, num_tensors));
    }
    const size_t ut = static_cast<size_t>(t);
    if (producer[ut] < 0 && !is_graph_input[ut] && !graph.tensors[ut].is_constant) {
      return InvalidArgumentError(fmt::format("graph output {}: {} is never written", i, TensorLabel(graph, t)));
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    MGD_RETURN_IF_ERROR(ValidateNodeSignature(graph, static_cast<int>(n)));
  }
  auto order = TopologicalOrder(graph);
  if (!order.ok()) return order.status();
  return absl::OkStatus();
}

}  // namespace mgd
