// A convolution whose input 0 is made by a depthwise convolution that
// nothing else reads computes it in its own shader when its op's generator
// can (ops/conv/depthwise_pointwise.cc: a 1x1 convolution, tile by tile
// through shared memory). The depthwise group, with any spatial PAD it reads
// through, becomes the convolution's.
#include "delegate/fusion/planner.h"

namespace mgd::fusion {

bool FuseDepthwiseIntoPointwise(Planner& p, int n) {
  const Node& node = p.node(n);
  if (node.op != OpKind::kConv2d || node.inputs.empty()) return false;
  const int t = node.inputs[0];
  const int index = p.SoleWriter(t);
  if (index < 0) return false;
  FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  if (!group.tails.empty() || group.output_pad >= 0 || group.producer >= 0 ||
      p.node(group.head).op != OpKind::kDepthwiseConv2d || !shaders::TakesProducer(p.graph(), group.head, n)) {
    return false;
  }
  group.producer = group.head;
  p.TakeOver(index, n);
  return true;
}

}  // namespace mgd::fusion
