// What the graph passes work on: one partition of a graph, in the compiler's
// own copy of the graph, which the passes may change (nodes rewritten,
// tensors added). Passes know nothing of GPUs: any backend can run them.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "model/graph.h"

namespace mgd {

struct Subgraph {
  Graph* graph = nullptr;
  std::vector<int> nodes;      // the nodes still to run, in execution order
  std::set<int> escaping;      // tensors read outside the partition (or graph outputs)
  std::map<int, int> aliases;  // tensor -> tensor whose storage it shares (a removed no-op's output)
  // node -> the nodes a pass folded into it (a MUL into a convolution's
  // weights, a RELU into its activation): their outputs' names still name it.
  std::map<int, std::vector<int>> folded;

  // The tensor whose storage `tensor` is.
  int Resolve(int tensor) const {
    auto it = aliases.find(tensor);
    return it == aliases.end() ? tensor : it->second;
  }
  const Tensor& tensor(int t) const { return graph->tensors[static_cast<size_t>(t)]; }
  const Node& node(int n) const { return graph->nodes[static_cast<size_t>(n)]; }
};

// Whether a tensor of shape `a` and one of shape `b` are stored alike on the
// backend (GPU: the same PHWC4 view), so that a reshape between them moves
// no data.
using SameStorage = std::function<bool(const Shape& a, const Shape& b)>;

}  // namespace mgd
