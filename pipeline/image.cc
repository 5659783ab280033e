#include "pipeline/image.h"

#include <fmt/format.h>
#include <png.h>
#include <turbojpeg.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace mgd::pipeline {
namespace {

absl::Status CheckSize(int64_t width, int64_t height, const std::string& name) {
  if (width <= 0 || height <= 0) return absl::InvalidArgumentError(fmt::format("{}: the image is {}x{}", name, width, height));
  if (width > kMaxImageSide || height > kMaxImageSide || width * height > kMaxImagePixels) {
    return absl::InvalidArgumentError(fmt::format("{}: the image is {}x{}, larger than mgd takes ({} per side, {} pixels)",
                                                  name, width, height, kMaxImageSide, kMaxImagePixels));
  }
  return absl::OkStatus();
}

absl::StatusOr<Image> DecodePng(const std::vector<uint8_t>& bytes, const std::string& name) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) {
    return absl::InvalidArgumentError(fmt::format("{}: not a readable PNG ({})", name, png.message));
  }
  std::unique_ptr<png_image, void (*)(png_imagep)> guard(&png, png_image_free);
  if (absl::Status s = CheckSize(png.width, png.height, name); !s.ok()) return s;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.channels = (png.format & PNG_FORMAT_FLAG_ALPHA) ? 4 : 3;
  png.format = image.channels == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  image.pixels.resize(static_cast<size_t>(image.width) * image.height * image.channels);
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    return absl::InvalidArgumentError(fmt::format("{}: the PNG is damaged ({})", name, png.message));
  }
  return image;
}

absl::StatusOr<Image> DecodeJpeg(const std::vector<uint8_t>& bytes, const std::string& name) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  if (!tj) return absl::InternalError(fmt::format("{}: libjpeg-turbo did not start", name));
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height, &subsampling,
                          &colorspace) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: not a readable JPEG ({})", name, tjGetErrorStr2(tj.get())));
  }
  if (absl::Status s = CheckSize(width, height, name); !s.ok()) return s;
  Image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.pixels.resize(static_cast<size_t>(width) * height * 3);
  if (tjDecompress2(tj.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), image.pixels.data(), width, 0, height,
                    TJPF_RGB, TJFLAG_STOPONWARNING) != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: the JPEG is damaged ({})", name, tjGetErrorStr2(tj.get())));
  }
  return image;
}

}  // namespace

absl::StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, const std::string& name) {
  static const uint8_t kPng[] = {0x89, 'P', 'N', 'G'}, kJpeg[] = {0xFF, 0xD8, 0xFF};
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), kPng, 4) == 0) return DecodePng(bytes, name);
  if (bytes.size() >= 3 && std::memcmp(bytes.data(), kJpeg, 3) == 0) return DecodeJpeg(bytes, name);
  return absl::InvalidArgumentError(fmt::format("{}: not a PNG or JPEG file ({} bytes)", name, bytes.size()));
}

absl::StatusOr<Image> ReadImage(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(fmt::format("{}: cannot open the image", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return DecodeImage(bytes, path);
}

absl::Status WritePng(const Image& image, const std::string& path) {
  if (image.channels != 3 && image.channels != 4) return absl::InvalidArgumentError("WritePng: 3 or 4 channels");
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = image.channels == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), 0, nullptr)) {
    return absl::UnavailableError(fmt::format("{}: cannot write the PNG ({})", path, png.message));
  }
  return absl::OkStatus();
}

}  // namespace mgd::pipeline
