// Semantic validation of a Graph: indices in range, constant sizes matching
// shape x dtype, per-op input/output counts and types, sane option values, one
// producer per tensor, and an acyclic graph. Shape inference (whether the
// declared output shapes follow from the inputs) is done per kernel by the
// interpreter's prepare, which every load also runs.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

absl::Status ValidateGraph(const Graph& graph);

// The nodes in an order where every node comes after the producers of its
// inputs: the model's own order when it already is one. Fails on a cycle.
absl::StatusOr<std::vector<int>> TopologicalOrder(const Graph& graph);

}  // namespace mgd
