// IEEE 754 binary16 <-> binary32 conversion, exact in the widening direction and
// round-to-nearest-even in the narrowing one (as the C++23 float16_t would be).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mgd {

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {  // inf / nan
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // zero
    bits = sign;
  } else {  // subnormal: normalize
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Branch-free, so that loops over it may vectorize (GCC 12 at -O2 does not:
// FloatsToHalves below is the bulk path). Subnormal halves come
// from a float addition that lines the 10 bits up at the bottom of the
// mantissa, which rounds to nearest even in the default rounding mode.
// The same results as a plain case-by-case conversion for all 2^32 inputs
// (checked once, exhaustively; tests/model/fp16_test.cc checks every
// rounding boundary against one).
inline uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  // Rebias the exponent (-112 << 23) and round at bit 13: + 0xfff, + 1 when odd.
  const uint32_t normal = (abs + 0xc8000fffu + ((abs >> 13) & 1u)) >> 13;
  float magnitude;
  std::memcpy(&magnitude, &abs, sizeof magnitude);
  // 0.5f = 2^-1: the last bit of its mantissa weighs 2^-24, the smallest subnormal half.
  const float aligned = magnitude + 0.5f;
  uint32_t aligned_bits;
  std::memcpy(&aligned_bits, &aligned, sizeof aligned_bits);
  const uint32_t subnormal = aligned_bits - 0x3f000000u;
  const uint32_t special = abs > 0x7f800000u ? 0x7e00u : 0x7c00u;  // NaN (quiet) or overflow/inf
  const uint32_t half = abs < 0x38800000u ? subnormal : (abs >= 0x47800000u ? special : normal);
  return static_cast<uint16_t>(sign | half);
}

// FloatToHalf over `n` values, the same bits, with the CPU's conversion
// where it has one (x86-64 with F16C: a model's weights at prepare).
void FloatsToHalves(const float* in, uint16_t* out, size_t n);

}  // namespace mgd
