#include "delegate/cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "base/parallel.h"
#include "base/files.h"

namespace mgd {
namespace {

namespace fs = std::filesystem;

// The index: one "token key hash" line per entry (key: the token's cheap
// part, CacheKey). Lines of another shape (an older mgd's) are ignored.
struct IndexLine {
  std::string key, hash;
};
std::map<std::string, IndexLine> ParseIndex(const std::string& text) {
  std::map<std::string, IndexLine> index;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string token, key, hash, more;
    if (fields >> token >> key >> hash && !(fields >> more)) index[token] = {key, hash};
  }
  return index;
}

// A cache folder is no place for gigabytes: larger files are not read.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 31;

std::string AsText(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

// The folder's index, or nullopt with `why` when there is none (or it is
// unreadable, too large, not a regular file).
std::optional<std::map<std::string, IndexLine>> ReadIndex(const std::string& path, std::string& why) {
  auto text = ReadFileBytes(path, kMaxFileBytes);
  if (!text.ok()) {
    why = absl::IsNotFound(text.status()) ? "no index" : "the index: " + std::string(text.status().message());
    return std::nullopt;
  }
  return ParseIndex(AsText(*text));
}

// An exclusive advisory lock on DIR/index.lock for as long as it lives. A
// writer holds it for one entry's write; one that holds it much longer (a
// process stopped in a debugger) makes this give up rather than hang.
class IndexLock {
 public:
  explicit IndexLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
    struct stat st {};
    if (fd_ < 0 || fstat(fd_, &st) != 0) {
      why_ = fmt::format("{}: cannot open ({})", path, ErrnoText(errno));
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      why_ = fmt::format("{}: not a regular file", path);
      return;
    }
    const auto give_up = std::chrono::steady_clock::now() + kWait;
    while (!(locked_ = flock(fd_, LOCK_EX | LOCK_NB) == 0)) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > give_up) {
        why_ = errno == EWOULDBLOCK ? fmt::format("{}: held by another writer for over {} s", path, kWait.count())
                                    : fmt::format("{}: cannot lock ({})", path, ErrnoText(errno));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~IndexLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  bool locked() const { return locked_; }
  const std::string& why() const { return why_; }

 private:
  static constexpr std::chrono::seconds kWait{10};
  int fd_ = -1;
  bool locked_ = false;
  std::string why_;
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

namespace {

constexpr size_t kChunk = size_t{256} << 10;
static_assert(kChunk == kReadChunkBytes, "entries are hashed as they are read, chunk by chunk");
using Digest = std::array<unsigned char, 32>;

Digest DigestChunk(const void* data, size_t size) {
  Digest d{};
  unsigned int length = 0;
  EVP_Digest(data, size, d.data(), &length, EVP_sha256(), nullptr);
  return d;
}

size_t ChunkCount(size_t size) { return std::max<size_t>(1, (size + kChunk - 1) / kChunk); }

// The root of the tree: the size and the chunk digests, hashed.
std::string TreeHashHex(size_t size, const Digest* digests, size_t count) {
  std::string tree = fmt::format("mgd sha256 tree 256KiB {}\n", size);
  for (size_t j = 0; j < count; ++j) tree.append(reinterpret_cast<const char*>(digests[j].data()), 32);
  return Sha256Hex(tree.data(), tree.size());
}

}  // namespace

std::vector<std::string> ContentHashes(const std::vector<Span>& spans) {
  struct Job {
    size_t span, offset;
  };
  std::vector<Job> jobs;
  std::vector<size_t> first_job;
  for (size_t i = 0; i < spans.size(); ++i) {
    first_job.push_back(jobs.size());
    for (size_t at = 0; at == 0 || at < spans[i].size; at += kChunk) jobs.push_back({i, at});
  }
  std::vector<Digest> digests(jobs.size());
  auto hash = [&](size_t j) {
    const Span& s = spans[jobs[j].span];
    digests[j] = DigestChunk(static_cast<const uint8_t*>(s.data) + jobs[j].offset, std::min(kChunk, s.size - jobs[j].offset));
  };
  // Under a chunk hashes faster on this thread than threads start (~0.5 ms
  // for 16); a few MiB already take ~2 ms on one core.
  size_t total = 0;
  for (const Span& s : spans) total += s.size;
  ParallelFor(jobs.size(), hash, total < kChunk ? 1 : SIZE_MAX);
  std::vector<std::string> hashes;
  for (size_t i = 0; i < spans.size(); ++i) {
    const size_t end = i + 1 < spans.size() ? first_job[i + 1] : jobs.size();
    hashes.push_back(TreeHashHex(spans[i].size, digests.data() + first_job[i], end - first_job[i]));
  }
  return hashes;
}

std::string ContentHashHex(const void* data, size_t size) { return ContentHashes({{data, size}})[0]; }

std::string CacheKey(const TokenParts& p) {
  std::string text = fmt::format("mgd cache key {}\n", p.format);
  for (const std::string* field : {&p.build_id, &p.api, &p.device, &p.vendor, &p.driver, &p.api_version, &p.tables,
                                   &p.partition, &p.model}) {
    text += fmt::format("{}:{}\n", field->size(), *field);
  }
  text += p.clamped_limits ? "clamped\n" : "full limits\n";
  return Sha256Hex(text.data(), text.size());
}

std::string CacheToken(const std::string& key, const std::vector<std::string>& constant_hashes) {
  if (constant_hashes.empty()) return key;
  std::string text = fmt::format("mgd cache token\n{}\n", key);
  for (const std::string& hash : constant_hashes) text += fmt::format("{}:{}\n", hash.size(), hash);
  return Sha256Hex(text.data(), text.size());
}

std::string CompilationCache::EntryPath(const std::string& token) const { return (fs::path(dir_) / (token + ".mgcm")).string(); }
std::string CompilationCache::IndexPath() const { return (fs::path(dir_) / "index").string(); }

std::optional<CompilationCache::Entry> CompilationCache::Load(const std::string& key,
                                                             const std::shared_future<std::string>& token,
                                                             std::string& why) const {
  const auto index = ReadIndex(IndexPath(), why);
  if (!index) return std::nullopt;
  // The one entry under `key` is read while the token is still computed;
  // with several (one model structure, other weights) the token picks.
  std::vector<std::string> candidates;
  for (const auto& [t, line] : *index) {
    if (line.key == key) candidates.push_back(t);
  }
  if (candidates.empty()) {
    why = "no entry";
    return std::nullopt;
  }
  const std::string read_token = candidates.size() == 1 ? candidates[0] : token.get();
  auto it = index->find(read_token);
  if (it == index->end()) {
    why = "no entry for these weights";
    return std::nullopt;
  }
  auto bytes = ReadEntry(read_token, it->second.hash, why);
  if (!bytes) return std::nullopt;
  return Entry{std::move(*bytes), read_token};
}

std::optional<Bytes> CompilationCache::Load(const std::string& token, std::string& why) const {
  const auto index = ReadIndex(IndexPath(), why);
  if (!index) return std::nullopt;
  auto it = index->find(token);
  if (it == index->end()) {
    why = "no entry";
    return std::nullopt;
  }
  return ReadEntry(token, it->second.hash, why);
}

std::optional<Bytes> CompilationCache::ReadEntry(const std::string& token, const std::string& hash, std::string& why) const {
  // Copied into memory once, each chunk hashed from the copy as soon as it
  // is read (on the thread that read it); nothing looks at the file again.
  // ReadFileBytes reads no file over kMaxFileBytes, so every chunk has a slot.
  std::vector<Digest> digests(ChunkCount(kMaxFileBytes));
  auto entry = ReadFileBytes(EntryPath(token), kMaxFileBytes,
                             [&](size_t i, const uint8_t* data, size_t size) { digests[i] = DigestChunk(data, size); });
  if (!entry.ok()) {
    why = absl::IsNotFound(entry.status()) ? "the entry file is missing"
                                           : "the entry: " + std::string(entry.status().message());
    return std::nullopt;
  }
  if (TreeHashHex(entry->size(), digests.data(), ChunkCount(entry->size())) != hash) {
    why = fmt::format("the entry's SHA-256 does not match the index ({} bytes read)", entry->size());
    return std::nullopt;
  }
  return std::move(*entry);
}

absl::Status CompilationCache::Store(const std::string& key, const std::string& token, const std::vector<uint8_t>& bytes) const {
  if (absl::Status s = MakeFolder(dir_); !s.ok()) return s;
  const std::string hash = ContentHashHex(bytes.data(), bytes.size());  // from memory, before writing
  // Entry and index change together under the lock, so that two processes
  // storing one token cannot leave one's entry under the other's hash.
  IndexLock lock((fs::path(dir_) / "index.lock").string());
  if (!lock.locked()) return absl::UnavailableError(lock.why());
  if (absl::Status s = WriteFileAtomically(EntryPath(token), bytes.data(), bytes.size()); !s.ok()) return s;
  std::string why;
  auto index = ReadIndex(IndexPath(), why).value_or(std::map<std::string, IndexLine>{});
  index[token] = {key, hash};
  std::string text;
  for (const auto& [t, line] : index) text += t + " " + line.key + " " + line.hash + "\n";
  return WriteFileAtomically(IndexPath(), text.data(), text.size());
}

}  // namespace mgd
