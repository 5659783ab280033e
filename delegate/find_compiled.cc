#include "delegate/find_compiled.h"

#include <fmt/format.h>

#include "delegate/build_id.h"
#include "delegate/cache.h"
#include "delegate/serialize.h"
#include "model/writer.h"

namespace mgd {

std::string PartitionKeyText(const Partition& partition, const CompileOptions& c) {
  return fmt::format("{}nodes {}\ninputs {}\noutputs {}\n", CompileOptionsText(c), fmt::join(partition.nodes, ","),
                     fmt::join(partition.inputs, ","), fmt::join(partition.outputs, ","));
}

CompiledTarget TargetOf(const gpu::GpuInfo& info, bool fp16) {
  return {gpu::ApiName(info.api), info.vendor,         info.device_name, info.driver_version,
          info.api_version,       info.clamped_limits, fp16,             BuildId()};
}

absl::StatusOr<CompiledModel> FitsPartition(CompiledModel model, const Partition& partition) {
  if (model.inputs.size() != partition.inputs.size() || model.outputs.size() != partition.outputs.size()) {
    return absl::InvalidArgumentError(fmt::format("the entry has {} inputs and {} outputs; the partition {} and {}",
                                                  model.inputs.size(), model.outputs.size(), partition.inputs.size(),
                                                  partition.outputs.size()));
  }
  return model;
}

absl::StatusOr<CompiledModel> LoadPrecompiled(const std::string& metadata, const Partition& partition,
                                              const std::string& key, const CompiledTarget& here) {
  auto file = CompiledFile::Parse(reinterpret_cast<const uint8_t*>(metadata.data()), metadata.size());
  if (!file.ok()) return file.status();
  const CompiledTarget& made = file->target();
  auto describe = [](const CompiledTarget& t) {
    return fmt::format("'{}' ({} {}, driver {}, {}{})", t.device_name, t.vendor, t.api, t.driver_version, t.fp16 ? "fp16" : "fp32",
                       t.clamped_limits ? ", clamped limits" : "");
  };
  if (made.api != here.api || made.vendor != here.vendor || made.device_name != here.device_name ||
      made.driver_version != here.driver_version || made.api_version != here.api_version ||
      made.clamped_limits != here.clamped_limits || made.fp16 != here.fp16) {
    return absl::FailedPreconditionError(
        fmt::format("the model was compiled for {}; this is {}", describe(made), describe(here)));
  }
  if (!file->Has(key)) {
    // Not a device mismatch: other options (fusion, memory strategy) than
    // at compile time, or a partition that fell back to the CPU then.
    return absl::NotFoundError(fmt::format("none of its {} entries is for this partition with these options", file->size()));
  }
  auto model = file->Load(key);
  if (!model.ok()) return model.status();
  return FitsPartition(std::move(*model), partition);
}

absl::StatusOr<std::string> ModelStructureDigest(const Graph& graph) {
  auto structure = WriteModelStructure(graph, StructureOptions{{kCompiledMetadataName}});
  if (!structure.ok()) return structure.status();
  return Sha256Hex(structure->data(), structure->size());
}

// The model's structure (or the app's model token), the partition, the
// compile options, the workgroup tables, the backend, GPU, driver and mgd's
// build.
absl::StatusOr<std::string> CacheKeyOf(const Graph& graph, const Partition& partition, const CompileOptions& options,
                                       const CacheKeyParts& parts) {
  std::string model_id = "token " + parts.model_token;
  if (parts.model_token.empty()) {
    auto digest = parts.model_digest.empty() ? ModelStructureDigest(graph) : parts.model_digest;
    if (!digest.ok()) return digest.status();
    model_id = "structure " + *digest;
  }
  const gpu::GpuInfo& info = *parts.info;
  return CacheKey({BuildId(), kCompiledModelVersion, gpu::ApiName(info.api), info.device_name, info.vendor,
                   info.driver_version, info.api_version, info.clamped_limits, parts.tables_digest,
                   PartitionKeyText(partition, options), model_id});
}

// The bytes of each constant the partition's nodes read, as the delegate
// sees them, hashed in one parallel pass (writing and hashing the whole
// model took 50 ms of a 17 MB model's warm start; the fp16 weights whose
// folds replaced them are read by no node).
std::vector<std::string> ConstantHashes(const Graph& graph, const Partition& partition) {
  std::vector<Span> spans;
  std::vector<bool> read(graph.tensors.size(), false);
  for (int n : partition.nodes) {
    for (int t : graph.nodes[static_cast<size_t>(n)].inputs) {
      if (t >= 0 && static_cast<size_t>(t) < read.size()) read[static_cast<size_t>(t)] = true;
    }
  }
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    if (t.is_constant && read[i]) spans.push_back({t.data.data(), t.data.size()});
  }
  return ContentHashes(spans);
}

}  // namespace mgd
