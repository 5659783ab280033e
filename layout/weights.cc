#include "layout/weights.h"

#include <algorithm>

namespace mgd::layout {
namespace {
int Slices(int channels) { return (channels + 3) / 4; }
}  // namespace

ConvWeightsO4I4 ToConvWeightsO4I4(const float* ohwi, int out_channels, int kernel_h, int kernel_w, int in_channels,
                                  BlockOrder order) {
  ConvWeightsO4I4 w;
  w.out_slices = Slices(out_channels);
  w.kernel_h = kernel_h;
  w.kernel_w = kernel_w;
  w.in_slices = Slices(in_channels);
  w.values.assign(static_cast<size_t>(w.out_slices) * kernel_h * kernel_w * w.in_slices * 16, 0.0f);
  // In the packed order, 4x4 blocks one after another (a model's weights are
  // megabytes: this is a visible part of a cold prepare). Element (row,
  // column) of a block is (input i, output o) for kInputColumns' mat4 * vec4
  // rows, (o, i) otherwise.
  const bool input_rows = order == BlockOrder::kInputColumns;
  const size_t tap_stride = static_cast<size_t>(kernel_h) * kernel_w * in_channels;  // from output o to o + 1
  float* block = w.values.data();
  for (int os = 0; os < w.out_slices; ++os) {
    const int outputs = std::min(4, out_channels - os * 4);
    for (int ky = 0; ky < kernel_h; ++ky) {
      for (int kx = 0; kx < kernel_w; ++kx) {
        const float* tap = ohwi + ((static_cast<size_t>(os) * 4 * kernel_h + ky) * kernel_w + kx) * in_channels;
        for (int is = 0; is < w.in_slices; ++is, block += 16) {
          const int inputs = std::min(4, in_channels - is * 4);
          for (int o = 0; o < outputs; ++o) {
            const float* from = tap + o * tap_stride + is * 4;
            for (int i = 0; i < inputs; ++i) block[input_rows ? i * 4 + o : o * 4 + i] = from[i];
          }
        }
      }
    }
  }
  return w;
}

DepthwiseWeights4 ToDepthwiseWeights4(const float* ihwc, int kernel_h, int kernel_w, int channels) {
  DepthwiseWeights4 w;
  w.slices = Slices(channels);
  w.kernel_h = kernel_h;
  w.kernel_w = kernel_w;
  w.values.assign(static_cast<size_t>(w.slices) * kernel_h * kernel_w * 4, 0.0f);
  for (int ky = 0; ky < kernel_h; ++ky) {
    for (int kx = 0; kx < kernel_w; ++kx) {
      for (int c = 0; c < channels; ++c) {
        w.values[((static_cast<size_t>(c / 4) * kernel_h + ky) * kernel_w + kx) * 4 + static_cast<size_t>(c % 4)] =
            ihwc[(static_cast<size_t>(ky) * kernel_w + kx) * channels + c];
      }
    }
  }
  return w;
}

std::vector<float> PadToSlices(const float* values, int channels) {
  std::vector<float> padded(static_cast<size_t>(Slices(channels)) * 4, 0.0f);
  for (int c = 0; c < channels; ++c) padded[static_cast<size_t>(c)] = values[c];
  return padded;
}

}  // namespace mgd::layout
