// A convolution reading the product of an activation and a per-channel gate
// (a squeeze-and-excitation block's MUL, of [batch, h, w, c] by [batch, 1,
// 1, c]) reads the activation and the gate instead, each slice scaled as it
// is read (shaders::ReadThroughGate): the MUL's pass over the tensor, its
// dispatch and its output's memory go. The MUL's group becomes the
// convolution's.
#include "delegate/fusion/planner.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"

namespace mgd::fusion {
namespace {

// The MUL's input that is a gate over the other's channels, or -1.
int GateOperand(const Planner& p, const Node& mul) {
  if (mul.op != OpKind::kMul || mul.inputs.size() != 2 ||
      AttributesOf<ops::ElementwiseAttributes>(mul.attributes).activation != Activation::kNone) {
    return -1;
  }
  const Shape& out = p.tensor(mul.outputs[0]).shape;
  if (out.size() != 4) return -1;
  for (int gate = 1; gate >= 0; --gate) {
    const Tensor& g = p.tensor(mul.inputs[static_cast<size_t>(gate)]);
    const Tensor& x = p.tensor(mul.inputs[static_cast<size_t>(1 - gate)]);
    if (!g.is_constant && !x.is_constant && g.type == DataType::kFloat32 && x.type == DataType::kFloat32 &&
        x.shape == out && g.shape == Shape{out[0], 1, 1, out[3]}) {
      return gate;
    }
  }
  return -1;
}

}  // namespace

bool FuseGateIntoRead(Planner& p, int n) {
  const Node& node = p.node(n);
  if (!ops::IsSpatialConvolution(node.op) || node.inputs.empty()) return false;
  const int t = node.inputs[0];
  const int index = p.SoleWriter(t);
  if (index < 0) return false;
  FusedGroup& group = p.plan.groups[static_cast<size_t>(index)];
  if (!group.tails.empty() || group.output_pad >= 0 || group.input_pad >= 0 || group.producer >= 0 ||
      group.input_gate >= 0) {
    return false;
  }
  const int gate = GateOperand(p, p.node(group.head));
  if (gate < 0) return false;
  group.input_gate = group.head;
  group.gate_operand = gate;
  p.TakeOver(index, n);
  return true;
}

}  // namespace mgd::fusion
