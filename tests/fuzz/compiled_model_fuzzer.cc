// libFuzzer target: any bytes through the compiled-model reader (the cache's
// and offline compiled models' payload). Nothing may crash, hang, allocate
// without bound or trip a sanitizer; a parsed model must serialize back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "delegate/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = mgd::ParseCompiledModel(data, size);
  if (!model.ok()) return 0;
  const std::vector<uint8_t> again = mgd::SerializeCompiledModel(*model);
  if (again.size() != size) std::abort();  // what parses must round-trip
  return 0;
}
