#include "delegate/gpu_delegate.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <future>
#include <map>
#include <thread>

#include "delegate/build_id.h"
#include "delegate/cache.h"
#include "delegate/compiler.h"
#include "base/files.h"
#include "base/parallel.h"
#include "delegate/serialize.h"
#include "model/writer.h"
#include "delegate/workgroups.h"
#include "shaders/dialect.h"
#include "shaders/generator.h"

namespace mgd {
namespace {

shaders::Dialect DialectOf(gpu::Api api) { return api == gpu::Api::kVulkan ? shaders::Dialect::kVulkan : shaders::Dialect::kGles; }

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// TFLite's "reduced_precision_support" metadata: a model that says it needs
// fp32 accumulation ("fp16" without "accfp16") keeps its sums in fp32.
bool WantsFp32Accumulation(const Graph& graph) {
  auto it = graph.metadata.find("reduced_precision_support");
  if (it == graph.metadata.end()) return false;
  const std::string value(it->second.begin(), it->second.end());
  return value.find("fp16") != std::string::npos && value.find("accfp16") == std::string::npos;
}

// One compiled partition: its buffers, programs and the recording.
class GpuKernel : public DelegateKernel {
 public:
  GpuKernel(gpu::Device& device, std::shared_ptr<bool> timed_runs) : device_(device), timed_runs_(std::move(timed_runs)) {}

  absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs) override {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (absl::Status s = device_.Upload(*input_buffers[i], inputs[i]->data, inputs[i]->bytes); !s.ok()) return s;
    }
    gpu::Recording& replay = (*timed_runs_ && timed_recording) ? *timed_recording : *recording;
    if (absl::Status s = device_.Run(replay); !s.ok()) return s;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (absl::Status s = device_.Download(*output_buffers[i], outputs[i]->data, outputs[i]->bytes); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  gpu::Device& device_;
  std::shared_ptr<bool> timed_runs_;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);  // lets the delegate see the kernel is gone
  std::vector<std::unique_ptr<gpu::Buffer>> buffers;     // everything the recording binds
  std::vector<gpu::Buffer*> input_buffers, output_buffers;  // BHWC user-side buffers
  std::vector<std::unique_ptr<gpu::Program>> programs;
  std::unique_ptr<gpu::Recording> recording;
  std::unique_ptr<gpu::Recording> timed_recording;  // options.profile
};

}  // namespace

GpuDelegate::GpuDelegate(GpuDelegateOptions options, std::unique_ptr<gpu::Device> device)
    : options_(std::move(options)), device_(std::move(device)) {}
GpuDelegate::~GpuDelegate() = default;

absl::StatusOr<std::unique_ptr<GpuDelegate>> GpuDelegate::Create(const GpuDelegateOptions& options) {
  gpu::DeviceOptions device_options;
  device_options.selector = options.device;
  device_options.validation = options.validation;
  device_options.clamp_limits = options.clamp_limits;
  auto device = gpu::CreateDevice(options.api, device_options);
  if (!device.ok()) return device.status();
  if (options.workgroups && !tuning::Matches(options.workgroups->gpu, (*device)->info())) {
    const tuning::GpuMatch& m = options.workgroups->gpu;
    std::vector<std::string> rules;
    for (const auto& [what, value] : {std::pair{"api", m.api}, std::pair{"vendor", m.vendor}, std::pair{"device", m.device},
                                      std::pair{"driver >=", m.driver_min}}) {
      if (!value.empty()) rules.push_back(fmt::format("{} '{}'", what, value));
    }
    const gpu::GpuInfo& info = (*device)->info();
    return absl::InvalidArgumentError(fmt::format("{}: the table is for {}; this device is {} '{}' ({}, driver {})",
                                                  options.workgroups->name, fmt::join(rules, ", "), gpu::ApiName(info.api),
                                                  info.device_name, info.vendor, info.driver_version));
  }
  auto delegate = std::unique_ptr<GpuDelegate>(new GpuDelegate(options, std::move(*device)));
  if (delegate->options_.workgroups) delegate->tables_.push_back(&*delegate->options_.workgroups);
  if (const tuning::Table* builtin = tuning::BuiltinTableFor(delegate->device_->info())) delegate->tables_.push_back(builtin);
  // The tables as the cache token names them, once (serializing the H200's
  // table at every prepare took a few ms).
  std::string tables;
  for (const tuning::Table* t : delegate->tables_) tables += t->name + "\n" + tuning::SerializeTable(*t);
  delegate->tables_digest_ = Sha256Hex(tables.data(), tables.size());
  if (!options.cache_dir.empty()) delegate->CheckCacheFolder();
  return delegate;
}

absl::StatusOr<AutoGpu> CreateOnBestGpu(GpuDelegateOptions options) {
  std::vector<std::string> failures;
  for (bool software : {false, true}) {
    for (gpu::Api api : {gpu::Api::kVulkan, gpu::Api::kGles}) {
      auto devices = gpu::ListDevices(api);
      if (!devices.ok() || devices->empty() || (*devices)[0].is_software() != software) continue;
      options.api = api;
      auto delegate = GpuDelegate::Create(options);
      if (delegate.ok()) return AutoGpu{std::move(*delegate), software};
      if (absl::IsInvalidArgument(delegate.status())) return delegate.status();
      const std::string why = Message(delegate.status()), name = gpu::ApiName(api);
      failures.push_back(why.rfind(name + ":", 0) == 0 ? why : name + ": " + why);
    }
  }
  return absl::UnavailableError(failures.empty() ? "no Vulkan or GLES device" : fmt::format("{}", fmt::join(failures, "; ")));
}

void GpuDelegate::Warn(const std::string& message) const {
  if (options_.logger) {
    options_.logger(LogLevel::kWarning, message);
  } else {
    std::fprintf(stderr, "mgd: warning: %s\n", message.c_str());
  }
}

void GpuDelegate::CheckCacheFolder() {
  if (absl::Status s = MakeFolder(options_.cache_dir); !s.ok()) {
    Warn(fmt::format("compilation cache: {}; running without a cache", Message(s)));
    return;
  }
  cache_usable_ = true;
  if (access(options_.cache_dir.c_str(), W_OK | X_OK) != 0) {
    Warn(fmt::format("compilation cache: {}: cannot write there ({}); entries are read but not stored",
                     options_.cache_dir, ErrnoText(errno)));
    store_warned_ = true;
  }
}

std::string GpuDelegate::name() const { return fmt::format("gpu-{}", gpu::ApiName(options_.api)); }

NodeSupport GpuDelegate::IsNodeSupported(const Graph& graph, int node_index) { return GpuNodeSupport(graph, node_index); }

NodeSupport GpuNodeSupport(const Graph& graph, int node_index) {
  const Node& node = graph.nodes[static_cast<size_t>(node_index)];
  for (int t : node.inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
    if (!tensor.is_constant && tensor.type != DataType::kFloat32) return {false, "non-float activations stay on the CPU"};
  }
  shaders::NodeContext ctx{&graph, node_index, &node, {}, {}};
  ctx.support_only = true;
  auto shader = shaders::GenerateShader(ctx);
  if (!shader.ok()) return {false, Message(shader.status())};
  return {true, ""};
}

// What shapes a partition's compiled result besides the model, the device
// and mgd: the partition and the compile options. It keys the entries of an
// offline compiled model, whose file holds the model and names the device.
std::string PartitionKeyText(const Partition& partition, const CompileOptions& c) {
  return fmt::format("{}nodes {}\ninputs {}\noutputs {}\n", CompileOptionsText(c), fmt::join(partition.nodes, ","),
                     fmt::join(partition.inputs, ","), fmt::join(partition.outputs, ","));
}

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

// The device buffers a partition needs (its memory objects, its packs of
// constants, its user-side inputs and outputs), kept in `owned`, and where
// each CompiledBuffer lies in them; the constants' uploads go to `uploads`.
absl::StatusOr<std::vector<gpu::Binding>> MakeBuffers(gpu::Device& device, const CompiledModel& model,
                                                      std::vector<std::unique_ptr<gpu::Buffer>>& owned,
                                                      std::vector<gpu::Device::UploadRequest>& uploads) {
  auto make = [&](size_t bytes, gpu::Device::Use use) -> absl::StatusOr<gpu::Buffer*> {
    auto buffer = device.CreateBuffer(bytes, use);
    if (!buffer.ok()) return buffer.status();
    owned.push_back(std::move(*buffer));
    return owned.back().get();
  };
  std::vector<gpu::Buffer*> objects;  // the memory plan's buffers
  for (uint64_t bytes : model.memory_objects) {
    auto buffer = make(static_cast<size_t>(bytes), gpu::Device::Use::kDevice);
    if (!buffer.ok()) return buffer.status();
    objects.push_back(*buffer);
  }
  const gpu::GpuLimits& limits = device.info().limits;
  const ConstantPacks packs = PackConstants(model, limits.storage_buffer_offset_alignment, limits.max_storage_buffer_bytes);
  std::vector<gpu::Buffer*> pack_buffers;
  for (uint64_t bytes : packs.bytes) {
    auto buffer = make(static_cast<size_t>(bytes), gpu::Device::Use::kConstant);
    if (!buffer.ok()) return buffer.status();
    pack_buffers.push_back(*buffer);
  }
  std::vector<gpu::Binding> places;
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    const CompiledBuffer& b = model.buffers[i];
    if (b.object >= 0) {
      places.push_back({objects[static_cast<size_t>(b.object)], gpu::Access::kRead, b.offset, std::max<size_t>(b.bytes, 4)});
    } else if (const ConstantPacks::Place& p = packs.place[i]; p.pack >= 0) {
      gpu::Buffer* buffer = pack_buffers[static_cast<size_t>(p.pack)];
      const ConstantBytes& bytes = model.constants[static_cast<size_t>(b.constant)];
      uploads.push_back({buffer, bytes.data(), bytes.size(), static_cast<size_t>(p.offset)});
      places.push_back({buffer, gpu::Access::kRead, static_cast<size_t>(p.offset), static_cast<size_t>(p.bytes)});
    } else {
      const gpu::Device::Use use = b.role == BufferRole::kUserInput    ? gpu::Device::Use::kUpload
                                   : b.role == BufferRole::kUserOutput ? gpu::Device::Use::kDownload
                                                                       : gpu::Device::Use::kDevice;
      auto buffer = make(std::max<size_t>(b.bytes, 4), use);
      if (!buffer.ok()) return buffer.status();
      places.push_back({*buffer, gpu::Access::kRead, 0, 0});
    }
  }
  return places;
}

// A cached or precompiled model must have the partition's inputs and outputs
// (the kernel indexes its buffers by them).
absl::StatusOr<CompiledModel> FitsPartition(CompiledModel model, const Partition& partition) {
  if (model.inputs.size() != partition.inputs.size() || model.outputs.size() != partition.outputs.size()) {
    return absl::InvalidArgumentError(fmt::format("the entry has {} inputs and {} outputs; the partition {} and {}",
                                                  model.inputs.size(), model.outputs.size(), partition.inputs.size(),
                                                  partition.outputs.size()));
  }
  return model;
}

// Everything the compiled partition depends on but the constants' bytes:
// the model's structure (or the app's model token), the partition, the
// compile options, the workgroup tables, the backend, GPU, driver and mgd's
// build.
absl::StatusOr<std::string> GpuDelegate::CacheKey(const Graph& graph, const Partition& partition,
                                                  const CompileOptions& c) const {
  std::string model_id = "token " + options_.model_token;
  if (options_.model_token.empty()) {
    auto structure = WriteModelStructure(graph, StructureOptions{{kCompiledMetadataName}});
    if (!structure.ok()) return structure.status();
    model_id = "structure " + Sha256Hex(structure->data(), structure->size());
  }
  const gpu::GpuInfo& info = device_->info();
  return mgd::CacheKey({BuildId(), kCompiledModelVersion, gpu::ApiName(info.api), info.device_name, info.vendor,
                        info.driver_version, info.api_version, info.clamped_limits, tables_digest_,
                        PartitionKeyText(partition, c), model_id});
}

// The bytes of each constant the partition's nodes read, as the delegate
// sees them, hashed in one parallel pass (writing and hashing the whole
// model took 50 ms of a 17 MB model's warm start; the fp16 weights whose
// folds replaced them are read by no node). None with an app's model token.
std::vector<std::string> GpuDelegate::ConstantHashes(const Graph& graph, const Partition& partition) const {
  if (!options_.model_token.empty()) return {};
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

CompiledTarget GpuDelegate::Target() const {
  const gpu::GpuInfo& info = device_->info();
  return {gpu::ApiName(info.api), info.vendor,       info.device_name, info.driver_version,
          info.api_version,       info.clamped_limits, options_.precision.half_storage(), BuildId()};
}

absl::StatusOr<CompiledModel> GpuDelegate::LoadPrecompiled(const std::string& metadata, const Partition& partition,
                                                           const std::string& key) const {
  auto file = CompiledFile::Parse(reinterpret_cast<const uint8_t*>(metadata.data()), metadata.size());
  if (!file.ok()) return file.status();
  const CompiledTarget& made = file->target(), here = Target();
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

void GpuDelegate::Note(std::string event) {
  if (options_.logger) options_.logger(LogLevel::kDebug, "compilation cache: " + event);
  cache_events_.push_back(std::move(event));
}

void GpuDelegate::LogProgramBuilds(const std::vector<absl::StatusOr<std::unique_ptr<gpu::Program>>>& built) const {
  if (!options_.logger) return;
  size_t from_binary = 0, driver_known = 0, cache_hits = 0;
  double driver_ms = 0, sum_ms = 0, max_ms = 0;
  std::vector<std::pair<std::string, double>> phases;  // summed by name, in first-seen order
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
    if (!f.driver_known) continue;
    ++driver_known;
    cache_hits += f.cache_hit ? 1 : 0;
    driver_ms += f.driver_ms;
  }
  std::string line = fmt::format("programs: {} built, {:.1f} ms in all (longest {:.1f} ms)", built.size(), sum_ms, max_ms);
  if (options_.api == gpu::Api::kGles) line += fmt::format(", {} from program binaries", from_binary);
  if (!phases.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, ms] : phases) parts.push_back(fmt::format("{} {:.1f} ms", name, ms));
    line += fmt::format(" ({})", fmt::join(parts, ", "));
  }
  if (driver_known > 0) {
    line += fmt::format(", {} of {} pipelines from the pipeline cache, {:.1f} ms in the driver", cache_hits, driver_known,
                        driver_ms);
  }
  options_.logger(LogLevel::kDebug, line);
}

void GpuDelegate::Step(const char* name) {
  const auto now = std::chrono::steady_clock::now();
  prepare_steps_.push_back({prepares_, name, std::chrono::duration<double, std::milli>(now - step_start_).count()});
  step_start_ = now;
}

absl::StatusOr<std::unique_ptr<DelegateKernel>> GpuDelegate::Prepare(const Graph& graph, const Partition& partition) {
  const std::lock_guard<std::mutex> lock(prepare_mutex_);
  step_start_ = std::chrono::steady_clock::now();
  struct Count {  // numbers this prepare's steps, however it returns
    size_t& n;
    ~Count() { ++n; }
  } count{prepares_};
  CompileOptions compile;
  compile.precision = options_.precision;
  if (WantsFp32Accumulation(graph)) compile.precision.accumulation = ArithmeticType::kFloat32;
  compile.fusion = options_.fusion && !options_.keep_tensors;
  compile.fault_node = options_.fault_node;
  compile.share_programs = options_.share_programs;
  // mediump arithmetic: not on software GPUs (emulated half floats, 100x
  // slower) nor on GLES, where NVIDIA's ES driver computes mediump in true
  // fp16 and hand_landmark's world landmarks then miss the fp16 bound
  // (relative RMS 4.2e-2 > 1e-2; docs/numerics.md).
  if (device_->info().is_software() || options_.api != gpu::Api::kVulkan) {
    compile.precision.arithmetic = ArithmeticType::kFloat32;
  }
  compile.dont_unroll = device_->info().is_software();
  compile.memory.strategy = options_.keep_tensors ? memory::Strategy::kNaive : options_.memory_strategy;
  compile.memory.problem = options_.keep_tensors ? std::optional(memory::Problem::kSharedObjects) : options_.memory_problem;
  compile.memory.alignment = device_->info().limits.storage_buffer_offset_alignment;
  compile.memory.max_object_bytes = device_->info().limits.max_storage_buffer_bytes;
  // An offline compiled model: its entry, or a refusal (or a recompile).
  absl::StatusOr<CompiledModel> compiled = absl::NotFoundError("not compiled");
  const auto precompiled = graph.metadata.find(kCompiledMetadataName);
  const std::string key_text = PartitionKeyText(partition, compile);
  const std::string key = Sha256Hex(key_text.data(), key_text.size());
  if (precompiled != graph.metadata.end()) {
    compiled = LoadPrecompiled(precompiled->second, partition, key);
    if (!compiled.ok() && !absl::IsNotFound(compiled.status()) && !options_.recompile) {
      return RefuseModel(fmt::format("{}: compile it again on this device (mgd compile), or let mgd recompile it from "
                                     "the model it embeds (--recompile)",
                                     Message(compiled.status())));
    }
    if (compiled.ok()) {
      Note("compiled model: loaded");
    } else {
      Note(fmt::format("compiled model: {} ({})", absl::IsNotFound(compiled.status()) ? "compiling" : "recompiling",
                       Message(compiled.status())));
    }
    Step("compiled model entry");
  }
  std::optional<CompilationCache> cache;
  std::string cache_key;
  std::shared_future<std::string> token;  // hashing the constants, while the entry is read
  if (cache_usable_) {
    cache.emplace(options_.cache_dir);
    auto made = CacheKey(graph, partition, compile);
    if (!made.ok()) return made.status();
    cache_key = *made;
    token = std::async(std::launch::async, [&] { return mgd::CacheToken(cache_key, ConstantHashes(graph, partition)); }).share();
    Step("cache key");
  }
  const bool from_file = compiled.ok();
  std::string entry_token;  // the cache entry's, to be the weights' (checked once realized)
  if (cache && !from_file) {
    std::string why;
    if (auto entry = cache->Load(cache_key, token, why)) {
      Step("cache read");
      entry_token = std::move(entry->token);
      compiled = ParseCompiledModel(std::make_shared<const Bytes>(std::move(entry->bytes)));
      if (compiled.ok()) compiled = FitsPartition(std::move(*compiled), partition);
      if (!compiled.ok()) why = std::string(compiled.status().message());
    }
    Note(compiled.ok() ? "hit" : "miss: " + why);
    Step(compiled.ok() ? "cache parse" : "cache read");
  }
  auto compile_afresh = [&]() -> absl::StatusOr<CompiledModel> {
    auto made = CompilePartition(graph, partition, compile);
    if (!made.ok()) return made;
    ChooseWorkgroups(*made, tables_, device_->info());
    // After the workgroups: they are part of each program.
    if (compile.share_programs) SharePrograms(*made);
    return made;
  };
  bool reused = compiled.ok();  // from the compiled model or the cache
  if (!reused) {
    compiled = compile_afresh();
    if (!compiled.ok()) return compiled.status();
    Step("compile");
  }
  // What Realize records per partition (for tuning, kept tensors, profiles),
  // dropped again with a kernel that is not kept.
  const size_t tuning_records = tuning_records_.size(), kept = kept_.size(), profiled = kernels_.size();
  auto kernel = Realize(*compiled);
  // The entry was read and realized while the weights were still being
  // hashed (it passed its integrity check first): it stands only if its
  // token is theirs. Another set of weights under one structure is another
  // entry.
  bool other_weights = false;
  if (!entry_token.empty() && reused) {
    other_weights = token.get() != entry_token;
    Step("cache token");
  }
  if (!kernel.ok() && from_file && !options_.recompile) {
    return RefuseModel(fmt::format("the compiled model does not run on this device ({}); let mgd recompile it (--recompile)",
                                   Message(kernel.status())));
  }
  if ((!kernel.ok() || other_weights) && reused) {  // not these weights', or an intact entry that fails: compile afresh
    cache_events_.pop_back();
    Note(other_weights ? "miss: no entry for these weights"
                       : "miss: the entry did not realize (" + std::string(kernel.status().message()) + ")");
    kernel = absl::CancelledError("replaced");  // its GPU objects go now
    tuning_records_.erase(tuning_records_.begin() + static_cast<std::ptrdiff_t>(tuning_records), tuning_records_.end());
    kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(kept), kept_.end());
    kernels_.erase(kernels_.begin() + static_cast<std::ptrdiff_t>(profiled), kernels_.end());
    reused = false;
    compiled = compile_afresh();
    if (!compiled.ok()) return compiled.status();
    kernel = Realize(*compiled);
  }
  if (!kernel.ok()) return kernel.status();
  // Stored once it ran: Realize filled in each program's SPIR-V or binary,
  // and the driver's pipeline cache now holds the pipelines (read only when
  // it is kept: serializing it costs milliseconds).
  const bool store = cache && !from_file && !reused;
  if (store || options_.collect_compiled || options_.keep_compiled) compiled->pipeline_cache = device_->PipelineCacheData();
  if (store) {
    const absl::Status stored = cache->Store(cache_key, token.get(), SerializeCompiledModel(*compiled));
    Note(stored.ok() ? "stored" : "not stored: " + std::string(stored.message()));
    if (!stored.ok() && !store_warned_) {
      Warn(fmt::format("compilation cache: an entry could not be stored: {}", Message(stored)));
      store_warned_ = true;
    }
    Step("cache store");
  }
  if (options_.collect_compiled) {
    std::vector<uint8_t> bytes = SerializeCompiledModel(*compiled);
    const std::string sha = ContentHashHex(bytes.data(), bytes.size());
    compiled_entries_.push_back({key, sha, std::move(bytes)});
  }
  // Recorded only for partitions that run, so that index k of each list is
  // the k-th prepared partition.
  std::vector<DispatchInfo> infos;
  for (size_t i = 0; i < compiled->dispatches.size(); ++i) {
    const CompiledDispatch& d = compiled->dispatches[i];
    infos.push_back({d.code.name, d.nodes, d.code.workgroup, d.workgroup_source, d.key, d.grid, realized_programs_.at(i)});
  }
  dispatch_infos_.push_back(std::move(infos));
  last_dispatch_count_ = compiled->dispatches.size();
  MemoryUse use{compiled->memory_strategy, compiled->memory_problem, 0, compiled->memory_objects.size()};
  for (uint64_t bytes : compiled->memory_objects) use.bytes += bytes;
  memory_uses_.push_back(use);
  if (options_.keep_compiled) compiled_models_.push_back(std::move(*compiled));
  return kernel;
}

std::vector<std::vector<DispatchProfile>> GpuDelegate::Profiles() const {
  std::vector<std::vector<DispatchProfile>> all;
  for (const KernelProfile& k : kernels_) {
    if (k.alive.expired()) continue;
    std::vector<DispatchProfile> dispatches = k.dispatches;
    const std::vector<double> ns = k.timed->dispatch_ns(), start = k.timed->dispatch_start_ns();
    for (size_t i = 0; i < dispatches.size() && i < ns.size(); ++i) dispatches[i].gpu_ns = ns[i];
    for (size_t i = 0; i < dispatches.size() && i < start.size(); ++i) dispatches[i].start_ns = start[i];
    all.push_back(std::move(dispatches));
  }
  return all;
}

absl::StatusOr<std::unique_ptr<DelegateKernel>> GpuDelegate::Realize(CompiledModel& model) {
  auto kernel = std::make_unique<GpuKernel>(*device_, timed_runs_);
  // Programs are shared between dispatches with the same source (repeated
  // blocks of a model), which saves most of the driver's compile time.
  // Foreign or stale pipeline cache data is refused by the device and only
  // costs the driver's compile time.
  if (!model.pipeline_cache.empty()) {
    (void)device_->MergePipelineCacheData(model.pipeline_cache);
    Step("pipeline cache");
  }
  std::vector<std::string> sources;
  std::map<std::string, size_t> program_of;  // source -> index into `built`
  std::vector<size_t> first_dispatch;          // per program
  for (size_t i = 0; i < model.dispatches.size(); ++i) {
    sources.push_back(shaders::Emit(DialectOf(options_.api), model.dispatches[i].code));
    if (program_of.emplace(sources.back(), first_dispatch.size()).second) first_dispatch.push_back(i);
  }
  realized_programs_.clear();
  for (const std::string& source : sources) realized_programs_.push_back(program_of.at(source));
  Step("shader sources");
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
    built = device_->CreatePrograms(programs, nothing_to_compile ? 4 : SIZE_MAX);
  });
  // The weights' staging space is allocated on a thread of its own while
  // this one creates the buffers (8 MB of host-visible memory took 2-2.6 ms
  // on the H200).
  size_t staged_bytes = 0;
  for (const CompiledBuffer& b : model.buffers) {
    if (b.object < 0 && b.role == BufferRole::kConstant) staged_bytes += (b.bytes + 15) / 16 * 16;
  }
  std::jthread stager([&] { device_->ReserveUploadBytes(staged_bytes); });
  std::vector<gpu::Device::UploadRequest> uploads;  // the weights, in one go
  auto places = MakeBuffers(*device_, model, kernel->buffers, uploads);
  if (!places.ok()) return places.status();
  Step("buffers");
  if (absl::Status s = device_->UploadAll(uploads); !s.ok()) return s;
  for (int i : model.inputs) kernel->input_buffers.push_back((*places)[static_cast<size_t>(i)].buffer);
  for (int i : model.outputs) kernel->output_buffers.push_back((*places)[static_cast<size_t>(i)].buffer);
  Step("weights");
  builder.join();
  LogProgramBuilds(built);
  for (size_t k = 0; k < built.size(); ++k) {
    CompiledDispatch& cd = model.dispatches[first_dispatch[k]];
    if (!built[k].ok()) return absl::InternalError(fmt::format("{}: {}", cd.code.name, Message(built[k].status())));
    // Kept with the first dispatch of each program, for the cache.
    if (cd.spirv.empty()) cd.spirv = (*built[k])->spirv();
    if (cd.binary.empty()) cd.binary = (*built[k])->binary();
    kernel->programs.push_back(std::move(*built[k]));
  }
  Step("programs");
  std::vector<gpu::Dispatch> dispatches;
  for (size_t i = 0; i < model.dispatches.size(); ++i) {
    const CompiledDispatch& cd = model.dispatches[i];
    gpu::Dispatch d;
    d.program = kernel->programs[realized_programs_[i]].get();
    for (const CompiledBinding& b : cd.bindings) {
      gpu::Binding binding = (*places)[static_cast<size_t>(b.buffer)];
      binding.access = b.write ? gpu::Access::kWrite : gpu::Access::kRead;
      d.bindings.push_back(binding);
    }
    d.push_constants = cd.params;
    d.groups = cd.groups;
    dispatches.push_back(std::move(d));
  }
  auto recording = device_->Record(dispatches);
  if (!recording.ok()) return recording.status();
  Step("record");
  if (options_.tuning) tuning_records_.push_back({model.dispatches, dispatches, kernel->alive});
  if (options_.keep_tensors) {
    KeptTensors kept{{}, kernel->alive};
    for (size_t i = 0; i < model.buffers.size(); ++i) {
      const CompiledBuffer& b = model.buffers[i];
      if (b.role == BufferRole::kActivation && b.tensor >= 0) kept.tensors.push_back({b.tensor, (*places)[i], b.shape});
    }
    kept_.push_back(std::move(kept));
  }
  kernel->recording = std::move(*recording);
  if (options_.profile) {
    auto timed = device_->Record(dispatches, gpu::RecordOptions{true});
    if (!timed.ok()) return timed.status();
    kernel->timed_recording = std::move(*timed);
    KernelProfile profile;
    for (const CompiledDispatch& cd : model.dispatches) profile.dispatches.push_back({cd.code.name, cd.nodes, 0});
    profile.timed = kernel->timed_recording.get();
    profile.alive = kernel->alive;
    kernels_.push_back(std::move(profile));
  }
  return std::unique_ptr<DelegateKernel>(std::move(kernel));
}

absl::StatusOr<double> GpuDelegate::TimeWorkgroup(size_t partition, size_t dispatch, const tuning::Workgroup& workgroup,
                                                  int repeats) {
  if (partition >= tuning_records_.size() || tuning_records_[partition].alive.expired()) {
    return absl::FailedPreconditionError(fmt::format("partition {} is not prepared for tuning", partition));
  }
  const TuningRecord& record = tuning_records_[partition];
  if (dispatch >= record.compiled.size() || record.compiled[dispatch].grid == std::array<uint32_t, 3>{0, 0, 0}) {
    return absl::InvalidArgumentError(fmt::format("dispatch {} of partition {} has a fixed workgroup", dispatch, partition));
  }
  CompiledDispatch cd = record.compiled[dispatch];
  cd.code.workgroup = workgroup;
  auto program = device_->CreateProgram({cd.code.name, shaders::Emit(DialectOf(options_.api), cd.code),
                                         static_cast<uint32_t>(cd.bindings.size()), shaders::ParamsBytes(cd.code), 0, {}});
  if (!program.ok()) return program.status();
  gpu::Dispatch d = record.realized[dispatch];
  d.program = program->get();
  d.groups = GroupsFor(cd.grid, workgroup);
  auto recording = device_->Record({d}, gpu::RecordOptions{true});
  if (!recording.ok()) return recording.status();
  std::vector<double> us;
  for (int i = 0; i < repeats + 2; ++i) {
    if (absl::Status s = device_->Run(**recording); !s.ok()) return s;
    const std::vector<double> ns = (*recording)->dispatch_ns();
    if (ns.empty()) return absl::FailedPreconditionError("the device has no timestamps: nothing to tune with");
    if (i >= 2) us.push_back(ns[0] / 1000);
  }
  std::nth_element(us.begin(), us.begin() + static_cast<long>(us.size() / 2), us.end());
  return us[us.size() / 2];
}

absl::StatusOr<std::map<int, std::vector<float>>> GpuDelegate::ReadActivations() {
  std::map<int, std::vector<float>> tensors;
  for (const KeptTensors& kept : kept_) {
    if (kept.alive.expired()) continue;
    for (const KeptTensor& t : kept.tensors) {
      const size_t texels = static_cast<size_t>(t.shape.batch) * t.shape.slices() * t.shape.height * t.shape.width;
      std::vector<float> bhwc(static_cast<size_t>(t.shape.elements()));
      if (options_.precision.half_storage()) {
        std::vector<uint16_t> phwc4(texels * 4);
        if (absl::Status s = device_->Download(*t.place.buffer, phwc4.data(), phwc4.size() * 2, t.place.offset); !s.ok()) return s;
        layout::Phwc4HalfToBhwc(phwc4.data(), t.shape, bhwc.data());
      } else {
        std::vector<float> phwc4(texels * 4);
        if (absl::Status s = device_->Download(*t.place.buffer, phwc4.data(), phwc4.size() * 4, t.place.offset); !s.ok()) return s;
        layout::Phwc4ToBhwc(phwc4.data(), t.shape, bhwc.data());
      }
      tensors[t.tensor] = std::move(bhwc);
    }
  }
  return tensors;
}

}  // namespace mgd
