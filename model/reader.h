// Reading a .tflite file into the Graph IR. Every load runs the flatbuffers
// Verifier and then ValidateGraph; errors name the file and the node, tensor
// or field that is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/bytes.h"
#include "model/graph.h"

namespace mgd {

// `source` names the bytes in error messages (usually the file path).
absl::StatusOr<Graph> ReadModel(const uint8_t* data, size_t size, std::string_view source);
absl::StatusOr<Graph> ReadModelFile(const std::string& path);

// The whole file in memory, or an error naming it (also when it holds more
// than `max_bytes`, or changes size while read). Files of several MiB (of
// two chunks when `on_chunk` is given) are read in chunks of kReadChunkBytes
// on all cores (one core copies pages out of the page cache at a fraction of
// the machine's bandwidth, and hashes at a fraction of the cores'), and
// `on_chunk(index, data, size)`, when given, runs on each chunk as soon as it
// is in memory, on the thread that read it (the compilation cache hashes
// entries this way, from the copy, never from the file).
inline constexpr size_t kReadChunkBytes = size_t{256} << 10;
using ChunkFn = std::function<void(size_t index, const uint8_t* data, size_t size)>;
absl::StatusOr<Bytes> ReadFileBytes(const std::string& path, uint64_t max_bytes = UINT64_MAX,
                                                   const ChunkFn& on_chunk = nullptr);

}  // namespace mgd
