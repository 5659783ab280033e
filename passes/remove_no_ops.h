// A node that moves no data becomes an alias of its input and leaves the
// node list: a RESHAPE/SQUEEZE/EXPAND_DIMS between shapes stored alike, a
// PAD of zeros, a one-input CONCATENATION, a SLICE/STRIDED_SLICE of
// everything and a RESIZE to the same size.
#pragma once

#include "passes/subgraph.h"

namespace mgd {

void RemoveNoOps(Subgraph& subgraph, const SameStorage& same_storage);

}  // namespace mgd
