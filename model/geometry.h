// TFLite's geometry of windowed ops (convolutions, pools), written once for
// the CPU kernels and the shader generators: output sizes and the padding
// before the first element, as tensorflow/lite/kernels/padding.h has them,
// and MediaPipe's own rule for its transposed convolution.
#pragma once

#include <algorithm>

#include "model/graph.h"

namespace mgd {

// TFLite's output size for a windowed op.
inline int WindowedOutputSize(Padding padding, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  if (padding == Padding::kSame) return (in + stride - 1) / stride;
  return std::max(0, (in - effective + stride) / stride);
}

// TFLite's ComputePadding: padding before the first element.
inline int PaddingBefore(int stride, int dilation, int in, int filter, int out) {
  const int effective = (filter - 1) * dilation + 1;
  const int padding = ((out - 1) * stride + effective - in) / 2;
  return std::max(padding, 0);
}

// A windowed op along one spatial axis: its output size and the padding
// before the first element, as TFLite computes them.
struct Window {
  int out = 0;
  int pad = 0;
};

inline Window WindowAlong(Padding padding, int in, int filter, int stride, int dilation) {
  const int out = WindowedOutputSize(padding, in, filter, stride, dilation);
  return {out, PaddingBefore(stride, dilation, in, filter, out)};
}

// MediaPipe's Convolution2DTransposeBias along one axis (not TFLite's
// TRANSPOSE_CONV rule): the full transposed output is s * (in - 1) + k, less
// for SAME the overhang max(0, k - (in - 1) % s - 1), of which half is cut at
// the start.
inline int MediaPipeTransposeOverhang(Padding padding, int in, int filter, int stride) {
  return padding == Padding::kSame ? std::max(0, filter - (in - 1) % stride - 1) : 0;
}

}  // namespace mgd
