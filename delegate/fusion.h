// GPU fusion planning: which nodes of a partition share one shader (a
// FusionPlan), after the graph passes (passes/) have run. Code generation
// then follows the plan. With fusion off, every node is a group of its own.
// Each kind of fusion is a file of delegate/fusion/.
#pragma once

#include <map>
#include <vector>

#include "passes/subgraph.h"
#include "shaders/generator.h"

namespace mgd {

// One dispatch: a head node, optionally a producer of its input 0 computed
// in the head's shader (and a source of the producer's input 0 computed
// before it: a squeeze-and-excitation gate's pool), a spatial PAD read
// through by the head (or by its producer), elementwise nodes applied to its value before the store, and a
// channel PAD applied to its write, or RESHAPEs and a CONCATENATION that
// the write goes through, landing in a part of the concatenation's output.
struct FusedGroup {
  int head = -1;
  int producer = -1;                         // node computed inside the head's shader, making its input 0
  int source = -1;                           // node computed before the producer, making the producer's input 0
  int input_pad = -1;                        // PAD node fused into input 0 of the producer, else of the head
  // A MUL of an activation by a per-channel gate (of shape [batch, 1, 1,
  // channels]) making the head's input 0: the head reads the activation,
  // each slice scaled by the gate's as it is read. gate_operand: the MUL's
  // input that is the gate.
  int input_gate = -1;
  int gate_operand = -1;
  shaders::FusedPad pad;
  std::vector<std::pair<int, int>> tails;    // (node, input position that is the running value)
  int output_pad = -1;                       // channel PAD fused into the write
  // A tail's other operand that came out of a channel PAD (blazeface's
  // residual branch): tail node -> (operand position, PAD node). The tail
  // reads the PAD's input and sees zeros past its channels.
  std::map<int, std::pair<int, int>> operand_pads;
  int output = -1;                           // the tensor the group finally writes
  // Nodes that keep their input element for element (RESHAPEs), then maybe
  // a CONCATENATION whose output (`output`) the group writes its part of
  // (other groups write the other parts), as ops/concatenation/
  // store_through.h stores it; `computed` is the tensor the shader
  // computes, stored so.
  std::vector<int> stores_through;
  int computed = -1;
  int value_tensor() const { return stores_through.empty() ? output : computed; }  // what the grid covers
  std::vector<int> nodes() const;            // every model node in it, in order
};

struct FusionPlan {
  std::vector<FusedGroup> groups;            // in execution order; head -1: absorbed into another group
  std::map<int, int> aliases;                // tensor -> tensor whose buffer it shares (removed no-ops)
  std::map<int, std::vector<int>> folded;    // node -> nodes the graph passes folded into it
};

constexpr int kMaxFusedBindings = 8;

// Groups, in the subgraph's node order: elementwise chains into their
// producer (fusion/elementwise_tails.cc), channel PADs into the producer's
// write (fusion/channel_pad.cc), spatial PADs into the following
// convolution or pool (fusion/spatial_pad.cc), a depthwise convolution into
// the 1x1 convolution that reads it (fusion/depthwise_pointwise.cc), a
// squeeze-and-excitation gate's pool and two 1x1 convolutions into one
// workgroup (fusion/squeeze_excite.cc), the MUL by such a gate into the
// convolution that reads its product (fusion/gated_read.cc), RESHAPEs
// and CONCATENATIONs into the stores of the groups making their inputs
// (fusion/store_through.cc). The plan's aliases are the
// subgraph's, and so are its folded nodes.
FusionPlan PlanFusion(const Subgraph& subgraph, bool fusion);

}  // namespace mgd
