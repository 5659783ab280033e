// A node that keeps its input element for element (a RESHAPE that changes
// how the tensor is stored; the graph passes made the others aliases) after
// a group, and a CONCATENATION each of whose inputs one group computes: the
// groups store through them (ops/concatenation/store_through.h), and they
// are no dispatch. A detector's heads end so: BlazeFace's four RESHAPEs and
// two CONCATENATIONs were six dispatches.
#include <algorithm>

#include "delegate/fusion/planner.h"
#include "ops/concatenation/store_through.h"
#include "ops/registry.h"

namespace mgd::fusion {
namespace {

// The group writing `t` whole, read by one node, its store not moved into a
// CONCATENATION yet; -1 otherwise.
int StoringGroup(const Planner& p, int t) {
  auto it = p.group_of.find(t);
  if (it == p.group_of.end() || p.IsAlias(t) || !p.SingleUse(t)) return -1;
  const FusedGroup& group = p.plan.groups[static_cast<size_t>(it->second)];
  const bool into_concat =
      !group.stores_through.empty() && p.node(group.stores_through.back()).op == OpKind::kConcatenation;
  return group.output == t && !into_concat ? it->second : -1;
}

// Whether group `index` may store `t` through node `n` too: a linkable
// shader whose store is not padded.
bool MayStoreThrough(const Planner& p, int index, int t, int n) {
  const FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  std::vector<int> through = group.stores_through;
  through.push_back(n);
  return group.output_pad < 0 && p.node(group.head).outputs.size() == 1 &&
         shaders::LeavesItsStore(p.graph(), group.head, group.producer, group.source) &&
         ops::StoreThroughOf(p.graph(), group.stores_through.empty() ? t : group.computed, through).ok();
}

void StoreThrough(Planner& p, int index, int n) {
  FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  p.group_of.erase(group.output);
  if (group.stores_through.empty()) group.computed = group.output;
  group.stores_through.push_back(n);
  group.output = p.node(n).outputs[0];
}

}  // namespace

bool FuseStoreThrough(Planner& p, int n) {
  const Node& node = p.node(n);
  const bool identity = ops::IsIdentity(p.graph(), node);
  if (node.outputs.size() != 1 || node.inputs.empty()) return false;
  if (identity) {
    const int t = node.inputs[0];
    const int index = StoringGroup(p, t);
    if (index < 0 || !MayStoreThrough(p, index, t, n)) return false;
    StoreThrough(p, index, n);
    p.group_of[node.outputs[0]] = index;
    return true;
  }
  if (node.op != OpKind::kConcatenation) return false;
  std::vector<int> writers;
  for (int t : node.inputs) {
    const int index = t == kNoTensor || p.tensor(t).is_constant ? -1 : StoringGroup(p, t);
    if (index < 0 || !MayStoreThrough(p, index, t, n)) return false;
    writers.push_back(index);
  }
  for (int index : writers) StoreThrough(p, index, n);
  // The output exists once the last of its writers ran (an operand read by
  // a later group's tail must be made before that group).
  p.group_of[node.outputs[0]] = *std::max_element(writers.begin(), writers.end());
  return true;
}

}  // namespace mgd::fusion
