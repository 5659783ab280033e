// The graph passes, in the order the compiler runs them (with fusion on;
// --no-fusion runs none). Each pass is a rewrite of a Subgraph in its own
// file, with its own test (tests/passes/).
#pragma once

#include <string_view>
#include <vector>

#include "passes/subgraph.h"

namespace mgd {

struct PassOptions {
  SameStorage same_storage;  // for RemoveNoOps
};

struct GraphPass {
  std::string_view name;
  void (*run)(Subgraph& subgraph, const PassOptions& options);
};

// fold_mul_add_into_convolutions, fold_activations_into_convolutions, then
// remove_no_ops.
const std::vector<GraphPass>& GraphPasses();

// Runs every pass of GraphPasses() in order.
void RunGraphPasses(Subgraph& subgraph, const PassOptions& options);

}  // namespace mgd
