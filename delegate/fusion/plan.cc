#include "delegate/fusion/planner.h"

namespace mgd {
namespace fusion {

Planner::Planner(const Subgraph& subgraph) : subgraph_(subgraph) {
  plan.aliases = subgraph.aliases;
  plan.folded = subgraph.folded;
  for (int n : subgraph.nodes) {
    for (int t : subgraph.node(n).inputs) {
      if (t != kNoTensor) ++consumers_[Resolve(t)];
    }
  }
  for (int t : subgraph.escaping) escaping_.insert(Resolve(t));
}

bool Planner::SingleUse(int t) const {
  auto it = consumers_.find(t);
  return it != consumers_.end() && it->second == 1 && !escaping_.count(t);
}

int Planner::SoleWriter(int t) const {
  auto it = group_of.find(t);
  if (it == group_of.end() || IsAlias(t) || !SingleUse(t)) return -1;
  const FusedGroup& group = plan.groups[static_cast<size_t>(it->second)];
  return group.output == t && group.stores_through.empty() ? it->second : -1;
}

void Planner::TakeOver(int index, int n) {
  FusedGroup& group = plan.groups[static_cast<size_t>(index)];
  group_of.erase(group.output);
  group.head = n;
  group.output = node(n).outputs[0];
  for (int out : node(n).outputs) group_of[out] = index;
}

int Planner::MoveToEnd(int index) {
  plan.groups.push_back(plan.groups[static_cast<size_t>(index)]);
  plan.groups[static_cast<size_t>(index)] = FusedGroup{};
  const int moved = static_cast<int>(plan.groups.size()) - 1;
  for (auto& [tensor, group] : group_of) {
    if (group == index) group = moved;
  }
  return moved;
}

// The head's non-constant inputs, its outputs, one weights buffer, a gate
// it reads through, and the tails' other operands.
int Planner::BindingsOf(const FusedGroup& group) const {
  auto activations = [&](const Node& node) {
    int n = 0;
    for (int t : node.inputs) n += t != kNoTensor && !tensor(t).is_constant;
    return n;
  };
  const Node& head = node(group.head);
  int bindings = activations(head) + static_cast<int>(head.outputs.size()) + 1 + (group.input_gate >= 0);
  for (const auto& [tail, position] : group.tails) bindings += activations(node(tail)) - 1;
  return bindings;
}

}  // namespace fusion

std::vector<int> FusedGroup::nodes() const {
  std::vector<int> all;
  if (input_pad >= 0) all.push_back(input_pad);
  if (source >= 0) all.push_back(source);
  if (producer >= 0) all.push_back(producer);
  if (input_gate >= 0) all.push_back(input_gate);
  all.push_back(head);
  for (const auto& [node, position] : tails) {
    if (auto it = operand_pads.find(node); it != operand_pads.end()) all.push_back(it->second.second);
    all.push_back(node);
  }
  if (output_pad >= 0) all.push_back(output_pad);
  all.insert(all.end(), stores_through.begin(), stores_through.end());
  return all;
}

FusionPlan PlanFusion(const Subgraph& subgraph, bool fusion) {
  fusion::Planner planner(subgraph);
  for (int n : subgraph.nodes) {
    if (fusion && (fusion::FuseElementwiseTail(planner, n) || fusion::FuseChannelPadIntoWrite(planner, n) ||
                   fusion::FuseSpatialPadIntoRead(planner, n) || fusion::FuseDepthwiseIntoPointwise(planner, n) ||
                   fusion::FuseSqueezeExcite(planner, n) || fusion::FuseGateIntoRead(planner, n) ||
                   fusion::FuseStoreThrough(planner, n))) {
      continue;
    }
    const Node& node = subgraph.node(n);
    FusedGroup group;
    group.head = n;
    group.output = node.outputs[0];
    planner.plan.groups.push_back(group);
    for (int out : node.outputs) planner.group_of[out] = static_cast<int>(planner.plan.groups.size()) - 1;
  }
  return std::move(planner.plan);
}

}  // namespace mgd
