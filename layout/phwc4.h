// PHWC4: the activation layout inside the delegate. Channels are split into
// slices of 4 (the last one zero-padded), and each slice is a plane of
// [height][width] vec4s, so a shader reads or writes 4 channels of one pixel
// with one vec4 access:
//
//   index(b, y, x, c) = (((b * slices + c / 4) * height + y) * width + x) * 4 + c % 4
//
// Graph inputs and outputs stay float32 BHWC (what users hand in); the
// delegate converts at the edges.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mgd::layout {

// A 4-D activation shape; tensors of lower rank are viewed as BHWC with
// leading ones by the delegate.
struct Bhwc {
  int batch = 1, height = 1, width = 1, channels = 1;

  int slices() const { return (channels + 3) / 4; }
  size_t elements() const { return static_cast<size_t>(batch) * height * width * channels; }
  // Elements of the PHWC4 form, padding included.
  size_t phwc4_elements() const { return static_cast<size_t>(batch) * slices() * height * width * 4; }
  bool operator==(const Bhwc&) const = default;
};

inline size_t Phwc4Index(const Bhwc& s, int b, int y, int x, int c) {
  return ((((static_cast<size_t>(b) * s.slices() + c / 4) * s.height + y) * s.width + x) * 4) + c % 4;
}

// BHWC float32 -> PHWC4 (padding channels set to 0). `dst` holds
// shape.phwc4_elements() values.
void BhwcToPhwc4(const float* src, const Bhwc& shape, float* dst);
// PHWC4 -> BHWC float32 (padding dropped).
void Phwc4ToBhwc(const float* src, const Bhwc& shape, float* dst);

// The same with IEEE binary16 storage on the PHWC4 side (fp16 precision
// mode), rounding to nearest even.
void BhwcToPhwc4Half(const float* src, const Bhwc& shape, uint16_t* dst);
void Phwc4HalfToBhwc(const uint16_t* src, const Bhwc& shape, float* dst);

}  // namespace mgd::layout
