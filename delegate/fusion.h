// The graph transforms that run before code generation, each a small pass
// over a partition: they decide which nodes share a shader (a FusionPlan);
// code generation then follows the plan. With fusion off, every node is a
// group of its own.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "model/graph.h"
#include "shaders/generator.h"

namespace mgd {

// One dispatch: a head node, optionally a spatial PAD read through by the
// head, elementwise nodes applied to its value before the store, and a
// channel PAD applied to its write.
struct FusedGroup {
  int head = -1;
  int input_pad = -1;                        // PAD node fused into the head's input 0
  shaders::FusedPad pad;
  std::vector<std::pair<int, int>> tails;    // (node, input position that is the running value)
  int output_pad = -1;                       // channel PAD fused into the write
  // A tail's other operand that came out of a channel PAD (blazeface's
  // residual branch): tail node -> (operand position, PAD node). The tail
  // reads the PAD's input and sees zeros past its channels.
  std::map<int, std::pair<int, int>> operand_pads;
  int output = -1;                           // the tensor the group finally writes
  std::vector<int> nodes() const;            // every model node in it, in order
};

struct FusionPlan {
  std::vector<FusedGroup> groups;            // in execution order; head -1: absorbed into another group
  std::map<int, int> aliases;                // tensor -> tensor whose buffer it shares (removed no-ops)
};

struct PartitionView {
  const Graph* graph = nullptr;
  std::vector<int> nodes;                    // execution order
  std::set<int> escaping;                    // tensors read outside the partition (or graph outputs)
};

constexpr int kMaxFusedBindings = 8;

// Passes (each also used alone by the tests):
// A RESHAPE/SQUEEZE/EXPAND_DIMS whose PHWC4 layout is unchanged, a PAD of
// zeros, a one-input CONCATENATION, a full SLICE and a same-size RESIZE become
// aliases of their input and leave the node list.
void RemoveNoOps(PartitionView& view, FusionPlan& plan);
// A constant per-channel or scalar MUL/ADD after a CONV_2D/DEPTHWISE_CONV_2D
// without activation is folded into its weights and bias (`graph` is the
// compiler's own copy, changed in place).
void FoldMulAddIntoConvolutions(Graph& graph, PartitionView& view);
// Groups: spatial PADs into the following convolution or pool, elementwise
// chains into their producer, channel PADs into the producer's write.
FusionPlan PlanFusion(const PartitionView& view, bool fusion, FusionPlan plan = {});

}  // namespace mgd
