// Offline compiled models (mgd compile): the .tflite itself with one more
// metadata buffer, "mgd_compiled", holding each partition's CompiledModel as
// prepared on one GPU. Any TFLite runtime still runs the file (on its own
// kernels); mgd's GPU delegate finds the buffer and loads the partitions
// instead of compiling them, and the embedded model is what it recompiles
// from when allowed to (another GPU or driver).
//
// The buffer: magic, version, the target (API, GPU, driver, precision, the
// compiling mgd), then entries (key, SHA-256, CompiledModel bytes). The key
// names the partition and the compile options (GpuDelegate::PartitionKey).
// Parsing checks the structure; each entry's hash is checked when it is used,
// so that a file is hashed once however many partitions it has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "delegate/compiled_model.h"

namespace mgd {

inline constexpr char kCompiledMetadataName[] = "mgd_compiled";
inline constexpr uint32_t kCompiledFileMagic = 0x4643474D;  // "MGCF" little-endian
inline constexpr uint32_t kCompiledFileVersion = 1;

// What the file was compiled for and by.
struct CompiledTarget {
  std::string api;  // gpu::ApiName
  std::string vendor, device_name, driver_version, api_version;
  bool clamped_limits = false;
  bool fp16 = false;
  std::string built_by;  // BuildId() of the mgd that compiled it (information only)
};

struct CompiledFileEntry {
  std::string key;
  std::string sha256;  // ContentHashHex of `bytes`
  std::vector<uint8_t> bytes;  // SerializeCompiledModel
};

std::vector<uint8_t> SerializeCompiledFile(const CompiledTarget& target, const std::vector<CompiledFileEntry>& entries);

// A parsed buffer: the target and where each entry's bytes are. Points into
// the data it was parsed from, which must outlive it.
class CompiledFile {
 public:
  static absl::StatusOr<CompiledFile> Parse(const uint8_t* data, size_t size);

  const CompiledTarget& target() const { return target_; }
  size_t size() const { return entries_.size(); }
  bool Has(const std::string& key) const;
  std::vector<std::string> keys() const;
  // The entry's CompiledModel after checking its SHA-256; an error names
  // what is wrong (no such entry, hash mismatch, the field that fails).
  absl::StatusOr<CompiledModel> Load(const std::string& key) const;

 private:
  struct Span {
    std::string key, sha256;
    const uint8_t* data = nullptr;
    size_t size = 0;
  };
  CompiledTarget target_;
  std::vector<Span> entries_;
};

}  // namespace mgd
