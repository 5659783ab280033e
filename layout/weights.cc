#include "layout/weights.h"

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
  for (int o = 0; o < out_channels; ++o) {
    for (int ky = 0; ky < kernel_h; ++ky) {
      for (int kx = 0; kx < kernel_w; ++kx) {
        for (int i = 0; i < in_channels; ++i) {
          const size_t block = w.BlockIndex(o / 4, ky, kx, i / 4);
          const auto row = static_cast<size_t>(order == BlockOrder::kInputColumns ? i % 4 : o % 4);
          const auto column = static_cast<size_t>(order == BlockOrder::kInputColumns ? o % 4 : i % 4);
          w.values[block * 16 + row * 4 + column] =
              ohwi[((static_cast<size_t>(o) * kernel_h + ky) * kernel_w + kx) * in_channels + i];
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
