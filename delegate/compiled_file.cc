#include "delegate/compiled_file.h"

#include <fmt/format.h>

#include "delegate/byte_io.h"
#include "delegate/cache.h"
#include "delegate/serialize.h"

namespace mgd {

std::vector<uint8_t> SerializeCompiledFile(const CompiledTarget& target, const std::vector<CompiledFileEntry>& entries) {
  ByteWriter w;
  w.Put<uint32_t>(kCompiledFileMagic);
  w.Put<uint32_t>(kCompiledFileVersion);
  for (const std::string* s : {&target.api, &target.vendor, &target.device_name, &target.driver_version,
                               &target.api_version}) {
    w.String(*s);
  }
  w.Put<uint8_t>(target.clamped_limits);
  w.Put<uint8_t>(target.fp16);
  w.String(target.built_by);
  w.Put<uint32_t>(static_cast<uint32_t>(entries.size()));
  for (const CompiledFileEntry& e : entries) {
    w.String(e.key);
    w.String(e.sha256);
    w.Bytes(e.bytes.data(), e.bytes.size());
  }
  return w.Take();
}

absl::StatusOr<CompiledFile> CompiledFile::Parse(const uint8_t* data, size_t size) {
  ByteReader r(data, size);
  if (r.Get<uint32_t>("magic") != kCompiledFileMagic) {
    return absl::InvalidArgumentError(fmt::format("{} metadata: not an mgd compiled model (bad magic)", kCompiledMetadataName));
  }
  const uint32_t version = r.Get<uint32_t>("version");
  if (r.ok() && version != kCompiledFileVersion) {
    return absl::InvalidArgumentError(fmt::format("{} metadata: version {} (this mgd reads {})", kCompiledMetadataName,
                                                  version, kCompiledFileVersion));
  }
  CompiledFile file;
  CompiledTarget& t = file.target_;
  t.api = r.String("target.api");
  t.vendor = r.String("target.vendor");
  t.device_name = r.String("target.device_name");
  t.driver_version = r.String("target.driver_version");
  t.api_version = r.String("target.api_version");
  t.clamped_limits = r.Get<uint8_t>("target.clamped_limits") != 0;
  t.fp16 = r.Get<uint8_t>("target.fp16") != 0;
  t.built_by = r.String("target.built_by");
  file.entries_.resize(r.Count("entries", 24));
  for (Span& e : file.entries_) {
    e.key = r.String("entry.key");
    e.sha256 = r.String("entry.sha256");
    const uint64_t bytes = r.Get<uint64_t>("entry.bytes");
    e.size = static_cast<size_t>(bytes);
    e.data = data + r.position();
    r.Skip("entry.bytes", bytes);
  }
  if (r.ok() && !r.at_end()) r.Fail("end", "bytes after the last entry");
  if (!r.ok()) return absl::InvalidArgumentError(fmt::format("{} metadata: {}", kCompiledMetadataName, r.error()));
  return file;
}

bool CompiledFile::Has(const std::string& key) const {
  for (const Span& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

std::vector<std::string> CompiledFile::keys() const {
  std::vector<std::string> keys;
  for (const Span& e : entries_) keys.push_back(e.key);
  return keys;
}

absl::StatusOr<CompiledModel> CompiledFile::Load(const std::string& key) const {
  for (const Span& e : entries_) {
    if (e.key != key) continue;
    if (ContentHashHex(e.data, e.size) != e.sha256) {
      return absl::DataLossError(fmt::format("{} metadata: entry {}...: its SHA-256 does not match (the file is damaged)",
                                             kCompiledMetadataName, key.substr(0, 12)));
    }
    return ParseCompiledModel(e.data, e.size);
  }
  return absl::NotFoundError(fmt::format("{} metadata: no entry {}...", kCompiledMetadataName, key.substr(0, 12)));
}

}  // namespace mgd
