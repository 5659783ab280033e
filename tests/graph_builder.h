// Builds small graphs by hand for tests.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "model/graph.h"
#include "passes/subgraph.h"

namespace mgd::testing {

// Every node of `g`, in order, as one partition whose outputs are the graph's.
inline Subgraph WholeGraph(Graph& g) {
  Subgraph s{&g, {}, {g.outputs.begin(), g.outputs.end()}, {}, {}};
  for (size_t n = 0; n < g.nodes.size(); ++n) s.nodes.push_back(static_cast<int>(n));
  return s;
}

class GraphBuilder {
 public:
  int Input(const Shape& shape, const std::string& name = "") {
    const int t = Add(shape, DataType::kFloat32, name.empty() ? "input" + std::to_string(graph_.inputs.size()) : name);
    graph_.inputs.push_back(t);
    return t;
  }
  // A graph input of another type (token ids, a mask, an image's bytes).
  int Input(const Shape& shape, DataType type) {
    const int t = Add(shape, type, "input" + std::to_string(graph_.inputs.size()));
    graph_.inputs.push_back(t);
    return t;
  }
  int Tensor(const Shape& shape, DataType type = DataType::kFloat32, const std::string& name = "") {
    return Add(shape, type, name.empty() ? "t" + std::to_string(graph_.tensors.size()) : name);
  }
  int Constant(const Shape& shape, const std::vector<float>& values, const std::string& name = "") {
    const int t = Tensor(shape, DataType::kFloat32, name);
    SetData(t, values.data(), values.size() * sizeof(float));
    return t;
  }
  int ConstantInt(const Shape& shape, const std::vector<int32_t>& values, const std::string& name = "") {
    const int t = Tensor(shape, DataType::kInt32, name);
    SetData(t, values.data(), values.size() * sizeof(int32_t));
    return t;
  }
  // A variable tensor: state a stateful op (LSTM) keeps between invokes.
  int Variable(const Shape& shape, const std::string& name = "") {
    const int t = Tensor(shape, DataType::kFloat32, name);
    graph_.tensors[static_cast<size_t>(t)].is_variable = true;
    return t;
  }
  void SetData(int t, const void* data, size_t bytes) {
    auto& tensor = graph_.tensors[static_cast<size_t>(t)];
    const auto* begin = static_cast<const uint8_t*>(data);
    tensor.data.assign(begin, begin + bytes);
    tensor.is_constant = true;
  }
  int Op(OpKind op, Attributes attributes, std::vector<int> inputs, std::vector<int> outputs) {
    Node node;
    node.op = op;
    node.attributes = std::move(attributes);
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    graph_.nodes.push_back(std::move(node));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }
  void Output(int t) { graph_.outputs.push_back(t); }
  Graph& graph() { return graph_; }
  Graph Build() { return graph_; }

 private:
  int Add(const Shape& shape, DataType type, const std::string& name) {
    mgd::Tensor t;
    t.name = name;
    t.shape = shape;
    t.type = type;
    graph_.tensors.push_back(std::move(t));
    return static_cast<int>(graph_.tensors.size()) - 1;
  }
  Graph graph_;
};

// How many nodes of `graph` are `op`s.
inline int CountOps(const Graph& graph, OpKind op) {
  int count = 0;
  for (const Node& node : graph.nodes) count += node.op == op;
  return count;
}

}  // namespace mgd::testing
