// A squeeze-and-excitation gate (MobileNet v3's, EfficientNet's, the selfie
// segmenter's): a global average pool, a 1x1 convolution that squeezes the
// pooled channels and a 1x1 convolution that expands them again, each over
// one pixel (or the pool and one convolution). Three tiny dispatches, each a GPU's whole launch latency for a
// few hundred multiply-adds, become one workgroup when the expanding
// convolution's generator can (ops/conv/squeeze_excite.cc). The pool joins
// only where one workgroup reads its input quickly enough; otherwise the two
// convolutions still share a shader.
#include "delegate/fusion/planner.h"

namespace mgd::fusion {
namespace {

// The group that writes `t`, read once: no tails, no fused PADs, no
// source; a producer only where `with_producer`. Else null.
FusedGroup* OnlyWriter(Planner& p, int t, bool with_producer) {
  const int index = p.SoleWriter(t);
  if (index < 0) return nullptr;
  FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  const bool lone = group.tails.empty() && group.output_pad < 0 && group.source < 0 &&
                    (with_producer || group.producer < 0) && group.input_pad < 0 &&
                    p.node(group.head).outputs.size() == 1;
  return lone ? &group : nullptr;
}

}  // namespace

bool FuseSqueezeExcite(Planner& p, int n) {
  const Node& node = p.node(n);
  if (node.op != OpKind::kConv2d || node.inputs.empty()) return false;
  // The squeeze (its pool already inside when the pool and the squeeze
  // made a gate of their own), or the pool of a gate without one.
  FusedGroup* first = OnlyWriter(p, node.inputs[0], true);
  if (first == nullptr) return false;
  const int squeeze = first->head;
  const Node& made_by = p.node(squeeze);
  FusedGroup* pool_group = first->producer < 0 && made_by.op == OpKind::kConv2d && !made_by.inputs.empty()
                               ? OnlyWriter(p, made_by.inputs[0], false)
                               : nullptr;
  const int pool = first->producer >= 0 ? first->producer : pool_group != nullptr ? pool_group->head : -1;
  FusedGroup* gate = nullptr;
  if (pool >= 0 && shaders::TakesProducer(p.graph(), squeeze, n, pool)) {
    // A pool with a group of its own: that group, the earliest, becomes the
    // gate; it reads only the pool's input, which exists by then.
    gate = first;
    if (pool_group != nullptr) {
      first->head = -1;
      p.group_of.erase(made_by.inputs[0]);
      gate = pool_group;
    }
    gate->source = pool;
    gate->producer = squeeze;
  } else if (first->producer < 0 && shaders::TakesProducer(p.graph(), squeeze, n)) {
    gate = first;
    gate->producer = squeeze;
  } else {
    return false;
  }
  p.group_of.erase(node.inputs[0]);
  gate->head = n;
  gate->output = node.outputs[0];
  for (int out : node.outputs) p.group_of[out] = static_cast<int>(gate - p.plan.groups.data());
  return true;
}

}  // namespace mgd::fusion
