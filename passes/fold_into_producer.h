// The bookkeeping the folding passes share (fold_mul_add, fold_activations):
// which node writes a tensor and how many read it, and folding a node into
// the producer of its input, which then writes the folded node's output.
#pragma once

#include <map>
#include <set>

#include "passes/subgraph.h"

namespace mgd {

class ProducerFolding {
 public:
  explicit ProducerFolding(Subgraph& subgraph);

  // The node writing `tensor` when one node of the partition reads it and
  // nothing outside does, so that a fold leaves no reader without it; -1
  // otherwise.
  int SoleProducer(int tensor) const;
  // Node `n` now runs inside `into` (the producer of its input, already
  // rewritten to compute it): `into` writes n's output, whose name still
  // names n (Subgraph::folded).
  void Fold(int n, int into);
  // Drops the folded nodes from the partition's nodes.
  void Finish();

 private:
  Subgraph& subgraph_;
  std::map<int, int> readers_;   // tensor -> how many nodes read it
  std::map<int, int> producer_;  // tensor -> node writing it
  std::set<int> removed_;
};

}  // namespace mgd
