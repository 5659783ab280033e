// Finding a partition already compiled, before compiling it: in the model's
// offline compiled entries (mgd compile) or in the compilation cache. The
// keys and tokens that name a compiled partition are made here.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gpu/gpu.h"
#include "delegate/compile_options.h"
#include "delegate/compiled_file.h"
#include "delegate/compiled_model.h"
#include "interpreter/delegate.h"
#include "model/graph.h"

namespace mgd {

// What shapes a partition's compiled result besides the model, the device
// and mgd: the partition and the compile options. It keys the entries of an
// offline compiled model, whose file holds the model and names the device.
std::string PartitionKeyText(const Partition& partition, const CompileOptions& options);

// What an offline compiled model is for: this device, with this precision.
CompiledTarget TargetOf(const gpu::GpuInfo& info, bool fp16);

// The partition's entry in the graph's "mgd_compiled" metadata (`key`:
// SHA-256 of PartitionKeyText), or why there is none usable on `here`:
// FailedPrecondition for another device or precision, NotFound for other
// options or partitions.
absl::StatusOr<CompiledModel> LoadPrecompiled(const std::string& metadata, const Partition& partition,
                                              const std::string& key, const CompiledTarget& here);

// A cached or precompiled model must have the partition's inputs and outputs
// (the kernel indexes its buffers by them).
absl::StatusOr<CompiledModel> FitsPartition(CompiledModel model, const Partition& partition);

// SHA-256 (hex) of the model's structure: the model written without its
// constants' bytes or mgd's compiled entries. Names a model in cache keys
// and in workgroup tables' accuracy entries.
absl::StatusOr<std::string> ModelStructureDigest(const Graph& graph);

// Everything a cache entry depends on but the constants' bytes.
struct CacheKeyParts {
  std::string model_token;    // the app's name for the model; empty: its structure is hashed
  const gpu::GpuInfo* info = nullptr;
  std::string tables_digest;  // SHA-256 of the workgroup tables consulted
  std::string model_digest;   // ModelStructureDigest when already known (else computed here)
};
absl::StatusOr<std::string> CacheKeyOf(const Graph& graph, const Partition& partition, const CompileOptions& options,
                                       const CacheKeyParts& parts);

// The hashes of the constants the partition's nodes read, which make the key
// a token (cache.h).
std::vector<std::string> ConstantHashes(const Graph& graph, const Partition& partition);

}  // namespace mgd
