// A convolution or pool whose input is a lone spatial PAD (height and width
// only) reads through the PAD: out-of-range taps are the PAD's zeros, and
// the PAD's group gives way to the reader's.
#include "delegate/fusion/planner.h"
#include "model/constants.h"

namespace mgd::fusion {

bool FuseSpatialPadIntoRead(Planner& p, int n) {
  const Node& node = p.node(n);
  const bool windowed = node.op == OpKind::kConv2d || node.op == OpKind::kDepthwiseConv2d ||
                        node.op == OpKind::kMaxPool2d || node.op == OpKind::kAveragePool2d;
  if (!windowed || p.tensor(node.inputs[0]).shape.size() != 4) return false;
  const int t = node.inputs[0];
  auto it = p.group_of.find(t);
  if (it == p.group_of.end() || !p.SingleUse(t)) return false;
  FusedGroup& pad_group = p.plan.groups[static_cast<size_t>(it->second)];
  const Node& pad = p.node(pad_group.head);
  const std::vector<int64_t> m = PadMargins(p.graph(), pad);
  if (!pad_group.tails.empty() || pad_group.output_pad >= 0 || !pad_group.stores_through.empty() ||
      pad_group.input_pad >= 0 || m.size() != 8 || m[0] != 0 || m[1] != 0 || m[6] != 0 || m[7] != 0) {
    return false;
  }
  FusedGroup group;
  group.head = n;
  group.input_pad = pad_group.head;
  group.pad = {static_cast<int>(m[2]), static_cast<int>(m[4]), static_cast<int>(m[3]), static_cast<int>(m[5])};
  group.output = node.outputs[0];
  // The PAD's group gives way to this one (its input exists earlier still).
  pad_group = group;
  const int index = it->second;  // erase frees the node `it` points to
  p.group_of.erase(it);
  for (int out : node.outputs) p.group_of[out] = index;
  return true;
}

}  // namespace mgd::fusion
