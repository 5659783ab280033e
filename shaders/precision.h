// How a GPU program keeps and computes numbers: the type tensors and weights
// are stored in, the type arithmetic runs in, and the type sums (convolution
// and reduction accumulators) run in. Types rather than flags, so that
// quantized storage (int8) has a place to go.
#pragma once

#include <cstdint>

namespace mgd {

// What activations and weights are stored as in GPU memory.
enum class StorageType : uint8_t { kFloat32, kFloat16 };
// What a shader computes in: kFloat16 is GLSL's mediump (RelaxedPrecision on
// Vulkan), taken only where storage is fp16 too.
enum class ArithmeticType : uint8_t { kFloat32, kFloat16 };

inline const char* StorageTypeName(StorageType t) { return t == StorageType::kFloat16 ? "fp16" : "fp32"; }
inline const char* ArithmeticTypeName(ArithmeticType t) { return t == ArithmeticType::kFloat16 ? "fp16" : "fp32"; }

struct Precision {
  StorageType storage = StorageType::kFloat32;
  ArithmeticType arithmetic = ArithmeticType::kFloat32;
  // kFloat32 keeps sums in fp32 (highp) where storage is fp16; kFloat16
  // lets them follow the arithmetic.
  ArithmeticType accumulation = ArithmeticType::kFloat32;

  // TFLite's "precision loss allowed": fp16 storage, arithmetic and sums.
  static constexpr Precision Fp16() { return {StorageType::kFloat16, ArithmeticType::kFloat16, ArithmeticType::kFloat16}; }
  static constexpr Precision Fp32() { return {}; }
  static constexpr Precision Of(bool fp16) { return fp16 ? Fp16() : Fp32(); }

  bool half_storage() const { return storage == StorageType::kFloat16; }
  // mediump as the shader's default float precision.
  bool half_arithmetic() const { return half_storage() && arithmetic == ArithmeticType::kFloat16; }
  // Sums declared highp in an fp16 shader.
  bool full_sums() const { return half_storage() && accumulation == ArithmeticType::kFloat32; }

  friend bool operator==(const Precision&, const Precision&) = default;
};

}  // namespace mgd
