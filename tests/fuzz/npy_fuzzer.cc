// libFuzzer target: any bytes as a .npy file (the --input parser of the
// command line). Errors are expected; a crash, a hang, an overflowed size or
// a read past the bytes is not.
#include <cstddef>
#include <cstdint>

#include "tools/mgd/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto array = mgd::cli::ParseNpy(data, size, "fuzz.npy");
  if (array.ok() && array->bytes.size() != mgd::ElementSize(array->type) * static_cast<size_t>(mgd::NumElements(array->shape))) {
    __builtin_trap();
  }
  return 0;
}
