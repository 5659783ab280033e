// A CONCATENATION each of whose inputs one group computes, directly or
// through nodes that keep their input element for element (RESHAPEs, each a
// group of its own): those groups store their parts of the concatenation's
// output themselves (ops/concatenation/concat_store.h), and neither the
// RESHAPEs nor the CONCATENATION is a dispatch. A detector's heads end so:
// BlazeFace's four RESHAPEs and two CONCATENATIONs were six dispatches.
#include <algorithm>
#include <optional>

#include "delegate/fusion/planner.h"
#include "ops/concatenation/concat_store.h"
#include "ops/registry.h"

namespace mgd::fusion {
namespace {

struct Writer {
  int group = -1;
  int computed = -1;         // the tensor its shader computes
  std::vector<int> through;  // FusedGroup::stores_through
};

bool LoneIdentity(const Planner& p, const FusedGroup& group) {
  const Node& head = p.node(group.head);
  const ops::OpDefinition* definition = ops::FindBuiltin(head.op);
  return group.nodes().size() == 1 && !head.inputs.empty() && definition != nullptr &&
         definition->is_identity != nullptr && definition->is_identity(p.graph(), head);
}

// The group computing input `t` of concatenation `concat`, past the lone
// identities between them, when its store may move there.
std::optional<Writer> WriterOf(const Planner& p, int t, int concat) {
  Writer w;
  w.through = {concat};
  for (int at = t;;) {
    const int index = p.SoleWriter(at);
    if (index < 0) return std::nullopt;
    const FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
    const Node& head = p.node(group.head);
    if (LoneIdentity(p, group) && p.SoleWriter(head.inputs[0]) >= 0) {
      w.through.insert(w.through.begin(), group.head);
      at = head.inputs[0];
      continue;
    }
    // The compiler moves a linkable shader's store; one that shares memory
    // within its workgroups (a producer, a gate) or pads its write keeps it.
    if (group.producer >= 0 || group.source >= 0 || group.input_gate >= 0 || group.output_pad >= 0 ||
        head.outputs.size() != 1 || !shaders::LeavesItsStore(p.graph(), group.head) ||
        !ops::ConcatStoreOf(p.graph(), at, w.through).ok()) {
      return std::nullopt;
    }
    w.group = index;
    w.computed = at;
    return w;
  }
}

}  // namespace

bool FuseConcatIntoStores(Planner& p, int n) {
  const Node& node = p.node(n);
  if (node.op != OpKind::kConcatenation || node.outputs.size() != 1) return false;
  std::vector<Writer> writers;
  for (int t : node.inputs) {
    if (t == kNoTensor || p.tensor(t).is_constant) return false;
    std::optional<Writer> w = WriterOf(p, t, n);
    if (!w) return false;
    writers.push_back(std::move(*w));
  }
  int last = -1;
  for (const Writer& w : writers) {
    for (size_t k = 0; k + 1 < w.through.size(); ++k) {
      const int identity_output = p.node(w.through[k]).outputs[0];
      p.plan.groups[static_cast<size_t>(p.group_of.at(identity_output))].head = -1;  // absorbed
      p.group_of.erase(identity_output);
    }
    FusedGroup& group = p.plan.groups[static_cast<size_t>(w.group)];
    p.group_of.erase(w.computed);
    group.computed = w.computed;
    group.stores_through = w.through;
    group.output = node.outputs[0];
    last = std::max(last, w.group);
  }
  // The output exists once the last of its writers ran (an operand read by
  // a later group's tail must be made before that group).
  p.group_of[node.outputs[0]] = last;
  return true;
}

}  // namespace mgd::fusion
