// Weight layouts that let shaders read a vec4 or a mat4 at a time. Every
// layout pads channels to multiples of 4 with zeros, so shaders never test
// for a partial slice.
#pragma once

#include <cstddef>
#include <vector>

namespace mgd::layout {

// CONV_2D (and TRANSPOSE_CONV, FULLY_CONNECTED as a 1x1 convolution): OHWI
// float weights -> blocks of 4x4, one per (output slice, ky, kx, input slice):
//
//   [out_slice][ky][kx][in_slice][i][o]   (16 floats per block)
//
// Within a block, column i (4 consecutive floats) holds the weights from
// input channel 4*in_slice+i to the four output channels, so GLSL's
// `mat4 * vec4(input slice)` is the 4x4 product for one output slice.
// kOutputRows transposes each block: row o (4 consecutive floats) holds the
// weights from the four input channels to output channel 4*out_slice+o, for
// a shader in which each invocation computes one output channel.
enum class BlockOrder { kInputColumns, kOutputRows };
struct ConvWeightsO4I4 {
  int out_slices = 0, kernel_h = 0, kernel_w = 0, in_slices = 0;
  std::vector<float> values;

  size_t BlockIndex(int os, int ky, int kx, int is) const {
    return ((static_cast<std::size_t>(os) * kernel_h + ky) * kernel_w + kx) * in_slices + is;
  }
};
ConvWeightsO4I4 ToConvWeightsO4I4(const float* ohwi, int out_channels, int kernel_h, int kernel_w, int in_channels,
                                  BlockOrder order = BlockOrder::kInputColumns);

// DEPTHWISE_CONV_2D (multiplier 1): [1,Kh,Kw,C] -> [slice][ky][kx][4].
struct DepthwiseWeights4 {
  int slices = 0, kernel_h = 0, kernel_w = 0;
  std::vector<float> values;
};
DepthwiseWeights4 ToDepthwiseWeights4(const float* ihwc, int kernel_h, int kernel_w, int channels);

// A per-channel vector (bias, PReLU alpha, scales) padded to whole slices.
std::vector<float> PadToSlices(const float* values, int channels);

}  // namespace mgd::layout
