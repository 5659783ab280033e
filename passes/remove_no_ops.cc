#include "passes/remove_no_ops.h"

#include <algorithm>

#include "model/constants.h"
#include "ops/movement/movement.h"

namespace mgd {
namespace {

bool IsNoOp(const Subgraph& s, const Node& node, const SameStorage& same_storage) {
  const Tensor& in = s.tensor(node.inputs[0]);
  const Tensor& out = s.tensor(node.outputs[0]);
  if (in.is_constant || in.type != DataType::kFloat32 || !same_storage(in.shape, out.shape)) return false;
  switch (node.op) {
    case OpKind::kReshape: case OpKind::kSqueeze: case OpKind::kExpandDims:
      return true;
    case OpKind::kPad: {
      const std::vector<int64_t> m = PadMargins(*s.graph, node);
      return !m.empty() && std::all_of(m.begin(), m.end(), [](int64_t v) { return v == 0; });
    }
    case OpKind::kConcatenation: return node.inputs.size() == 1;
    case OpKind::kSlice: case OpKind::kStridedSlice: {
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (!s.tensor(node.inputs[i]).is_constant) return false;
      }
      const bool strided = node.op == OpKind::kStridedSlice;
      const std::vector<int64_t> steps = strided ? ConstantInts(s.tensor(node.inputs[3])) : std::vector<int64_t>{};
      const auto& a = AttributesOf<ops::StridedSliceAttributes>(node.attributes);
      auto view = ops::ResolveSlice(in.shape, ConstantInts(s.tensor(node.inputs[1])), ConstantInts(s.tensor(node.inputs[2])),
                               strided ? &steps : nullptr, a);
      return view.ok() && view->offset == 0 && view->full_shape == in.shape &&
             std::all_of(steps.begin(), steps.end(), [](int64_t step) { return step == 1; });
    }
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor:
      return in.shape == out.shape;
    default: return false;
  }
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
