#include "delegate/cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace mgd {
namespace {

namespace fs = std::filesystem;

// The index: one "token hash" line per entry.
std::map<std::string, std::string> ParseIndex(const std::string& text) {
  std::map<std::string, std::string> index;
  std::istringstream in(text);
  std::string token, hash;
  while (in >> token >> hash) index[token] = hash;
  return index;
}

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status WriteAtomically(const std::string& path, const void* data, size_t size) {
  const std::string temp = fmt::format("{}.tmp{}", path, getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.flush();
    if (!out) return absl::PermissionDeniedError(fmt::format("{}: cannot write", temp));
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return absl::PermissionDeniedError(fmt::format("{}: cannot replace ({})", path, ec.message()));
  }
  return absl::OkStatus();
}

// An exclusive advisory lock on DIR/index.lock for as long as it lives.
class IndexLock {
 public:
  explicit IndexLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) locked_ = flock(fd_, LOCK_EX) == 0;
  }
  ~IndexLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  bool locked() const { return locked_; }

 private:
  int fd_;
  bool locked_ = false;
};

}  // namespace

std::string Sha256Hex(const void* data, size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string CompilationCache::EntryPath(const std::string& token) const { return (fs::path(dir_) / (token + ".mgcm")).string(); }
std::string CompilationCache::IndexPath() const { return (fs::path(dir_) / "index").string(); }

std::optional<std::vector<uint8_t>> CompilationCache::Load(const std::string& token, std::string& why) const {
  const auto index_text = ReadWhole(IndexPath());
  if (!index_text) {
    why = "no index";
    return std::nullopt;
  }
  const auto index = ParseIndex(*index_text);
  auto it = index.find(token);
  if (it == index.end()) {
    why = "no entry";
    return std::nullopt;
  }
  // Copied into memory once; everything below looks at this copy only.
  const auto entry = ReadWhole(EntryPath(token));
  if (!entry) {
    why = "the entry file is missing";
    return std::nullopt;
  }
  if (Sha256Hex(entry->data(), entry->size()) != it->second) {
    why = fmt::format("the entry's SHA-256 does not match the index ({} bytes read)", entry->size());
    return std::nullopt;
  }
  return std::vector<uint8_t>(entry->begin(), entry->end());
}

absl::Status CompilationCache::Store(const std::string& token, const std::vector<uint8_t>& bytes) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_)) return absl::PermissionDeniedError(fmt::format("--cache-dir {}: not a usable folder", dir_));
  const std::string hash = Sha256Hex(bytes.data(), bytes.size());  // from memory, before writing
  // Entry and index change together under the lock, so that two processes
  // storing one token cannot leave one's entry under the other's hash.
  IndexLock lock((fs::path(dir_) / "index.lock").string());
  if (!lock.locked()) return absl::PermissionDeniedError(fmt::format("--cache-dir {}: cannot lock the index", dir_));
  if (absl::Status s = WriteAtomically(EntryPath(token), bytes.data(), bytes.size()); !s.ok()) return s;
  auto index = ParseIndex(ReadWhole(IndexPath()).value_or(""));
  index[token] = hash;
  std::string text;
  for (const auto& [t, h] : index) text += t + " " + h + "\n";
  return WriteAtomically(IndexPath(), text.data(), text.size());
}

}  // namespace mgd
