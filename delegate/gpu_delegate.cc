#include "delegate/gpu_delegate.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <cstdio>
#include <future>
#include <map>

#include "delegate/capabilities.h"
#include "delegate/cache.h"
#include "delegate/compiler.h"
#include "delegate/find_compiled.h"
#include "delegate/realize.h"
#include "base/files.h"
#include "delegate/serialize.h"
#include "delegate/workgroups.h"
#include "shaders/dialect.h"
#include "shaders/generator.h"

namespace mgd {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// The convolution settings where no table says: the shaders' defaults.
const tuning::ConvSettings kDefaultConvSettings{shaders::kConvBlock.x, shaders::kConvBlock.slices,
                                                shaders::kConvBlock.flat, shaders::kSplitConvOutputs,
                                                shaders::kGateInvocations, false};

// The settings that shape the convolutions' grids, which a table's
// workgroups were tuned for (neither a gate's workgroup nor a fused pair's
// split sums is one of its entries: those shaders size their own).
tuning::ConvSettings GridSettingsOf(const std::vector<const tuning::Table*>& tables) {
  tuning::ConvSettings s = tuning::ConvSettingsOf(tables, kDefaultConvSettings);
  s.gate_invocations = kDefaultConvSettings.gate_invocations;
  s.split_fused = kDefaultConvSettings.split_fused;
  return s;
}

// TFLite's "reduced_precision_support" metadata: a model that says it needs
// fp32 accumulation ("fp16" without "accfp16") keeps its sums in fp32.
bool WantsFp32Accumulation(const Graph& graph) {
  auto it = graph.metadata.find("reduced_precision_support");
  if (it == graph.metadata.end()) return false;
  const std::string value(it->second.begin(), it->second.end());
  return value.find("fp16") != std::string::npos && value.find("accfp16") == std::string::npos;
}

}  // namespace

struct GpuDelegate::Found {
  absl::StatusOr<CompiledModel> compiled = absl::NotFoundError("not compiled");
  bool from_file = false;                 // from the model's compiled entries
  std::optional<CompilationCache> cache;  // when the cache folder is usable
  std::string cache_key;
  std::shared_future<std::string> token;  // the weights' token (being hashed)
  std::string entry_token;                // the cache entry's, to be the weights' (checked once realized)
};

GpuDelegate::GpuDelegate(GpuDelegateOptions options, std::unique_ptr<gpu::Device> device)
    : options_(std::move(options)), device_(std::move(device)) {}
GpuDelegate::~GpuDelegate() = default;

absl::StatusOr<std::unique_ptr<GpuDelegate>> GpuDelegate::Create(const GpuDelegateOptions& options) {
  gpu::DeviceOptions device_options;
  device_options.selector = options.device;
  device_options.validation = options.validation;
  device_options.clamp_limits = options.clamp_limits;
  device_options.faults = options.faults;
  device_options.priority = options.priority;
  device_options.wait = options.wait;
  device_options.egl_display = options.egl_display;
  device_options.egl_share_context = options.egl_share_context;
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
  if (const tuning::Table* builtin = tuning::BuiltinTableFor(delegate->device_->info())) {
    // Its entries were tuned for the grids of its own convolution settings:
    // where the user's table changes those, they would misfit (2-D
    // workgroups over a flat grid one row high).
    const bool other_settings =
        options.workgroups && GridSettingsOf({&*options.workgroups, builtin}) != GridSettingsOf({builtin});
    if (!options.builtin_workgroups || other_settings) {
      delegate->builtin_settings_ = *builtin;
      delegate->builtin_settings_->entries.clear();
      builtin = &*delegate->builtin_settings_;
    }
    delegate->tables_.push_back(builtin);
  }
  // The tables as the cache token names them, once (serializing the H200's
  // table at every prepare took a few ms).
  std::string tables;
  for (const tuning::Table* t : delegate->tables_) tables += t->name + "\n" + tuning::SerializeTable(*t);
  delegate->tables_digest_ = Sha256Hex(tables.data(), tables.size());
  if (!options.cache_dir.empty()) delegate->CheckCacheFolder();
  for (const PrepareObserver* observer : options.observers) {
    const PrepareObserver::Needs n = observer->needs();
    delegate->needs_.pipeline_cache |= n.pipeline_cache;
    delegate->needs_.timed_recording |= n.timed_recording;
    delegate->needs_.every_tensor |= n.every_tensor;
  }
  return delegate;
}

absl::StatusOr<AutoGpu> CreateOnBestGpu(GpuDelegateOptions options) {
  std::vector<std::string> failures;
  for (bool software : {false, true}) {
    std::vector<gpu::Api> apis;
    for (gpu::Api api : {gpu::Api::kVulkan, gpu::Api::kGles}) {
      auto devices = gpu::ListDevices(api);
      if (devices.ok() && !devices->empty() && (*devices)[0].is_software() == software) apis.push_back(api);
    }
    // Two APIs on hardware GPUs (one GPU through Vulkan and GL, say): the
    // one faster on the reference workload at the precision asked for
    // (capabilities.h), measured, goes first. Software GPUs keep Vulkan's
    // lead unmeasured: they are the fallback, and measuring costs seconds.
    std::string why = software ? "no hardware GPU, a software one" : "a hardware GPU";
    if (!software && apis.size() > 1) {
      std::vector<GpuDelegateOptions> probes;
      for (gpu::Api api : apis) {
        probes.push_back(options);
        probes.back().api = api;
      }
      absl::StatusOr<std::vector<double>> ms = MeasureSideBySide(probes);
      std::vector<std::pair<double, gpu::Api>> measured;
      for (size_t i = 0; i < apis.size(); ++i) {
        measured.emplace_back(ms.ok() ? (*ms)[i] : std::numeric_limits<double>::infinity(), apis[i]);
      }
      std::stable_sort(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i < apis.size(); ++i) apis[i] = measured[i].second;
      std::vector<std::string> times;
      for (const auto& [ms, api] : measured) times.push_back(fmt::format("{} {:.3f} ms", gpu::ApiName(api), ms));
      why = fmt::format("a hardware GPU, the API measured faster on the reference workload ({})", fmt::join(times, ", "));
    }
    for (gpu::Api api : apis) {
      options.api = api;
      auto delegate = GpuDelegate::Create(options);
      if (delegate.ok()) return AutoGpu{std::move(*delegate), software, why};
      if (absl::IsInvalidArgument(delegate.status())) return delegate.status();
      const std::string reason = Message(delegate.status()), name = gpu::ApiName(api);
      failures.push_back(reason.rfind(name + ":", 0) == 0 ? reason : name + ": " + reason);
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

absl::StatusOr<CostRates> GpuDelegate::cost_rates() {
  std::lock_guard<std::mutex> lock(cost_mutex_);
  if (!cost_rates_) {
    // On a delegate of its own, of the same device and precision, so that
    // the measurement's graphs reach neither this one's cache nor its
    // observers and counts.
    GpuDelegateOptions own = options_;
    own.cache_dir.clear();
    own.observers.clear();
    absl::StatusOr<std::unique_ptr<GpuDelegate>> measurer = Create(own);
    if (!measurer.ok()) return measurer.status();
    absl::StatusOr<CostRates> measured = MeasureCostRates(**measurer);
    if (!measured.ok()) return measured.status();
    cost_rates_ = *measured;
  }
  return *cost_rates_;
}

absl::StatusOr<PartitionCost> GpuDelegate::EstimateCost(const Graph& graph, const Partition& partition) {
  absl::StatusOr<CostRates> rates = cost_rates();
  if (!rates.ok()) return rates.status();
  return EstimatePartitionCost(graph, partition, *rates);
}

NodeSupport GpuNodeSupport(const Graph& graph, int node_index) {
  const Node& node = graph.nodes[static_cast<size_t>(node_index)];
  shaders::NodeContext ctx{&graph, node_index, &node, {}, {}};
  ctx.support_only = true;
  auto shader = shaders::GenerateShader(ctx);
  if (!shader.ok()) return {false, Message(shader.status())};
  return {true, ""};
}

CompiledTarget GpuDelegate::Target() const { return TargetOf(device_->info(), options_.precision.half_storage()); }

void GpuDelegate::Note(std::string event) {
  if (options_.logger) options_.logger(LogLevel::kDebug, "compilation cache: " + event);
  cache_events_.push_back(std::move(event));
}

void GpuDelegate::Step(const char* name) {
  const auto now = std::chrono::steady_clock::now();
  prepare_steps_.push_back({prepares_, name, std::chrono::duration<double, std::milli>(now - step_start_).count()});
  step_start_ = now;
}

bool GpuDelegate::int8_filters() const {
  if (options_.int8_filters) return *options_.int8_filters;
  // Unsaid: 8-bit where they quarter the filter's bytes (fp32 storage),
  // floats where they would only halve them (fp16), as measured on an H100
  // and lavapipe (docs/perf.md).
  const bool fp16 = options_.precision.half_storage();
  return tuning::FirstSet(tables_, fp16 ? &tuning::Table::int8_filter_bits_fp16 : &tuning::Table::int8_filter_bits_fp32,
                          fp16 ? 32 : 8) == 8;
}

int GpuDelegate::GateInvocations() const {
  int64_t n = conv_settings().gate_invocations;
  // The gate's workgroup is one row of n invocations: bounded by both limits.
  const auto& limits = device_->info().limits;
  const int64_t most = std::min<int64_t>(limits.max_workgroup_invocations, limits.max_workgroup_size[0]);
  while (n > shaders::kGateInvocations && n > most) n /= 2;
  return static_cast<int>(n);
}

tuning::ConvSettings GpuDelegate::conv_settings() const { return tuning::ConvSettingsOf(tables_, kDefaultConvSettings); }

bool GpuDelegate::int8_dot() const {
  if (!int8_filters() || !device_->info().int8_dot_products) return false;
  if (options_.int8_dot) return *options_.int8_dot;
  const bool fp16 = options_.precision.half_storage();
  return tuning::FirstSet(tables_, fp16 ? &tuning::Table::int8_dot_products_fp16 : &tuning::Table::int8_dot_products_fp32,
                          false);
}

CompileOptions GpuDelegate::CompileOptionsFor(const Graph& graph, std::string& structure_digest) const {
  CompileOptions compile;
  compile.precision = options_.precision;
  if (WantsFp32Accumulation(graph)) compile.precision.accumulation = ArithmeticType::kFloat32;
  compile.fusion = options_.fusion && !needs_.every_tensor;
  compile.share_programs = options_.share_programs;
  // mediump arithmetic: not on software GPUs (emulated half floats, 100x
  // slower) nor on GLES, where NVIDIA's ES driver computes mediump in true
  // fp16 and hand_landmark's world landmarks then miss the fp16 bound
  // (relative RMS 4.2e-2 > 1e-2; docs/numerics.md).
  // keep_fp16_arithmetic shows there what a GPU with fp16 arithmetic computes.
  if ((device_->info().is_software() || options_.api != gpu::Api::kVulkan) && !options_.keep_fp16_arithmetic) {
    compile.precision.arithmetic = ArithmeticType::kFloat32;
  }
  if (compile.precision.half_arithmetic()) compile.fp32_layers = Fp32LayersFor(graph, structure_digest);
  compile.dont_unroll = device_->info().is_software();
  const tuning::ConvSettings conv = conv_settings();
  compile.split_conv_outputs = conv.split_conv_outputs;
  compile.split_fused_sums = conv.split_fused;
  compile.conv_block = {static_cast<int>(conv.block_x), static_cast<int>(conv.block_slices), conv.flat};
  compile.gate_invocations = GateInvocations();
  compile.int8_filters = int8_filters();
  compile.int8_dot = int8_dot();
  compile.memory.strategy = needs_.every_tensor ? memory::Strategy::kNaive : options_.memory_strategy;
  compile.memory.problem = needs_.every_tensor ? std::optional(memory::Problem::kSharedObjects) : options_.memory_problem;
  compile.memory.alignment = device_->info().limits.storage_buffer_offset_alignment;
  compile.memory.max_object_bytes = device_->info().limits.max_storage_buffer_bytes;
  return compile;
}

std::vector<std::string> GpuDelegate::Fp32LayersFor(const Graph& graph, std::string& structure_digest) const {
  std::vector<std::string> layers = options_.fp32_layers;
  const bool listed_anywhere =
      std::any_of(tables_.begin(), tables_.end(), [](const tuning::Table* t) { return !t->accuracy.empty(); });
  if (options_.table_guard && listed_anywhere) {
    if (auto digest = ModelStructureDigest(graph); digest.ok()) {
      structure_digest = *digest;  // the cache key's too
      const std::vector<std::string> listed = tuning::Fp32Layers(tables_, *digest);
      layers.insert(layers.end(), listed.begin(), listed.end());
    }
  }
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  return layers;
}

absl::StatusOr<GpuDelegate::Found> GpuDelegate::Find(const Graph& graph, const Partition& partition,
                                                     const CompileOptions& compile, const std::string& key, const std::string& structure_digest) {
  Found found;
  // An offline compiled model: its entry, or a refusal (or a recompile).
  if (const auto precompiled = graph.metadata.find(kCompiledMetadataName); precompiled != graph.metadata.end()) {
    found.compiled = LoadPrecompiled(precompiled->second, partition, key, Target());
    if (!found.compiled.ok() && !absl::IsNotFound(found.compiled.status()) && !options_.recompile) {
      return RefuseModel(fmt::format("{}: compile it again on this device (mgd compile), or let mgd recompile it from "
                                     "the model it embeds (--recompile)",
                                     Message(found.compiled.status())));
    }
    if (found.compiled.ok()) {
      Note("compiled model: loaded");
    } else {
      Note(fmt::format("compiled model: {} ({})", absl::IsNotFound(found.compiled.status()) ? "compiling" : "recompiling",
                       Message(found.compiled.status())));
    }
    Step("compiled model entry");
  }
  found.from_file = found.compiled.ok();
  if (!cache_usable_) return found;
  found.cache.emplace(options_.cache_dir);
  auto made = CacheKeyOf(graph, partition, compile, {options_.model_token, &device_->info(), tables_digest_, structure_digest});
  if (!made.ok()) return made.status();
  found.cache_key = *made;
  // The constants are hashed (none with an app's model token) while the
  // entry is read.
  found.token = std::async(std::launch::async, [&graph, &partition, key = found.cache_key, named = !options_.model_token.empty()] {
                  return CacheToken(key, named ? std::vector<std::string>{} : ConstantHashes(graph, partition));
                }).share();
  Step("cache key");
  if (found.from_file) return found;
  std::string why;
  if (auto entry = found.cache->Load(found.cache_key, found.token, why)) {
    Step("cache read");
    found.entry_token = std::move(entry->token);
    found.compiled = ParseCompiledModel(std::make_shared<const Bytes>(std::move(entry->bytes)));
    if (found.compiled.ok()) found.compiled = FitsPartition(std::move(*found.compiled), partition);
    if (!found.compiled.ok()) why = std::string(found.compiled.status().message());
  }
  Note(found.compiled.ok() ? "hit" : "miss: " + why);
  Step(found.compiled.ok() ? "cache parse" : "cache read");
  return found;
}

absl::StatusOr<CompiledModel> GpuDelegate::CompileAfresh(const Graph& graph, const Partition& partition,
                                                         const CompileOptions& compile) const {
  auto made = CompilePartition(graph, partition, compile);
  if (!made.ok()) return made;
  ChooseWorkgroups(*made, tables_, device_->info());
  // After the workgroups: they are part of each program.
  if (compile.share_programs) SharePrograms(*made);
  return made;
}

absl::StatusOr<std::unique_ptr<DelegateKernel>> GpuDelegate::Prepare(const Graph& graph, const Partition& partition) {
  const std::lock_guard<std::mutex> lock(prepare_mutex_);
  step_start_ = std::chrono::steady_clock::now();
  struct Count {  // numbers this prepare's steps, however it returns
    size_t& n;
    ~Count() { ++n; }
  } count{prepares_};
  std::string structure_digest;  // computed once, where the accuracy guard needs it
  const CompileOptions compile = CompileOptionsFor(graph, structure_digest);
  fp32_layers_ = compile.fp32_layers;
  const std::string key_text = PartitionKeyText(partition, compile);
  const std::string key = Sha256Hex(key_text.data(), key_text.size());
  // 1. Find it compiled: in the model's compiled entries or the cache.
  auto found_or = Find(graph, partition, compile, key, structure_digest);
  if (!found_or.ok()) return found_or.status();
  Found& found = *found_or;
  absl::StatusOr<CompiledModel>& compiled = found.compiled;
  // 2. Else compile it.
  bool reused = compiled.ok();  // from the compiled model or the cache
  if (!reused) {
    compiled = CompileAfresh(graph, partition, compile);
    if (!compiled.ok()) return compiled.status();
    Step("compile");
  }
  // 3. Realize it on the device.
  RealizeOptions realize{options_.api, needs_.timed_recording, options_.logger, [this](const char* name) { Step(name); }};
  realize.program_threads = static_cast<size_t>(tuning::FirstSet(tables_, &tuning::Table::program_threads, SIZE_MAX >> 1));
  auto prepared = Realize(*device_, *compiled, realize);
  // The entry was read and realized while the weights were still being
  // hashed (it passed its integrity check first): it stands only if its
  // token is theirs. Another set of weights under one structure is another
  // entry.
  bool other_weights = false;
  if (!found.entry_token.empty() && reused) {
    other_weights = found.token.get() != found.entry_token;
    Step("cache token");
  }
  if (!prepared.ok() && found.from_file && !options_.recompile) {
    return RefuseModel(fmt::format("the compiled model does not run on this device ({}); let mgd recompile it (--recompile)",
                                   Message(prepared.status())));
  }
  if ((!prepared.ok() || other_weights) && reused) {  // not these weights', or an intact entry that fails: compile afresh
    cache_events_.pop_back();
    Note(other_weights ? "miss: no entry for these weights"
                       : "miss: the entry did not realize (" + std::string(prepared.status().message()) + ")");
    prepared = absl::CancelledError("replaced");  // its GPU objects go now
    reused = false;
    compiled = CompileAfresh(graph, partition, compile);
    if (!compiled.ok()) return compiled.status();
    prepared = Realize(*device_, *compiled, realize);
  }
  if (!prepared.ok()) return prepared.status();
  auto layout = std::make_shared<CompiledModel>(*compiled);  // what more executions are made from
  layout->constants.clear();
  layout->pipeline_cache.clear();
  auto kernel = std::make_unique<GpuKernel>(*device_, std::move(*prepared), std::move(layout), timed_runs_);
  // Stored once it ran: Realize filled in each program's SPIR-V or binary,
  // and the driver's pipeline cache now holds the pipelines (read only when
  // it is kept: serializing it costs milliseconds).
  const bool store = found.cache && !found.from_file && !reused;
  if (store || needs_.pipeline_cache) compiled->pipeline_cache = device_->PipelineCacheData();
  if (store) {
    const absl::Status stored = found.cache->Store(found.cache_key, found.token.get(), SerializeCompiledModel(*compiled));
    Note(stored.ok() ? "stored" : "not stored: " + std::string(stored.message()));
    if (!stored.ok() && !store_warned_) {
      Warn(fmt::format("compilation cache: an entry could not be stored: {}", Message(stored)));
      store_warned_ = true;
    }
    Step("cache store");
  }
  Keep(*kernel, key, *compiled);
  return std::unique_ptr<DelegateKernel>(std::move(kernel));
}

void GpuDelegate::Keep(const GpuKernel& kernel, const std::string& key, const CompiledModel& compiled) {
  // Only for partitions that run, so that index k of each list is the k-th
  // prepared partition.
  const PreparedPartition& prepared = kernel.prepared();
  std::vector<DispatchInfo> infos;
  for (size_t i = 0; i < compiled.dispatches.size(); ++i) {
    const CompiledDispatch& d = compiled.dispatches[i];
    infos.push_back({d.code.name, d.nodes, d.code.workgroup, d.workgroup_source, d.key, d.grid, prepared.shared->program_of.at(i)});
  }
  const PreparedView view{dispatch_infos_.size(), key, compiled, prepared, *device_, kernel.alive()};
  dispatch_infos_.push_back(std::move(infos));
  last_dispatch_count_ = compiled.dispatches.size();
  MemoryUse use{compiled.memory_strategy, compiled.memory_problem, 0, compiled.memory_objects.size()};
  for (uint64_t bytes : compiled.memory_objects) use.bytes += bytes;
  for (const ConstantBytes& constant : compiled.constants) use.constant_bytes += constant.size();
  memory_uses_.push_back(use);
  for (PrepareObserver* observer : options_.observers) observer->Prepared(view);
}

}  // namespace mgd
