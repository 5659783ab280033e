// mgd compile: prepare a model on this GPU and write it back with what
// prepare computed (delegate/compiled_file.h), so that it later loads
// without compiling anything.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "delegate/compiled_file.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "model/writer.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {

absl::Status Compile(const CompileFileOptions& options) {
  const RunOptions& run = options.run;
  MGD_ASSIGN_OR_RETURN(Graph model, ReadModelFile(run.model));
  model.metadata.erase(kCompiledMetadataName);  // an already compiled model: compile its embedded model again
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(run));
  CompiledEntryCollector collected;  // outlives the delegate
  gpu_options.observers.push_back(&collected);
  gpu_options.cache_dir.clear();  // the file is the cache
  if (run.backend == "cpu") return UsageError("--backend cpu: mgd compile compiles for a GPU (vulkan or gl)");
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(run.backend, gpu_options));
  if (backend.delegate == nullptr) return absl::FailedPreconditionError(fmt::format("no GPU to compile for ({})", backend.why));

  const auto start = std::chrono::steady_clock::now();
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(backend.delegate.get());
  auto interpreter = Interpreter::Create(model, std::move(interpreter_options));
  if (!interpreter.ok()) return WithModelPath(run.model, interpreter.status());
  const double prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::vector<CompiledFileEntry>& entries = collected.entries();
  size_t delegated = 0;
  for (const NodePlacement& p : (*interpreter)->placements()) delegated += p.where == NodePlacement::Where::kDelegate;
  if (entries.empty()) {
    return absl::FailedPreconditionError(fmt::format("{}: no node runs on the GPU; there is nothing to compile", run.model));
  }

  const CompiledTarget target = backend.delegate->Target();
  const std::vector<uint8_t> payload = SerializeCompiledFile(target, entries);
  model.metadata[kCompiledMetadataName] = std::string(payload.begin(), payload.end());
  MGD_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, WriteModel(model));
  if (absl::Status s = WriteFileAtomically(options.out, bytes.data(), bytes.size()); !s.ok()) {
    return absl::Status(s.code(), "--out " + std::string(s.message()));
  }

  if (run.json) {
    nlohmann::json j = {{"model", run.model},         {"out", options.out},
                        {"backend", backend.backend}, {"device", target.device_name},
                        {"driver", target.driver_version}, {"precision", target.fp16 ? "fp16" : "fp32"},
                        {"partitions", entries.size()}, {"nodes", (*interpreter)->placements().size()},
                        {"delegated_nodes", delegated}, {"bytes", bytes.size()},
                        {"compiled_bytes", payload.size()}, {"prepare_ms", prepare_ms}};
    std::printf("%s\n", JsonText(j, 2).c_str());
  } else {
    std::printf("%s\n", fmt::format("compiled {} for '{}' ({} {}, driver {}, {}): {} partition(s), {} of {} nodes on the GPU, "
                                    "prepared in {:.0f} ms\nwrote {} ({:.1f} MiB, {:.1f} MiB of it compiled code and GPU-layout weights)",
                                    run.model, target.device_name, target.vendor, target.api, target.driver_version,
                                    target.fp16 ? "fp16" : "fp32", entries.size(), delegated,
                                    (*interpreter)->placements().size(), prepare_ms, options.out, bytes.size() / 1048576.0,
                                    payload.size() / 1048576.0)
                            .c_str());
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
