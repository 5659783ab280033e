#include "delegate/realize.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "shaders/dialect.h"

namespace mgd {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// Where each constant goes: the constants share a few device buffers, each
// at an aligned offset, since a buffer of its own each cost the driver ~20 us
// apiece (pose_landmark has a hundred). A pack holds at most `max_bytes` (the
// most one binding may cover; 0: no limit), so a constant past it has its own.
struct ConstantPacks {
  struct Place {
    int pack = -1;  // -1: not a packed constant
    uint64_t offset = 0, bytes = 0;
  };
  std::vector<uint64_t> bytes;  // per pack
  std::vector<Place> place;     // per CompiledBuffer
};

ConstantPacks PackConstants(const CompiledModel& model, uint64_t alignment, uint64_t max_bytes) {
  ConstantPacks packs;
  alignment = std::max<uint64_t>(alignment, 16);
  for (const CompiledBuffer& b : model.buffers) {
    if (b.object >= 0 || b.role != BufferRole::kConstant) {
      packs.place.push_back({});
      continue;
    }
    const uint64_t size = (std::max<uint64_t>(b.bytes, 4) + 3) / 4 * 4;
    if (packs.bytes.empty() || (max_bytes > 0 && packs.bytes.back() + size > max_bytes)) packs.bytes.push_back(0);
    packs.place.push_back({static_cast<int>(packs.bytes.size()) - 1, packs.bytes.back(), size});
    packs.bytes.back() += (size + alignment - 1) / alignment * alignment;
  }
  return packs;
}

// The constants' packs in `shared`, and their uploads (in one go, later).
absl::Status MakeConstants(gpu::Device& device, const CompiledModel& model, SharedPart& shared,
                           std::vector<gpu::Device::UploadRequest>& uploads) {
  const gpu::GpuLimits& limits = device.info().limits;
  const ConstantPacks packs = PackConstants(model, limits.storage_buffer_offset_alignment, limits.max_storage_buffer_bytes);
  for (uint64_t bytes : packs.bytes) {
    auto buffer = device.CreateBuffer(static_cast<size_t>(bytes), gpu::Device::Use::kConstant);
    if (!buffer.ok()) return buffer.status();
    shared.constant_packs.push_back(std::move(*buffer));
  }
  shared.constant_places.assign(model.buffers.size(), {});
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    const ConstantPacks::Place& p = packs.place[i];
    if (p.pack < 0) continue;
    gpu::Buffer* buffer = shared.constant_packs[static_cast<size_t>(p.pack)].get();
    const ConstantBytes& bytes = model.constants[static_cast<size_t>(model.buffers[i].constant)];
    uploads.push_back({buffer, bytes.data(), bytes.size(), static_cast<size_t>(p.offset)});
    shared.constant_places[i] = {buffer, gpu::Access::kRead, static_cast<size_t>(p.offset), static_cast<size_t>(p.bytes)};
  }
  return absl::OkStatus();
}

// An execution's own buffers (the memory plan's objects, the user-side
// inputs and outputs) and where every CompiledBuffer lies.
absl::Status MakeExecutionBuffers(gpu::Device& device, const CompiledModel& model, const SharedPart& shared,
                                  Execution& execution) {
  auto make = [&](size_t bytes, gpu::Device::Use use) -> absl::StatusOr<gpu::Buffer*> {
    auto buffer = device.CreateBuffer(bytes, use);
    if (!buffer.ok()) return buffer.status();
    execution.buffers.push_back(std::move(*buffer));
    return execution.buffers.back().get();
  };
  std::vector<gpu::Buffer*> objects;  // the memory plan's buffers
  for (uint64_t bytes : model.memory_objects) {
    auto buffer = make(static_cast<size_t>(bytes), gpu::Device::Use::kDevice);
    if (!buffer.ok()) return buffer.status();
    objects.push_back(*buffer);
  }
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    const CompiledBuffer& b = model.buffers[i];
    if (b.object >= 0) {
      execution.places.push_back({objects[static_cast<size_t>(b.object)], gpu::Access::kRead, b.offset, std::max<size_t>(b.bytes, 4)});
    } else if (shared.constant_places[i].buffer != nullptr) {
      execution.places.push_back(shared.constant_places[i]);
    } else {
      const gpu::Device::Use use = b.role == BufferRole::kUserInput    ? gpu::Device::Use::kUpload
                                   : b.role == BufferRole::kUserOutput ? gpu::Device::Use::kDownload
                                                                       : gpu::Device::Use::kDevice;
      // Whole words: shaders read an 8-bit input four bytes at a time.
      auto buffer = make(std::max<size_t>((b.bytes + 3) / 4 * 4, 4), use);
      if (!buffer.ok()) return buffer.status();
      execution.places.push_back({*buffer, gpu::Access::kRead, 0, 0});
    }
  }
  for (int i : model.inputs) execution.inputs.push_back(execution.places[static_cast<size_t>(i)].buffer);
  for (int i : model.outputs) execution.outputs.push_back(execution.places[static_cast<size_t>(i)].buffer);
  execution.own_places = execution.places;
  return absl::OkStatus();
}

}  // namespace

absl::Status RecordDispatches(gpu::Device& device, const CompiledModel& model, const SharedPart& shared, Execution& execution,
                              bool profile, const std::vector<BoundBuffer>& bound) {
  execution.places = execution.own_places;
  execution.dispatches.clear();
  std::vector<bool> skip(model.dispatches.size(), false);
  for (const BoundBuffer& b : bound) {
    execution.places[static_cast<size_t>(b.replaces)] = b.place;
    if (b.skip_dispatch >= 0) skip[static_cast<size_t>(b.skip_dispatch)] = true;
  }
  for (size_t i = 0; i < model.dispatches.size(); ++i) {
    if (skip[i]) continue;
    const CompiledDispatch& cd = model.dispatches[i];
    gpu::Dispatch d;
    d.program = shared.programs[shared.program_of[i]].get();
    for (const CompiledBinding& b : cd.bindings) {
      gpu::Binding binding = execution.places[static_cast<size_t>(b.buffer)];
      binding.access = b.write ? gpu::Access::kWrite : gpu::Access::kRead;
      d.bindings.push_back(binding);
    }
    d.push_constants = shaders::ParamBlock(cd.code);
    d.groups = cd.groups;
    execution.dispatches.push_back(std::move(d));
  }
  // An app's buffer is the same one in every execution: runs in flight
  // take turns on it.
  const bool shared_buffers = !bound.empty();
  auto recording = device.Record(execution.dispatches, gpu::RecordOptions{false, shared_buffers});
  if (!recording.ok()) return recording.status();
  execution.recording = std::move(*recording);
  execution.timed_recording.reset();
  if (profile) {
    auto timed = device.Record(execution.dispatches, gpu::RecordOptions{true, shared_buffers});
    if (!timed.ok()) return timed.status();
    execution.timed_recording = std::move(*timed);
  }
  return absl::OkStatus();
}

namespace {

// Logs at debug level how the programs were built: how many from the
// cache's binaries or pipeline cache, and where the time went.
void LogProgramBuilds(const RealizeOptions& options, const std::vector<absl::StatusOr<std::unique_ptr<gpu::Program>>>& built) {
  if (!options.logger) return;
  size_t from_binary = 0, driver_known = 0, cache_hits = 0;
  double driver_ms = 0, sum_ms = 0, max_ms = 0;
  std::vector<std::pair<std::string, double>> phases;  // summed by name, in first-seen order
  std::vector<std::pair<double, std::string>> slowest;  // (ms, program): where a cold start's time went
  for (size_t k = 0; k < built.size(); ++k) {
    if (!built[k].ok()) continue;
    const gpu::Program& p = **built[k];
    from_binary += p.from_binary() ? 1 : 0;
    const gpu::Program::BuildFeedback f = p.build_feedback();
    double ms = 0;  // the program's own, over its phases
    for (const gpu::Program::BuildFeedback::Phase& phase : f.phases) {
      auto it = std::find_if(phases.begin(), phases.end(), [&](const auto& p) { return p.first == phase.name; });
      if (it == phases.end()) it = phases.insert(phases.end(), {phase.name, 0.0});
      it->second += phase.ms;
      ms += phase.ms;
    }
    sum_ms += ms;
    max_ms = std::max(max_ms, ms);
    slowest.emplace_back(ms, p.name());
    if (!f.driver_known) continue;
    ++driver_known;
    cache_hits += f.cache_hit ? 1 : 0;
    driver_ms += f.driver_ms;
  }
  std::string line = fmt::format("programs: {} built, {:.1f} ms in all (longest {:.1f} ms)", built.size(), sum_ms, max_ms);
  if (options.api == gpu::Api::kGles) line += fmt::format(", {} from program binaries", from_binary);
  if (!phases.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, ms] : phases) parts.push_back(fmt::format("{} {:.1f} ms", name, ms));
    line += fmt::format(" ({})", fmt::join(parts, ", "));
  }
  if (driver_known > 0) {
    line += fmt::format(", {} of {} pipelines from the pipeline cache, {:.1f} ms in the driver", cache_hits, driver_known,
                        driver_ms);
  }
  constexpr size_t kSlowest = 3;
  std::partial_sort(slowest.begin(), slowest.begin() + static_cast<ptrdiff_t>(std::min(kSlowest, slowest.size())), slowest.end(),
                    std::greater<>());
  slowest.resize(std::min(kSlowest, slowest.size()));
  std::vector<std::string> named;
  for (const auto& [ms, name] : slowest) named.push_back(fmt::format("{} {:.1f} ms", name, ms));
  if (!named.empty()) line += fmt::format("; slowest: {}", fmt::join(named, ", "));
  options.logger(LogLevel::kDebug, line);
}

}  // namespace

shaders::Dialect DialectOf(gpu::Api api) { return api == gpu::Api::kVulkan ? shaders::Dialect::kVulkan : shaders::Dialect::kGles; }

absl::StatusOr<PreparedPartition> Realize(gpu::Device& device, CompiledModel& model, const RealizeOptions& options) {
  auto step = [&](const char* name) {
    if (options.step) options.step(name);
  };
  auto shared = std::make_shared<SharedPart>();
  // Programs are shared between dispatches with the same source (repeated
  // blocks of a model), which saves most of the driver's compile time.
  // Foreign or stale pipeline cache data is refused by the device and only
  // costs the driver's compile time.
  if (!model.pipeline_cache.empty()) {
    (void)device.MergePipelineCacheData(model.pipeline_cache);
    step("pipeline cache");
  }
  std::vector<std::string> sources;
  std::map<std::string, size_t> program_of;  // source -> index into `built`
  std::vector<size_t> first_dispatch;          // per program
  for (size_t i = 0; i < model.dispatches.size(); ++i) {
    sources.push_back(shaders::Emit(DialectOf(options.api), model.dispatches[i].code));
    if (program_of.emplace(sources.back(), first_dispatch.size()).second) first_dispatch.push_back(i);
  }
  for (const std::string& source : sources) shared->program_of.push_back(program_of.at(source));
  step("shader sources");
  // The programs are built on other threads while this one creates the
  // buffers and uploads the weights: on Vulkan the two overlap (a driver
  // builds pipelines at about 0.15 ms each, one after another, even from
  // its cache); GL runs both on its one context thread in turn.
  std::vector<absl::StatusOr<std::unique_ptr<gpu::Program>>> built;
  // When every program comes with what lets the driver skip compiling (a
  // warm start), the driver's own work is mostly one at a time: more than a
  // few threads only contend (H200, face_detection: 8.7 ms on 4 threads,
  // 11-13 ms on 16).
  const bool nothing_to_compile = std::all_of(first_dispatch.begin(), first_dispatch.end(),
                                              [&](size_t i) { return !model.dispatches[i].binary.empty(); });
  std::jthread builder([&] {  // joined however this returns
    std::vector<gpu::ProgramSource> programs;
    for (size_t i : first_dispatch) {
      const CompiledDispatch& cd = model.dispatches[i];
      programs.push_back({cd.code.name, sources[i], static_cast<uint32_t>(cd.bindings.size()), shaders::ParamsBytes(cd.code),
                          0, cd.spirv, cd.binary});
    }
    built = device.CreatePrograms(programs, nothing_to_compile ? std::min<size_t>(4, options.program_threads)
                                                               : options.program_threads);
  });
  // The weights' staging space is allocated on a thread of its own while
  // this one creates the buffers (8 MB of host-visible memory took 2-2.6 ms
  // on the H200).
  size_t staged_bytes = 0;
  for (const CompiledBuffer& b : model.buffers) {
    if (b.object < 0 && b.role == BufferRole::kConstant) staged_bytes += (b.bytes + 15) / 16 * 16;
  }
  std::jthread stager([&] { device.ReserveUploadBytes(staged_bytes); });
  std::vector<gpu::Device::UploadRequest> uploads;  // the weights, in one go
  PreparedPartition prepared;
  if (absl::Status s = MakeConstants(device, model, *shared, uploads); !s.ok()) return s;
  if (absl::Status s = MakeExecutionBuffers(device, model, *shared, prepared.execution); !s.ok()) return s;
  step("buffers");
  if (absl::Status s = device.UploadAll(uploads); !s.ok()) return s;
  step("weights");
  builder.join();
  LogProgramBuilds(options, built);
  for (size_t k = 0; k < built.size(); ++k) {
    CompiledDispatch& cd = model.dispatches[first_dispatch[k]];
    if (!built[k].ok()) return absl::InternalError(fmt::format("{}: {}", cd.code.name, Message(built[k].status())));
    // Kept with the first dispatch of each program, for the cache.
    if (cd.spirv.empty()) cd.spirv = (*built[k])->spirv();
    if (cd.binary.empty()) cd.binary = (*built[k])->binary();
    shared->programs.push_back(std::move(*built[k]));
  }
  step("programs");
  if (absl::Status s = RecordDispatches(device, model, *shared, prepared.execution, options.profile, {}); !s.ok()) return s;
  step("record");
  prepared.shared = std::move(shared);
  return prepared;
}

absl::StatusOr<Execution> NewExecution(gpu::Device& device, const CompiledModel& model, const SharedPart& shared,
                                       bool profile, const std::vector<BoundBuffer>& bound) {
  Execution execution;
  if (absl::Status s = MakeExecutionBuffers(device, model, shared, execution); !s.ok()) return s;
  if (absl::Status s = RecordDispatches(device, model, shared, execution, profile, bound); !s.ok()) return s;
  return execution;
}

GpuKernel::GpuKernel(gpu::Device& device, PreparedPartition prepared, std::shared_ptr<const CompiledModel> model,
                     std::shared_ptr<bool> timed_runs)
    : device_(device),
      prepared_(std::move(prepared)),
      model_(std::move(model)),
      slots_(1),
      bound_(model_->inputs.size() + model_->outputs.size()),
      timed_runs_(std::move(timed_runs)) {}

GpuKernel::~GpuKernel() {
  for (Slot& slot : slots_) {
    if (slot.ticket) (void)device_.Wait(*slot.ticket);
  }
}

namespace {

// A timestamped recording's last run on the GPU, from the first dispatch's
// start to the last one's end; unknown without timestamps.
std::optional<double> SpanMs(const gpu::Recording& recording) {
  const std::vector<double> start = recording.dispatch_start_ns(), ns = recording.dispatch_ns();
  if (ns.empty() || start.size() != ns.size()) return std::nullopt;
  return (start.back() + ns.back()) * 1e-6;
}

}  // namespace

Execution& GpuKernel::ExecutionOf(size_t slot) { return slot == 0 ? prepared_.execution : more_executions_[slot - 1]; }

absl::Status GpuKernel::SetTiming(bool timing) {
  timing_ = timing;
  if (!timing || !device_.info().timestamps) return absl::OkStatus();
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    Execution& e = ExecutionOf(slot);
    if (e.timed_recording) continue;
    auto timed = device_.Record(e.dispatches, gpu::RecordOptions{true, !BoundList().empty()});
    if (!timed.ok()) return timed.status();
    e.timed_recording = std::move(*timed);
  }
  return absl::OkStatus();
}

std::optional<double> GpuKernel::DeviceMs(size_t slot) const {
  return slot < slots_.size() ? slots_[slot].device_ms : std::nullopt;
}

absl::Status GpuKernel::SetSlots(size_t slots) {
  if (slots == 0) return absl::InvalidArgumentError("SetSlots: at least one slot");
  const bool timed = timing_ && device_.info().timestamps;
  while (more_executions_.size() + 1 < slots) {
    absl::StatusOr<Execution> e = NewExecution(device_, *model_, *prepared_.shared, timed, BoundList());
    if (!e.ok()) return e.status();
    more_executions_.push_back(std::move(*e));
  }
  slots_.resize(std::max(slots_.size(), slots));
  return absl::OkStatus();
}

absl::Status GpuKernel::WaitFor(size_t slot, const Deadline& deadline) {
  Slot& s = slots_[slot];
  if (!s.ticket) return absl::OkStatus();
  const std::chrono::nanoseconds timeout =
      deadline ? std::chrono::duration_cast<std::chrono::nanoseconds>(*deadline - std::chrono::steady_clock::now())
               : gpu::kRunTimeout;
  absl::Status waited = device_.Wait(*s.ticket, std::max(timeout, std::chrono::nanoseconds(0)));
  if (absl::IsDeadlineExceeded(waited) && deadline) {
    return absl::DeadlineExceededError(
        fmt::format("deadline exceeded: the GPU's work was still running; it is abandoned ({})", std::string(waited.message())));
  }
  s.ticket.reset();  // completed, or failed for good
  if (!waited.ok()) return waited;
  s.device_ms = SpanMs(*s.submitted);
  return absl::OkStatus();
}

std::vector<gpu::Device::UploadRequest> GpuKernel::Uploads(const Execution& e, const std::vector<const void*>& inputs) const {
  std::vector<gpu::Device::UploadRequest> uploads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Bound(false, i)) continue;
    uploads.push_back({e.inputs[i], inputs[i], model_->buffers[static_cast<size_t>(model_->inputs[i])].bytes, 0});
  }
  return uploads;
}

std::vector<gpu::Device::DownloadRequest> GpuKernel::Downloads(const Execution& e, const std::vector<void*>& outputs) const {
  std::vector<gpu::Device::DownloadRequest> downloads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (Bound(true, i)) continue;
    downloads.push_back({e.outputs[i], outputs[i], model_->buffers[static_cast<size_t>(model_->outputs[i])].bytes, 0});
  }
  return downloads;
}

gpu::Recording& GpuKernel::ReplayOf(const Execution& e) const {
  return (timing_ || *timed_runs_) && e.timed_recording ? *e.timed_recording : *e.recording;
}

absl::Status GpuKernel::Start(size_t slot, const std::vector<const void*>& inputs, const Deadline& deadline,
                              const GpuFences& fences) {
  if (slot >= slots_.size()) return absl::InvalidArgumentError(fmt::format("slot {} of {}", slot, slots_.size()));
  // Work abandoned at a deadline still uses the slot's buffers.
  if (absl::Status s = WaitFor(slot, deadline); !s.ok()) return s;
  Execution& e = ExecutionOf(slot);
  // All in one call: GL's each is a round trip to its context thread.
  if (absl::Status s = device_.UploadAll(Uploads(e, inputs)); !s.ok()) return s;
  gpu::Recording& replay = ReplayOf(e);
  absl::StatusOr<uint64_t> ticket = device_.Submit(replay, fences);
  if (!ticket.ok()) return ticket.status();
  slots_[slot].ticket = *ticket;
  slots_[slot].submitted = &replay;
  return absl::OkStatus();
}

absl::Status GpuKernel::Finish(size_t slot, const std::vector<void*>& outputs, const Deadline& deadline) {
  if (slot >= slots_.size()) return absl::InvalidArgumentError(fmt::format("slot {} of {}", slot, slots_.size()));
  if (!slots_[slot].ticket) return absl::FailedPreconditionError(fmt::format("slot {} was not started", slot));
  if (absl::Status s = WaitFor(slot, deadline); !s.ok()) return s;
  return device_.DownloadAll(Downloads(ExecutionOf(slot), outputs));
}

absl::Status GpuKernel::Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs,
                               const Deadline& deadline) {
  std::vector<const void*> ins;
  for (const TensorRef* t : inputs) ins.push_back(t->data);
  std::vector<void*> outs;
  for (TensorRef* t : outputs) outs.push_back(t->data);
  if (deadline || slots_[0].ticket) {
    if (absl::Status s = Start(0, ins, deadline, {}); !s.ok()) return s;
    return Finish(0, outs, deadline);
  }
  // Without a deadline, the uploads, the run and the downloads in one call:
  // on GL one task on the context thread instead of a submission and turns
  // of waiting.
  Execution& e = prepared_.execution;
  gpu::Recording& replay = ReplayOf(e);
  if (absl::Status s = device_.RunWithTransfers(Uploads(e, ins), replay, Downloads(e, outs)); !s.ok()) return s;
  slots_[0].device_ms = SpanMs(replay);  // unknown unless timestamped
  return absl::OkStatus();
}

}  // namespace mgd
