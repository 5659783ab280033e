#include "model/fp16.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define MGD_HAVE_F16C_PATH 1
#endif

namespace mgd {
namespace {

#ifdef MGD_HAVE_F16C_PATH
// Eight at a time with the CPU's own conversion (F16C, round to nearest even
// whatever MXCSR says); NaNs then made FloatToHalf's (quiet, no payload), so
// that both paths give the same bits. What it did not convert: the tail.
__attribute__((target("avx,f16c"))) size_t FloatsToHalvesF16c(const float* in, uint16_t* out, size_t n) {
  const __m128i magnitude = _mm_set1_epi16(0x7fff), infinity = _mm_set1_epi16(0x7c00);
  const __m128i sign = _mm_set1_epi16(static_cast<int16_t>(0x8000)), quiet_nan = _mm_set1_epi16(0x7e00);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity);
    const __m128i quiet = _mm_or_si128(_mm_and_si128(h, sign), quiet_nan);
    h = _mm_or_si128(_mm_andnot_si128(nan, h), _mm_and_si128(nan, quiet));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  return i;
}

// AVX (which also says the OS keeps the YMM registers) and F16C (CPUID
// leaf 1, ECX bit 29: clang 14 has no name for it in __builtin_cpu_supports).
bool HasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
  }();
  return has;
}
#endif

}  // namespace

void FloatsToHalves(const float* in, uint16_t* out, size_t n) {
  size_t done = 0;
#ifdef MGD_HAVE_F16C_PATH
  if (HasF16c()) done = FloatsToHalvesF16c(in, out, n);
#endif
  for (size_t i = done; i < n; ++i) out[i] = FloatToHalf(in[i]);
}

}  // namespace mgd
