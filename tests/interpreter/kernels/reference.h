// Naive references (double) shared by the CPU kernel tests, written from
// TFLite's reference kernels, independently of mgd's own geometry.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "model/graph.h"
#include "tests/interpreter/single_op.h"

namespace mgd::testing::reference {

// TFLite's ComputeOutSize: SAME ceil(in / s), VALID ceil((in - eff + 1) / s).
inline int OutSize(Padding padding, int in, int k, int s, int d = 1) {
  const int eff = (k - 1) * d + 1;
  const double v = padding == Padding::kSame ? std::ceil(static_cast<double>(in) / s)
                                             : std::ceil(static_cast<double>(in - eff + 1) / s);
  return std::max(0, static_cast<int>(v));
}

// TFLite's ComputePadding: half the total padding, rounded down, before.
inline int PadBefore(int in, int k, int s, int d, int out) {
  const int eff = (k - 1) * d + 1;
  return std::max(0, ((out - 1) * s + eff - in) / 2);
}

inline double ApplyActivation(Activation a, double v) {
  switch (a) {
    case Activation::kRelu: return std::max(v, 0.0);
    case Activation::kRelu6: return std::min(std::max(v, 0.0), 6.0);
    case Activation::kReluN1To1: return std::min(std::max(v, -1.0), 1.0);
    case Activation::kTanh: return std::tanh(v);
    default: return v;
  }
}

// NHWC element offset.
inline size_t At(const Shape& s, int b, int y, int x, int c) {
  return static_cast<size_t>(((static_cast<int64_t>(b) * s[1] + y) * s[2] + x) * s[3] + c);
}

// Raw little-endian int32 custom options (TfLiteTransposeConvParams,
// TfLitePoolParams).
inline std::vector<uint8_t> RawInts(const std::vector<int32_t>& ints) {
  std::vector<uint8_t> bytes(ints.size() * 4);
  std::memcpy(bytes.data(), ints.data(), bytes.size());
  return bytes;
}

// TFLite's reference TransposeConv: each input pixel scatters into the output,
// with padding computed as for a forward conv from the output (its declared
// size) back to the input.
inline std::vector<double> RefTransposeConv(const Shape& xs, const std::vector<float>& x, const Shape& ws,
                                     const std::vector<float>& w, const std::vector<float>* bias, const Shape& ys,
                                     int sh, int sw, int pad_h, int pad_w) {
  std::vector<double> y(single_op::Count(ys), 0.0);
  for (int b = 0; b < xs[0]; ++b)
    for (int iy = 0; iy < xs[1]; ++iy)
      for (int ix = 0; ix < xs[2]; ++ix)
        for (int c = 0; c < xs[3]; ++c)
          for (int ky = 0; ky < ws[1]; ++ky)
            for (int kx = 0; kx < ws[2]; ++kx)
              for (int o = 0; o < ws[0]; ++o) {
                const int oy = iy * sh - pad_h + ky, ox = ix * sw - pad_w + kx;
                if (oy < 0 || oy >= ys[1] || ox < 0 || ox >= ys[2]) continue;
                y[At(ys, b, oy, ox, o)] += static_cast<double>(x[At(xs, b, iy, ix, c)]) * w[At(ws, o, ky, kx, c)];
              }
  if (bias) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += (*bias)[i % static_cast<size_t>(ys[3])];
  }
  return y;
}

inline std::vector<float> Iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// The row-major index of element i of shape s, and back.
inline std::vector<int> Unravel(int64_t i, const Shape& s) {
  std::vector<int> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = static_cast<int>(i % s[static_cast<size_t>(d)]);
    i /= s[static_cast<size_t>(d)];
  }
  return idx;
}

inline int64_t Ravel(const std::vector<int>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

}  // namespace mgd::testing::reference
