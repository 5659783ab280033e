// FloatToHalf (branch-free) against a plain case-by-case conversion, at every
// rounding boundary of binary16 and on both sides of it.
#include "model/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace mgd {
namespace {

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Round to nearest, ties to even, case by case.
uint16_t ReferenceHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN, quiet
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {                                                 // subnormal or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t exponent = abs >> 23, mantissa = (abs & 0x7fffffu) | 0x800000u, shift = 126 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (abs - 0x38000000u) >> 13;
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

TEST(Fp16Test, EveryRoundingBoundaryAsTheReference) {
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    // The float of half h, and the midpoint to h + 1 (a tie) with its
    // neighbours, of both signs.
    const float here = HalfToFloat(static_cast<uint16_t>(h)), next = HalfToFloat(static_cast<uint16_t>(h + 1));
    const uint32_t exact = BitsOf(here);
    const uint32_t mid_bits = BitsOf((here + next) / 2);  // exact in float: halves have 11 significant bits
    for (uint32_t u : {exact, exact + 1, mid_bits - 1, mid_bits, mid_bits + 1}) {
      for (uint32_t s : {0u, 0x80000000u}) {
        const float f = Bits(u | s);
        ASSERT_EQ(FloatToHalf(f), ReferenceHalf(f)) << std::hexfloat << f;
      }
    }
  }
}

TEST(Fp16Test, SpecialValues) {
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7e00u, 0x7e00u);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bffu);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00u);  // the tie above the largest half rounds to inf
  EXPECT_EQ(FloatToHalf(1e30f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000u);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001u);  // the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000u);  // its half: a tie, to even
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00u);
  for (uint32_t h = 0; h < 0x7c00u; ++h) EXPECT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(h))), h);
}

// The bulk conversion (the CPU's own where it has F16C) gives FloatToHalf's
// bits: at every rounding boundary, over a sweep of all float bit patterns
// (NaNs of every kind among them), and in lengths with and without a tail.
TEST(Fp16Test, BulkConversionAsOneByOne) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    const float here = HalfToFloat(static_cast<uint16_t>(h)), next = HalfToFloat(static_cast<uint16_t>(h + 1));
    const uint32_t exact = BitsOf(here), mid = BitsOf((here + next) / 2);
    for (uint32_t u : {exact, exact + 1, mid - 1, mid, mid + 1}) {
      for (uint32_t s : {0u, 0x80000000u}) values.push_back(Bits(u | s));
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) values.push_back(Bits(static_cast<uint32_t>(u)));
  for (uint32_t u : {0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0xff800001u, 0xffc00001u, 0x7f800000u, 0xff800000u}) {
    values.push_back(Bits(u));
  }
  for (size_t n : {values.size(), values.size() - 3, size_t{7}, size_t{1}, size_t{0}}) {
    std::vector<uint16_t> bulk(n, 0xdeadu & 0xffffu);
    FloatsToHalves(values.data(), bulk.data(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(bulk[i], FloatToHalf(values[i])) << "value " << i << " of " << n << ": " << std::hexfloat << values[i];
    }
  }
}

}  // namespace
}  // namespace mgd
