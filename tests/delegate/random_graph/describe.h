// A drawn graph as text, for the random-graph test's failure messages.
#pragma once

#include <string>

#include "model/graph.h"

namespace mgd::random_graph {

// Its inputs, each node with the parameters its shapes do not show (" SAME
// s2x2 f3x3 RELU6") and its operands, and its outputs, one per line.
std::string Describe(const Graph& graph);

}  // namespace mgd::random_graph
