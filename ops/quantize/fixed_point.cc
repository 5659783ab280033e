#include "ops/quantize/fixed_point.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mgd::ops::quantized {

Multiplier QuantizeMultiplier(double real) {
  if (real == 0.0) return {};
  if (!std::isfinite(real)) return {std::numeric_limits<int32_t>::max(), 30};  // scales far apart: saturate
  int shift = 0;
  const double q = std::frexp(real, &shift);
  auto fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  if (shift > 30) return {std::numeric_limits<int32_t>::max(), 30};
  return {static_cast<int32_t>(fixed), shift};
}

int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

int16_t SaturatingRoundingDoublingHighMul(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

int16_t SaturatingDoublingHighMul(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((int32_t{a} * int32_t{b}) / (1 << 15));
}

int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t MultiplyByQuantizedMultiplier(int32_t x, const Multiplier& m) {
  const int left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
  // x * 2^left in 64 bits, saturated as TFLite's int32 product would wrap
  // only for inputs no kernel passes.
  const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << left);
  const auto clamped = static_cast<int32_t>(std::clamp<int64_t>(shifted, std::numeric_limits<int32_t>::min(),
                                                                std::numeric_limits<int32_t>::max()));
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(clamped, m.multiplier), right);
}

int32_t RoundHalfAwayFromZero(float x) {
  if (std::isnan(x)) return 0;
  const double r = std::round(static_cast<double>(x));
  return static_cast<int32_t>(std::clamp(r, -2147483648.0, 2147483647.0));
}

}  // namespace mgd::ops::quantized
