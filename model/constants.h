// Reading the values of constant tensors, for the passes and generators that
// look at them (weights, shapes, paddings, axes).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/graph.h"

namespace mgd {

// Float32 contents of a constant tensor (zeros when its bytes are short); a
// bool tensor's as 0.0/1.0, as the GPU holds bools.
std::vector<float> ConstantFloats(const Tensor& t);
// Int contents (int32 or int64) of a constant tensor.
std::vector<int64_t> ConstantInts(const Tensor& t);

// A PAD whose paddings are a constant: [before, after] per dimension of its
// input, flattened; empty when they are not constant or do not fit.
std::vector<int64_t> PadMargins(const Graph& graph, const Node& pad);

}  // namespace mgd
