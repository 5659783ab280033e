#include "passes/fold_activations.h"

#include <algorithm>
#include <optional>

#include "ops/conv/conv.h"

namespace mgd {
namespace {

std::optional<Activation> AsFusedActivation(OpKind op) {
  switch (op) {
    case OpKind::kRelu: return Activation::kRelu;
    case OpKind::kRelu6: return Activation::kRelu6;
    case OpKind::kReluN1To1: return Activation::kReluN1To1;
    default: return std::nullopt;
  }
}

}  // namespace

void FoldActivationsIntoConvolutions(Subgraph& subgraph) {
  Graph& graph = *subgraph.graph;
  std::map<int, int> consumers;
  for (int n : subgraph.nodes) {
    for (int t : graph.nodes[static_cast<size_t>(n)].inputs) {
      if (t != kNoTensor) ++consumers[t];
    }
  }
  std::map<int, int> producer;  // tensor -> node
  for (int n : subgraph.nodes) {
    for (int t : graph.nodes[static_cast<size_t>(n)].outputs) producer[t] = n;
  }
  std::set<int> removed;
  for (int n : subgraph.nodes) {
    const Node& relu = graph.nodes[static_cast<size_t>(n)];
    const std::optional<Activation> activation = AsFusedActivation(relu.op);
    if (!activation || relu.inputs.size() != 1 || relu.outputs.size() != 1) continue;
    const int t = relu.inputs[0];
    auto it = producer.find(t);
    if (it == producer.end() || consumers.at(t) != 1 || subgraph.escaping.count(t)) continue;
    Node& conv = graph.nodes[static_cast<size_t>(it->second)];
    if ((conv.op != OpKind::kConv2d && conv.op != OpKind::kDepthwiseConv2d) || conv.outputs.size() != 1 ||
        graph.tensors[static_cast<size_t>(t)].type != DataType::kFloat32 ||
        graph.tensors[static_cast<size_t>(relu.outputs[0])].shape != graph.tensors[static_cast<size_t>(t)].shape ||
        ops::ConvolutionActivation(conv) != Activation::kNone) {
      continue;
    }
    ops::SetConvolutionActivation(conv, *activation);
    conv.outputs[0] = relu.outputs[0];
    producer[relu.outputs[0]] = it->second;
    subgraph.folded[it->second].push_back(n);
    removed.insert(n);
  }
  std::erase_if(subgraph.nodes, [&](int n) { return removed.count(n) > 0; });
}

}  // namespace mgd
