#include "passes/remove_no_ops.h"

#include "ops/registry.h"

namespace mgd {
namespace {

// A float node whose output is its input unchanged (the op's definition
// says when) and is stored the same way.
bool IsNoOp(const Subgraph& s, const Node& node, const SameStorage& same_storage) {
  const Tensor& in = s.tensor(node.inputs[0]);
  const Tensor& out = s.tensor(node.outputs[0]);
  if (in.is_constant || in.type != DataType::kFloat32 || !same_storage(in.shape, out.shape)) return false;
  return ops::IsIdentity(*s.graph, node);
}

}  // namespace

void RemoveNoOps(Subgraph& subgraph, const SameStorage& same_storage) {
  std::vector<int> kept;
  for (int n : subgraph.nodes) {
    const Node& node = subgraph.node(n);
    if (node.outputs.size() == 1 && !node.inputs.empty() && IsNoOp(subgraph, node, same_storage)) {
      subgraph.aliases[node.outputs[0]] = subgraph.Resolve(node.inputs[0]);
      continue;
    }
    kept.push_back(n);
  }
  subgraph.nodes = std::move(kept);
}

}  // namespace mgd
