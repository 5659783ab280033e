// The compilation cache (--cache-dir): what prepare computed for a partition,
// stored under a token naming everything that could change it (the model,
// the options that shape the result, the backend, the GPU and driver, mgd's
// version), so that the next start skips the work.
//
// Integrity, as NNAPI asks of drivers: an app or a bug can change files in
// the directory, so nothing read back is trusted until checked. On write the
// SHA-256 of the entry is computed from the bytes in memory, the entry is
// written to a temporary file and renamed into place, and the hash goes into
// a separate index (token -> key, hash) rewritten atomically under an exclusive
// file lock. On read the whole entry is copied into memory first and hashed
// there (hashing the file and then reading it again would let it change in
// between), compared with the index, and only then parsed, with bounds
// checks. Any mismatch, truncation or parse failure: the entry is ignored
// (the caller compiles from scratch and overwrites it) and the reason is
// returned for the debug log.
#pragma once

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/bytes.h"

namespace mgd {

std::string Sha256Hex(const void* data, size_t size);

// SHA-256 as a tree over 256 KiB chunks (hashed in parallel, then the chunk
// digests hashed with the size), hex: as collision-resistant as SHA-256 and
// as fast as the cores together, for entries and weights of many MiB.
// ContentHashes does several buffers in one parallel pass.
struct Span {
  const void* data = nullptr;
  size_t size = 0;
};
std::vector<std::string> ContentHashes(const std::vector<Span>& spans);
std::string ContentHashHex(const void* data, size_t size);

// Everything a cache token names (GpuDelegate fills it in). Each field is
// written with its length, so that no two different sets of parts (a device
// name holding a newline, say) give the same text, hence the same token.
struct TokenParts {
  std::string build_id;  // BuildId(): a rebuilt mgd never reuses an entry
  uint32_t format = 0;   // kCompiledModelVersion
  std::string api, device, vendor, driver, api_version;
  bool clamped_limits = false;
  std::string tables;     // digest of the workgroup tables consulted
  std::string partition;  // the partition's nodes and the compile options
  std::string model;      // the hash of the model's structure, or the app's model token
};
// The key: a token without the constants' bytes, cheap to compute.
std::string CacheKey(const TokenParts& parts);
// The token: the key and the hashes of the constants the partition reads
// (none when the app names the model with its own token).
std::string CacheToken(const std::string& key, const std::vector<std::string>& constant_hashes);

class CompilationCache {
 public:
  explicit CompilationCache(std::string dir) : dir_(std::move(dir)) {}

  // An entry read and integrity-checked, and the token it is filed under.
  struct Entry {
    Bytes bytes;
    std::string token;
  };
  // The entry the index holds under `key`, when present and intact;
  // otherwise nullopt and `why` says what was wrong (or "no entry"). Hashing
  // a model's constants for its token takes as long as reading an entry, so
  // `token` is still being computed (on another thread) meanwhile, and it is
  // the caller's to use the entry only once `token` is known to be the
  // entry's. Only when the key holds several entries (one model structure,
  // other weights) does this wait for `token`, to pick one.
  std::optional<Entry> Load(const std::string& key, const std::shared_future<std::string>& token, std::string& why) const;
  std::optional<Bytes> Load(const std::string& token, std::string& why) const;  // the token known
  // Writes the entry and records its hash and key; safe against concurrent
  // writers of the same directory.
  absl::Status Store(const std::string& key, const std::string& token, const std::vector<uint8_t>& bytes) const;

  std::string EntryPath(const std::string& token) const;
  std::string IndexPath() const;

 private:
  std::optional<Bytes> ReadEntry(const std::string& token, const std::string& hash, std::string& why) const;

  std::string dir_;
};

}  // namespace mgd
