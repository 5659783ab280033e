#include "base/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <vector>

#include "base/parallel.h"

namespace mgd {
namespace {

// Files under a few MiB are read faster on one thread than threads start.
constexpr size_t kParallelBytes = size_t{4} << 20;

// What a file that is not a regular one is, for error messages.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

absl::Status ErrnoStatus(int error, const std::string& message) {
  const std::string text = fmt::format("{} ({})", message, ErrnoText(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR: return absl::NotFoundError(text);
    case EACCES:
    case EPERM:
    case EROFS: return absl::PermissionDeniedError(text);
    case ENAMETOOLONG:
    case ELOOP:
    case EISDIR: return absl::InvalidArgumentError(text);
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return absl::ResourceExhaustedError(text);
    default: return absl::InternalError(text);
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting the error a delayed write may only show here.
  int Close() {
    const int r = close(fd_);
    fd_ = -1;
    return r;
  }

 private:
  int fd_;
};

bool WriteAll(int fd, const uint8_t* data, size_t size) {
  for (size_t done = 0; done < size;) {
    const ssize_t n = write(fd, data + done, std::min<size_t>(size - done, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string ErrnoText(int error) { return std::error_code(error, std::generic_category()).message(); }

absl::StatusOr<Bytes> ReadFileBytes(const std::string& path, uint64_t max_bytes, const ChunkFn& on_chunk) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return ErrnoStatus(errno, fmt::format("{}: cannot open the file", path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, fmt::format("{}: cannot tell the file's size", path));
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format("{}: is {}, not a regular file", path, KindOf(st.st_mode)));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return absl::OutOfRangeError(fmt::format("{}: {} bytes, more than the {} expected at most", path, size, max_bytes));
  }
  Bytes bytes(static_cast<size_t>(size));  // not zeroed: every chunk is read into it
  const size_t chunks = std::max<size_t>(1, (bytes.size() + kReadChunkBytes - 1) / kReadChunkBytes);
  std::vector<int> read_error(chunks, 0);  // errno of a failed read, -1 for a short one
  auto read_chunk = [&](size_t i) {
    const size_t at = i * kReadChunkBytes, n = std::min(kReadChunkBytes, bytes.size() - at);
    for (size_t done = 0; done < n;) {
      const ssize_t got = pread(fd.get(), bytes.data() + at + done, n - done, static_cast<off_t>(at + done));
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        read_error[i] = got < 0 ? errno : -1;  // a read error, or the file shrank
        return;
      }
      done += static_cast<size_t>(got);
    }
    if (on_chunk) on_chunk(i, bytes.data() + at, n);
  };
  // With a callback (hashing, say) each chunk is worth a thread sooner.
  ParallelFor(chunks, read_chunk, bytes.size() < (on_chunk ? 2 * kReadChunkBytes : kParallelBytes) ? 1 : SIZE_MAX);
  for (int error : read_error) {
    if (error > 0) return ErrnoStatus(error, fmt::format("{}: read error", path));
    if (error < 0) return absl::DataLossError(fmt::format("{}: the file shrank while it was read", path));
  }
  return bytes;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes) {
  auto bytes = ReadFileBytes(path, max_bytes);
  if (!bytes.ok()) return bytes.status();
  return std::string(bytes->begin(), bytes->end());
}

absl::Status WriteFileAtomically(const std::string& path, const void* data, size_t size) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    return absl::InvalidArgumentError(fmt::format("{}: is {}, not a regular file", path, KindOf(st.st_mode)));
  }
  // A name no one else uses, created exclusively: a FIFO or a link planted
  // under a guessable name is never opened.
  static std::atomic<uint64_t> counter{0};
  std::string temp;
  int raw = -1;
  for (int attempt = 0; attempt < 100 && raw < 0; ++attempt) {
    temp = fmt::format("{}.tmp{}.{}", path, getpid(), counter++);
    raw = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0) return ErrnoStatus(errno, fmt::format("{}: cannot write", path));
  Fd fd(raw);
  auto fail = [&](int error) {
    unlink(temp.c_str());
    return ErrnoStatus(error, fmt::format("{}: cannot write", path));
  };
  if (!WriteAll(fd.get(), static_cast<const uint8_t*>(data), size)) return fail(errno);
  if (fd.Close() != 0) return fail(errno);
  if (rename(temp.c_str(), path.c_str()) != 0) return fail(errno);
  return absl::OkStatus();
}

absl::Status MakeFolder(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoStatus(errno, fmt::format("{}: cannot use the folder", path));
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return ErrnoStatus(ec.value(), fmt::format("{}: cannot create the folder", path));
    if (stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, fmt::format("{}: cannot use the folder", path));
  }
  if (!S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(fmt::format("{}: is not a folder", path));
  return absl::OkStatus();
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace mgd
