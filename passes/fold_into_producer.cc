#include "passes/fold_into_producer.h"

#include <algorithm>

namespace mgd {

ProducerFolding::ProducerFolding(Subgraph& subgraph) : subgraph_(subgraph) {
  for (int n : subgraph.nodes) {
    const Node& node = subgraph.node(n);
    for (int t : node.inputs) {
      if (t != kNoTensor) ++readers_[t];
    }
    for (int t : node.outputs) producer_[t] = n;
  }
}

int ProducerFolding::SoleProducer(int tensor) const {
  auto it = producer_.find(tensor);
  if (it == producer_.end() || removed_.count(it->second) || subgraph_.escaping.count(tensor)) return -1;
  auto readers = readers_.find(tensor);
  return readers != readers_.end() && readers->second == 1 ? it->second : -1;
}

void ProducerFolding::Fold(int n, int into) {
  Node& producer = subgraph_.graph->nodes[static_cast<size_t>(into)];
  const int output = subgraph_.node(n).outputs[0];
  producer.outputs[0] = output;
  producer_[output] = into;
  subgraph_.folded[into].push_back(n);
  removed_.insert(n);
}

void ProducerFolding::Finish() {
  std::erase_if(subgraph_.nodes, [&](int n) { return removed_.count(n) > 0; });
}

}  // namespace mgd
