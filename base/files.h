// Files as mgd reads and writes them: regular files only, every error a
// value that names the path and the system's reason.
//
// A FIFO, device or socket where a model, an input, a cache entry or an
// output would be is refused, never opened for blocking I/O (opening a FIFO
// for reading waits for a writer forever). No function here throws: the
// std::filesystem calls that would (a path component too long, a loop of
// links, a folder the user cannot search) are made with error codes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/bytes.h"

namespace mgd {

// The system's text for an errno value ("No space left on device").
std::string ErrnoText(int error);

// The whole file in memory, or an error naming it (also when it is not a
// regular file, holds more than `max_bytes`, or changes size while read).
// Files of several MiB (of two chunks when `on_chunk` is given) are read in
// chunks of kReadChunkBytes on all cores (one core copies pages out of the
// page cache at a fraction of the machine's bandwidth, and hashes at a
// fraction of the cores'), and `on_chunk(index, data, size)`, when given,
// runs on each chunk as soon as it is in memory, on the thread that read it
// (the compilation cache hashes entries this way, from the copy, never from
// the file).
inline constexpr size_t kReadChunkBytes = size_t{256} << 10;
using ChunkFn = std::function<void(size_t index, const uint8_t* data, size_t size)>;
absl::StatusOr<Bytes> ReadFileBytes(const std::string& path, uint64_t max_bytes = UINT64_MAX,
                                    const ChunkFn& on_chunk = nullptr);
absl::StatusOr<std::string> ReadTextFile(const std::string& path, uint64_t max_bytes = uint64_t{64} << 20);

// Writes `path` whole or not at all: a new temporary file in the same folder
// (created exclusively, so nothing already there is opened), then renamed
// over `path`. Refuses a `path` that exists and is not a regular file.
absl::Status WriteFileAtomically(const std::string& path, const void* data, size_t size);
inline absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, text.data(), text.size());
}

// The folder `path`, created with its parents when missing; an error naming
// it and the reason when it cannot be (or is not a folder).
absl::Status MakeFolder(const std::string& path);

// Whether `path` exists (false also when it cannot be checked).
bool PathExists(const std::string& path);

}  // namespace mgd
