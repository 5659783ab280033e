// TFLite's integer arithmetic for quantized kernels
// (tensorflow/lite/kernels/internal/common.h and gemmlowp's fixed point):
// a real multiplier as a Q31 mantissa and a power-of-two exponent, and the
// product of an int32 with it rounded as TFLite rounds. The integer kernels
// use these so that their outputs are LiteRT's, bit for bit.
#pragma once

#include <cstdint>

namespace mgd::ops::quantized {

// A positive real number m = multiplier * 2^(shift - 31), multiplier in
// [2^30, 2^31) (0 for m == 0).
struct Multiplier {
  int32_t multiplier = 0;
  int shift = 0;
};

// TFLite's QuantizeMultiplier: the mantissa rounded half away from zero;
// below 2^-31 the multiplier is 0, above 2^30 it saturates.
Multiplier QuantizeMultiplier(double real);

// (a * b * 2) >> 32, rounded to nearest (ties away from zero), saturating the
// one overflowing case INT32_MIN * INT32_MIN.
int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b);

// x / 2^exponent rounded to nearest, ties away from zero.
int32_t RoundingDivideByPOT(int32_t x, int exponent);

// The 16-bit forms (gemmlowp's and TFLite's hard_swish.h): (a * b * 2) >> 16
// rounded to nearest (ties away from zero), and truncated toward zero;
// both saturate INT16_MIN * INT16_MIN.
int16_t SaturatingRoundingDoublingHighMul(int16_t a, int16_t b);
int16_t SaturatingDoublingHighMul(int16_t a, int16_t b);

// round(x * m) as TFLite's MultiplyByQuantizedMultiplier computes it.
int32_t MultiplyByQuantizedMultiplier(int32_t x, const Multiplier& m);

// TFLite's TfLiteRound for float-to-integer quantization: half away from
// zero, saturating to int32 (infinities too); NaN gives 0.
int32_t RoundHalfAwayFromZero(float x);

}  // namespace mgd::ops::quantized
