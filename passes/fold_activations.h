// A RELU, RELU6 or RELU_N1_TO_1 node after a CONV_2D or DEPTHWISE_CONV_2D
// without activation, as the only reader of its output, becomes the
// convolution's fused activation, and the convolution writes its output
// (Keras models exported with separate activation layers have them). The
// numbers do not change: these clamps commute with fp16's rounding. It
// leaves the convolution alone for what fuses after it (a squeeze-and-
// excitation gate's squeeze, delegate/fusion/squeeze_excite.cc).
#pragma once

#include "passes/subgraph.h"

namespace mgd {

void FoldActivationsIntoConvolutions(Subgraph& subgraph);

}  // namespace mgd
