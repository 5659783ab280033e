#include "passes/passes.h"

#include "passes/fold_activations.h"
#include "passes/fold_mul_add.h"
#include "passes/remove_no_ops.h"

namespace mgd {

const std::vector<GraphPass>& GraphPasses() {
  // Folding runs before any alias exists: it reads the tensors as the
  // model has them.
  static const std::vector<GraphPass> passes = {
      {"fold_mul_add_into_convolutions", [](Subgraph& s, const PassOptions&) { FoldMulAddIntoConvolutions(s); }},
      {"fold_activations_into_convolutions",
       [](Subgraph& s, const PassOptions&) { FoldActivationsIntoConvolutions(s); }},
      {"remove_no_ops", [](Subgraph& s, const PassOptions& o) { RemoveNoOps(s, o.same_storage); }},
  };
  return passes;
}

void RunGraphPasses(Subgraph& subgraph, const PassOptions& options) {
  for (const GraphPass& pass : GraphPasses()) pass.run(subgraph, options);
}

}  // namespace mgd
