#include "layout/phwc4.h"

#include <cstring>

#include "model/fp16.h"

namespace mgd::layout {
namespace {

// Visits every PHWC4 element in memory order with its BHWC source index, or
// -1 for a padding channel.
template <typename F>
void ForEachPhwc4(const Bhwc& s, F f) {
  size_t out = 0;
  for (int b = 0; b < s.batch; ++b) {
    for (int slice = 0; slice < s.slices(); ++slice) {
      for (int y = 0; y < s.height; ++y) {
        for (int x = 0; x < s.width; ++x) {
          const size_t pixel = ((static_cast<size_t>(b) * s.height + y) * s.width + x) * s.channels;
          for (int k = 0; k < 4; ++k, ++out) {
            const int c = slice * 4 + k;
            f(out, c < s.channels ? static_cast<ptrdiff_t>(pixel + c) : -1);
          }
        }
      }
    }
  }
}

}  // namespace

void BhwcToPhwc4(const float* src, const Bhwc& shape, float* dst) {
  ForEachPhwc4(shape, [&](size_t out, ptrdiff_t in) { dst[out] = in >= 0 ? src[in] : 0.0f; });
}

void Phwc4ToBhwc(const float* src, const Bhwc& shape, float* dst) {
  ForEachPhwc4(shape, [&](size_t out, ptrdiff_t in) {
    if (in >= 0) dst[in] = src[out];
  });
}

void BhwcToPhwc4Half(const float* src, const Bhwc& shape, uint16_t* dst) {
  ForEachPhwc4(shape, [&](size_t out, ptrdiff_t in) { dst[out] = in >= 0 ? FloatToHalf(src[in]) : 0; });
}

void Phwc4HalfToBhwc(const uint16_t* src, const Bhwc& shape, float* dst) {
  ForEachPhwc4(shape, [&](size_t out, ptrdiff_t in) {
    if (in >= 0) dst[in] = HalfToFloat(src[out]);
  });
}

}  // namespace mgd::layout
