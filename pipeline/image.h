// 8-bit images: read from PNG and JPEG files (libpng, libjpeg-turbo) with an
// error that names the file and what is wrong, and written as PNG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mgd::pipeline {

struct Image {
  int width = 0, height = 0, channels = 0;  // channels: 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;              // rows top to bottom, channels interleaved
};

// Larger images are refused: a frame this size is already 256 MB as RGBA.
inline constexpr int kMaxImageSide = 16384;
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 26;

// A PNG or JPEG file (by its first bytes, not its name) as RGB, or RGBA
// when it has alpha. `name` names it in errors.
absl::StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, const std::string& name);
absl::StatusOr<Image> ReadImage(const std::string& path);
absl::Status WritePng(const Image& image, const std::string& path);

}  // namespace mgd::pipeline
