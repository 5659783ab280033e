// A PAD of channels only, at their end, after a group: the group's shader
// writes the padded tensor (zeros in the new channels).
#include "delegate/fusion/planner.h"
#include "model/constants.h"

namespace mgd::fusion {

bool FuseChannelPadIntoWrite(Planner& p, int n) {
  const Node& node = p.node(n);
  const std::vector<int64_t> margins = PadMargins(p.graph(), node);
  if (margins.size() < 2) return false;
  bool channels_after_only = margins[margins.size() - 2] == 0;
  for (size_t k = 0; k + 2 < margins.size(); ++k) channels_after_only &= margins[k] == 0;
  const int t = node.inputs[0];
  const int index = channels_after_only ? p.SoleWriter(t) : -1;
  if (index < 0) return false;
  FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  // A group with a producer shares memory within its workgroups: it cannot
  // return early for the padding slices.
  if (group.output_pad >= 0 || group.producer >= 0 || p.node(group.head).outputs.size() != 1) return false;
  group.output_pad = n;
  group.output = node.outputs[0];
  p.group_of[node.outputs[0]] = index;
  return true;
}

}  // namespace mgd::fusion
