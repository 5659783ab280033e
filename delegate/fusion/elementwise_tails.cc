// An elementwise node on a group's output becomes a tail of that group: it
// updates the group's value before the store. An operand of it that a lone
// channel PAD made is read through the PAD (blazeface's residual branch).
// A group whose tail's other operand a later group makes moves after it.
#include <algorithm>

#include "delegate/fusion/planner.h"
#include "model/constants.h"

namespace mgd::fusion {

namespace {

// Node `node`'s operands other than input `i`, for a tail on group `index`.
struct Operands {
  bool ready = true;     // made before the group runs, or read through a lone channel PAD
  bool movable = true;   // not ready only for operands that groups after it make
  int absorbed = -1;     // the lone PAD's group
  std::pair<int, int> operand_pad;  // FusedGroup::operand_pads
};

Operands CheckOperands(const Planner& p, const Node& node, size_t i, int index) {
  Operands o;
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    if (j == i) continue;
    const int other = p.Resolve(node.inputs[j]);
    if (other == node.inputs[i]) {
      o.ready = o.movable = false;
      continue;
    }
    auto producer = p.group_of.find(other);
    if (producer == p.group_of.end() || producer->second < index) continue;
    const FusedGroup& made_by = p.plan.groups[static_cast<size_t>(producer->second)];
    const Node& pad = p.node(made_by.head);
    const std::vector<int64_t> m = PadMargins(p.graph(), pad);
    const bool lone_pad = made_by.tails.empty() && made_by.input_pad < 0 && made_by.output_pad < 0 &&
                          p.SingleUse(other) && m.size() >= 2 && m[m.size() - 2] == 0 &&
                          std::all_of(m.begin(), m.end() - 2, [](int64_t v) { return v == 0; });
    auto source = lone_pad ? p.group_of.find(pad.inputs[0]) : p.group_of.end();
    if (lone_pad && o.absorbed < 0 && !p.IsAlias(pad.inputs[0]) &&
        (source == p.group_of.end() || source->second < index)) {
      o.absorbed = producer->second;
      o.operand_pad = {static_cast<int>(j), made_by.head};
      continue;
    }
    o.ready = false;
  }
  return o;
}

// A group reading a variable tensor (an LSTM's state) stays where it is:
// a later group may update that tensor in place.
bool ReadsVariable(const Planner& p, const FusedGroup& group) {
  for (int n : group.nodes()) {
    for (int t : p.node(n).inputs) {
      if (t != kNoTensor && p.tensor(t).is_variable) return true;
    }
  }
  return false;
}

}  // namespace

bool FuseElementwiseTail(Planner& p, int n) {
  const Node& node = p.node(n);
  if (!shaders::IsElementwise(node.op)) return false;
  FusionPlan& plan = p.plan;
  auto& group_of = p.group_of;
  // Into the producer of which input: a lone PAD's group last, so that the
  // PAD can rather be read through from another producer's group.
  std::vector<size_t> order;
  for (size_t i = 0; i < node.inputs.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto is_pad = [&](size_t i) {
      auto it = group_of.find(node.inputs[i]);
      return it != group_of.end() && p.node(plan.groups[static_cast<size_t>(it->second)].head).op == OpKind::kPad;
    };
    return !is_pad(a) && is_pad(b);
  });
  for (size_t i : order) {
    const int t = node.inputs[i];
    if (t == kNoTensor || p.tensor(t).is_constant || p.IsAlias(t)) continue;
    auto it = group_of.find(t);
    if (it == group_of.end()) continue;
    const FusedGroup& group = plan.groups[static_cast<size_t>(it->second)];
    if (group.output != t || group.output_pad >= 0 || !group.stores_through.empty() || !p.SingleUse(t)) continue;
    // Within the 8 storage buffers per shader every device offers (GLES 3.1
    // as phones report it; docs/design.md).
    if (p.BindingsOf(group) + static_cast<int>(node.inputs.size()) - 1 > kMaxFusedBindings) continue;
    if (p.node(group.head).outputs.size() != 1) continue;
    if (!shaders::SameBhwc(p.tensor(node.outputs[0]).shape, p.tensor(t).shape)) continue;
    Operands o = CheckOperands(p, node, i, it->second);
    if (!o.ready && o.movable && !ReadsVariable(p, group)) {
      // The group's value is read by this node alone: it may as well run
      // after the operands' makers (a residual block whose other branch,
      // a pool and its channel PAD, comes later in the model's order).
      o = CheckOperands(p, node, i, p.MoveToEnd(it->second));
    }
    if (!o.ready) continue;
    FusedGroup& host = plan.groups[static_cast<size_t>(it->second)];  // where the group is now
    if (o.absorbed >= 0) {
      group_of.erase(p.node(o.operand_pad.second).outputs[0]);
      plan.groups[static_cast<size_t>(o.absorbed)].head = -1;
      host.operand_pads[n] = o.operand_pad;
    }
    host.tails.push_back({n, static_cast<int>(i)});
    host.output = node.outputs[0];
    group_of[node.outputs[0]] = it->second;
    return true;
  }
  return false;
}

}  // namespace mgd::fusion
