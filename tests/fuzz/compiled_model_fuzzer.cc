// libFuzzer target for everything mgd reads back from a cache folder or an
// offline compiled model; the first byte picks the reader:
//   0: a CompiledModel (the payload of both): what parses must round-trip;
//   1: the "mgd_compiled" container: every entry's hash check and parse;
//   2: a cache folder: the bytes up to the first NUL are the index, the rest
//      the entry of the index's first token; Load checks and returns it, by
//      token and by the key after it.
// Nothing may crash, hang, allocate without bound or trip a sanitizer.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "delegate/cache.h"
#include "delegate/compiled_file.h"
#include "delegate/serialize.h"

namespace {

void ParseModel(const uint8_t* data, size_t size) {
  auto model = mgd::ParseCompiledModel(data, size);
  if (!model.ok()) return;
  if (mgd::SerializeCompiledModel(*model).size() != size) std::abort();  // what parses must round-trip
}

void ParseFile(const uint8_t* data, size_t size) {
  auto file = mgd::CompiledFile::Parse(data, size);
  if (!file.ok()) return;
  for (const std::string& key : file->keys()) (void)file->Load(key);
}

void LoadFromCache(const uint8_t* data, size_t size) {
  // One folder per fuzzing process, removed when it exits.
  static const struct Folder {
    std::string path = (std::filesystem::temp_directory_path() / ("mgd_cache_fuzz_" + std::to_string(getpid()))).string();
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } folder;
  const std::string& dir = folder.path;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  const std::string index = bytes.substr(0, nul);
  const std::string entry = nul == std::string::npos ? "" : bytes.substr(nul + 1);
  std::string token = "t", key = "k";
  std::istringstream(index) >> token >> key;
  // Tokens name files: keep the fuzzer inside its folder.
  if (token.find_first_not_of("0123456789abcdef") != std::string::npos || token.size() > 64) token = "t";
  const mgd::CompilationCache cache(dir);
  std::ofstream(cache.IndexPath(), std::ios::binary | std::ios::trunc) << index;
  std::ofstream(cache.EntryPath(token), std::ios::binary | std::ios::trunc) << entry;
  std::string why;
  if (auto loaded = cache.Load(token, why)) ParseModel(loaded->data(), loaded->size());
  std::promise<std::string> computed;
  computed.set_value(token);
  if (auto loaded = cache.Load(key, computed.get_future().share(), why)) {
    ParseModel(loaded->bytes.data(), loaded->bytes.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0]) {
    case 0: ParseModel(data + 1, size - 1); break;
    case 1: ParseFile(data + 1, size - 1); break;
    case 2: LoadFromCache(data + 1, size - 1); break;
    default: break;
  }
  return 0;
}
