// libFuzzer target: any bytes as a workgroup table (what --workgroups and
// mgd tune read). Errors are expected; a crash, a hang, or a table that does
// not come back the same through its own serialization, is not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tuning/workgroups.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = mgd::tuning::ParseTable(text, "fuzz.json");
  if (!table.ok()) return 0;
  const std::string written = mgd::tuning::SerializeTable(*table);
  auto again = mgd::tuning::ParseTable(written, "again.json");
  if (!again.ok() || mgd::tuning::SerializeTable(*again) != written) __builtin_trap();
  return 0;
}
