// A MUL or ADD of a constant (a scalar or one value per channel) after a
// CONV_2D or DEPTHWISE_CONV_2D without activation, as the only reader of its
// output, is folded into the convolution's weights and bias (new tensors:
// the old ones may be shared), and the convolution takes on the MUL's or
// ADD's activation and output.
#pragma once

#include "passes/subgraph.h"

namespace mgd {

void FoldMulAddIntoConvolutions(Subgraph& subgraph);

}  // namespace mgd
