// PHWC4 and the vec4/mat4 weight layouts, for every channel count 1..17.
#include <gtest/gtest.h>

#include <random>

#include "layout/phwc4.h"
#include "layout/weights.h"
#include "model/fp16.h"

namespace mgd::layout {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Phwc4Test, RoundTripsAndPlacesEveryChannel) {
  for (int channels = 1; channels <= 17; ++channels) {
    const Bhwc shape{2, 3, 5, channels};
    const std::vector<float> src = Random(shape.elements(), static_cast<uint32_t>(channels));
    std::vector<float> phwc4(shape.phwc4_elements(), -7.0f), back(shape.elements(), 0.0f);
    BhwcToPhwc4(src.data(), shape, phwc4.data());
    for (int b = 0; b < shape.batch; ++b)
      for (int y = 0; y < shape.height; ++y)
        for (int x = 0; x < shape.width; ++x)
          for (int c = 0; c < shape.slices() * 4; ++c) {
            const float expected =
                c < channels ? src[((static_cast<size_t>(b) * shape.height + y) * shape.width + x) * channels + c] : 0.0f;
            ASSERT_EQ(phwc4[Phwc4Index(shape, b, y, x, c)], expected) << "channels " << channels << " c " << c;
          }
    Phwc4ToBhwc(phwc4.data(), shape, back.data());
    EXPECT_EQ(back, src) << "channels " << channels;
  }
}

TEST(Phwc4Test, SlicesAreContiguousPlanes) {
  // One slice of a 2x2 image is 4 vec4s in a row; the next slice follows.
  const Bhwc shape{1, 2, 2, 6};
  EXPECT_EQ(shape.slices(), 2);
  EXPECT_EQ(shape.phwc4_elements(), 32u);
  EXPECT_EQ(Phwc4Index(shape, 0, 0, 1, 0), 4u);
  EXPECT_EQ(Phwc4Index(shape, 0, 1, 0, 3), 11u);
  EXPECT_EQ(Phwc4Index(shape, 0, 0, 0, 4), 16u);
  EXPECT_EQ(Phwc4Index(shape, 0, 1, 1, 5), 29u);
}

TEST(Phwc4Test, HalfStorageRoundsAndPadsWithZero) {
  for (int channels : {1, 3, 4, 5, 17}) {
    const Bhwc shape{1, 4, 3, channels};
    const std::vector<float> src = Random(shape.elements(), 99u + static_cast<uint32_t>(channels));
    std::vector<uint16_t> half(shape.phwc4_elements(), 0xffff);
    std::vector<float> back(shape.elements());
    BhwcToPhwc4Half(src.data(), shape, half.data());
    Phwc4HalfToBhwc(half.data(), shape, back.data());
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(back[i], HalfToFloat(FloatToHalf(src[i])));
      EXPECT_NEAR(back[i], src[i], 1.0 / 2048);  // binary16 keeps 11 significant bits
    }
    for (int c = channels; c < shape.slices() * 4; ++c) EXPECT_EQ(half[Phwc4Index(shape, 0, 2, 1, c)], 0);
  }
}

// A convolution computed the way a shader reads ConvWeightsO4I4: per output
// slice, acc += mat4(block) * vec4(input slice).
TEST(ConvWeightsTest, Mat4BlocksReproduceTheConvolution) {
  for (int in_channels = 1; in_channels <= 17; in_channels += 3) {
    for (int out_channels = 1; out_channels <= 17; out_channels += 4) {
      const int kh = 3, kw = 2;
      const std::vector<float> ohwi = Random(static_cast<size_t>(out_channels) * kh * kw * in_channels, 7u);
      const std::vector<float> input = Random(static_cast<size_t>(kh) * kw * in_channels, 8u);  // one window
      const ConvWeightsO4I4 w = ToConvWeightsO4I4(ohwi.data(), out_channels, kh, kw, in_channels);
      ASSERT_EQ(w.values.size(), static_cast<size_t>(w.out_slices) * kh * kw * w.in_slices * 16);
      for (int os = 0; os < w.out_slices; ++os) {
        float acc[4] = {0, 0, 0, 0};
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx)
            for (int is = 0; is < w.in_slices; ++is) {
              const float* block = &w.values[w.BlockIndex(os, ky, kx, is) * 16];
              for (int i = 0; i < 4; ++i) {
                const int c = is * 4 + i;
                const float v = c < in_channels ? input[(static_cast<size_t>(ky) * kw + kx) * in_channels + c] : 0.0f;
                for (int o = 0; o < 4; ++o) acc[o] += block[i * 4 + o] * v;  // column i of the mat4
              }
            }
        for (int o = 0; o < 4; ++o) {
          const int oc = os * 4 + o;
          double expected = 0;
          if (oc < out_channels) {
            for (int ky = 0; ky < kh; ++ky)
              for (int kx = 0; kx < kw; ++kx)
                for (int c = 0; c < in_channels; ++c)
                  expected += static_cast<double>(ohwi[((static_cast<size_t>(oc) * kh + ky) * kw + kx) * in_channels + c]) *
                              input[(static_cast<size_t>(ky) * kw + kx) * in_channels + c];
          }
          EXPECT_NEAR(acc[o], expected, 1e-5) << in_channels << "->" << out_channels << " oc " << oc;
        }
      }
    }
  }
}

// kOutputRows is each block transposed: row o holds output channel
// 4*os+o's weights from the slice's four input channels (padding zero).
TEST(ConvWeightsTest, OutputRowsAreTheBlocksTransposed) {
  for (int in_channels : {1, 5, 8}) {
    for (int out_channels : {1, 6, 8}) {
      const int kh = 2, kw = 3;
      const std::vector<float> ohwi = Random(static_cast<size_t>(out_channels) * kh * kw * in_channels, 9u);
      const ConvWeightsO4I4 columns = ToConvWeightsO4I4(ohwi.data(), out_channels, kh, kw, in_channels);
      const ConvWeightsO4I4 rows =
          ToConvWeightsO4I4(ohwi.data(), out_channels, kh, kw, in_channels, BlockOrder::kOutputRows);
      ASSERT_EQ(rows.values.size(), columns.values.size());
      for (size_t block = 0; block < rows.values.size() / 16; ++block) {
        for (int o = 0; o < 4; ++o) {
          for (int i = 0; i < 4; ++i) {
            EXPECT_EQ(rows.values[block * 16 + static_cast<size_t>(o * 4 + i)],
                      columns.values[block * 16 + static_cast<size_t>(i * 4 + o)]);
          }
        }
      }
      // Output channel 0, tap (1, 2), input channel in_channels - 1.
      const int is = (in_channels - 1) / 4, i = (in_channels - 1) % 4;
      EXPECT_EQ(rows.values[rows.BlockIndex(0, 1, 2, is) * 16 + static_cast<size_t>(i)],
                ohwi[(static_cast<size_t>(1) * kw + 2) * in_channels + static_cast<size_t>(in_channels - 1)]);
    }
  }
}

TEST(DepthwiseWeightsTest, Vec4PerSliceAndTap) {
  for (int channels = 1; channels <= 17; ++channels) {
    const int kh = 3, kw = 3;
    const std::vector<float> weights = Random(static_cast<size_t>(kh) * kw * channels, 11u);
    const DepthwiseWeights4 w = ToDepthwiseWeights4(weights.data(), kh, kw, channels);
    ASSERT_EQ(w.values.size(), static_cast<size_t>(w.slices) * kh * kw * 4);
    for (int c = 0; c < w.slices * 4; ++c)
      for (int ky = 0; ky < kh; ++ky)
        for (int kx = 0; kx < kw; ++kx) {
          const float got = w.values[((static_cast<size_t>(c / 4) * kh + ky) * kw + kx) * 4 + static_cast<size_t>(c % 4)];
          EXPECT_EQ(got, c < channels ? weights[(static_cast<size_t>(ky) * kw + kx) * channels + c] : 0.0f);
        }
  }
}

TEST(PadToSlicesTest, PadsWithZeros) {
  const float bias[5] = {1, 2, 3, 4, 5};
  EXPECT_EQ(PadToSlices(bias, 5), (std::vector<float>{1, 2, 3, 4, 5, 0, 0, 0}));
  EXPECT_EQ(PadToSlices(bias, 4), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace mgd::layout
