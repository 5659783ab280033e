// libFuzzer target: any bytes as an image file (mgd pipeline's PNG/JPEG
// reader). Errors are expected; a crash, a hang, a huge allocation or a read
// past the bytes is not.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = mgd::pipeline::DecodeImage(std::vector<uint8_t>(data, data + size), "fuzz");
  if (image.ok() && image->pixels.size() != static_cast<size_t>(image->width) * image->height * image->channels) __builtin_trap();
  return 0;
}
