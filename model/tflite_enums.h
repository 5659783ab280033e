// TFLite's flatbuffer enums <-> the IR's, for the reader, the writer and the
// ops' own options (ops/tflite_io.h).
#pragma once

#include "model/graph.h"
#include "tflite_subset_generated.h"

namespace mgd {

inline Activation ActivationFromTfl(tflite::ActivationFunctionType a) {
  switch (a) {
    case tflite::ActivationFunctionType_RELU: return Activation::kRelu;
    case tflite::ActivationFunctionType_RELU_N1_TO_1: return Activation::kReluN1To1;
    case tflite::ActivationFunctionType_RELU6: return Activation::kRelu6;
    case tflite::ActivationFunctionType_TANH: return Activation::kTanh;
    case tflite::ActivationFunctionType_SIGN_BIT: return Activation::kSignBit;
    default: return Activation::kNone;
  }
}

inline Padding PaddingFromTfl(tflite::Padding p) { return p == tflite::Padding_VALID ? Padding::kValid : Padding::kSame; }

inline tflite::ActivationFunctionType ToTfl(Activation a) {
  return static_cast<tflite::ActivationFunctionType>(static_cast<int8_t>(a));
}

inline tflite::Padding ToTfl(Padding p) { return p == Padding::kValid ? tflite::Padding_VALID : tflite::Padding_SAME; }

}  // namespace mgd
