// The GPU delegate: claims the nodes the shader generators can run, compiles
// each partition into programs, buffers and one recorded sequence of
// dispatches at prepare, and at invoke only uploads the inputs, replays the
// recording and downloads the outputs.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/gpu/faults.h"
#include "backends/gpu/gpu.h"
#include "delegate/compile_options.h"
#include "delegate/compiled_file.h"
#include "delegate/compiled_model.h"
#include "delegate/cost_model.h"
#include "delegate/observer.h"
#include "memory/strategy.h"
#include "shaders/precision.h"
#include "tuning/conv_settings.h"
#include "tuning/workgroups.h"
#include "interpreter/delegate.h"
#include "interpreter/interpreter.h"

namespace mgd {


struct GpuDelegateOptions {
  gpu::Api api = gpu::Api::kVulkan;
  std::string device;          // selector (index or name); empty: MGD_DEVICE or the best
  bool validation = false;     // Vulkan validation layer
  bool clamp_limits = false;   // GLES 3.1 minimum limits
  std::shared_ptr<gpu::FaultSwitches> faults;  // faults to show (backends/gpu/faults.h), for tests
  // The device's priority against other GPU work (gpu::Priority): a
  // background model at kLow leaves the GPU to an app's rendering or a
  // foreground model at kHigh, where the driver allows.
  gpu::Priority priority = gpu::Priority::kMedium;
  // How an invoke waits for the GPU (gpu::WaitMode): kAuto polls on a
  // hardware GPU, for the tens of microseconds a sleeping thread wakes late;
  // kPassive sleeps at once (a phone's battery before the last microseconds).
  gpu::WaitMode wait = gpu::WaitMode::kAuto;
  // GL: the app's EGLDisplay and a context to share objects with
  // (gpu::DeviceOptions::egl_display); 0: mgd's own display.
  uint64_t egl_display = 0, egl_share_context = 0;
  // Storage, arithmetic and sums. Precision::Fp16() is TFLite's "precision
  // loss allowed"; the delegate computes in fp32 where fp16 arithmetic does
  // not pay or would miss the fp16 bound (software GPUs, GLES), and keeps
  // sums in fp32 where the model's reduced_precision_support metadata asks
  // for it.
  Precision precision;
  // fp16 arithmetic (mediump) even where the delegate would compute in fp32
  // (software GPUs, GLES): to see what a GPU with true fp16 arithmetic
  // computes (mgd check and tune --fp16-arithmetic). For testing; slow on
  // software GPUs, which emulate half floats.
  bool keep_fp16_arithmetic = false;
  // The accuracy guard: where the model runs with fp16 arithmetic, the
  // layers (each named by an output tensor) that compute and sum in fp32,
  // besides those the workgroup tables' accuracy entries list for the
  // model (mgd tune --accuracy finds them).
  std::vector<std::string> fp32_layers;
  bool table_guard = true;     // false: the tables' accuracy entries are ignored
  bool fusion = true;          // graph transforms that merge nodes (--no-fusion: off)
  // An int8 model runs on the GPU as float ops with dequantized weights,
  // each op's result rounded onto its int8 grid (passes/int8_as_float.h,
  // TFLite's GPU delegate's way). False: its int8 ops stay on the CPU.
  bool int8_as_float = true;
  // With int8_as_float, whether the filters of its convolutions and fully
  // connected layers stay 8-bit in GPU memory, scaled in the shader
  // (shaders::NodeContext::int8_filters), or become floats as the float
  // model's (fp16 with fp16 storage). Unset: what the device's table
  // measured faster for the storage precision ("int8_filter_bits"), else
  // 8-bit with fp32 storage and floats with fp16, which ran faster on an
  // H100 (docs/perf.md).
  std::optional<bool> int8_filters;
  // With 8-bit filters, whether convolutions whose input lies on an int8
  // grid sum in integer dot products of four (shaders::NodeContext::int8_dot)
  // where the device has them (GpuInfo::int8_dot_products; Vulkan's
  // shaderIntegerDotProduct). Unset: what the device's table measured faster
  // ("int8_dot_products"), else not.
  std::optional<bool> int8_dot;
  // Dispatches that differ only in sizes and small constants share one
  // program and read those as parameters (--share-programs;
  // shaders/parameters.h): a third of the programs to compile, for starts
  // without a cache (TFLite's "fast single answer" trade). Off: every
  // number stays inlined, which runs 1-8% faster on the H200 (docs/perf.md).
  bool share_programs = false;
  // How activations share memory (--memory-strategy): the smallest plan by
  // default; `memory_problem` forces an arena (offsets) or shared buffers.
  memory::Strategy memory_strategy = memory::Strategy::kBest;
  std::optional<memory::Problem> memory_problem;
  // A workgroup table (--workgroups) ahead of the built-in one for the GPU;
  // Create fails when it is for another GPU.
  std::optional<tuning::Table> workgroups;
  // Whether the built-in table's workgroup entries apply; its settings
  // (blocks, split sums, int8 filters...) do either way where `workgroups`
  // leaves them unset. Its entries also step aside where `workgroups`
  // changes its convolution settings, and mgd tune --conv-settings turns
  // them off: entries tuned for one block's grids misfit another's.
  bool builtin_workgroups = true;
  // The compilation cache's folder (--cache-dir); empty: no cache.
  std::string cache_dir;
  // Names the model in cache tokens instead of a hash of its bytes, as
  // TFLite's model_token: saves hashing a large model at every start. The app
  // answers for one token naming one model (options, GPU, driver and mgd's
  // build are still part of the token).
  std::string model_token;
  // A model compiled offline (mgd compile) for another GPU, driver, precision
  // or options is refused (RefuseModel) unless this is set: then it is
  // compiled again from the model the file embeds.
  bool recompile = false;
  // Warnings (a cache folder that cannot be used, an entry that cannot be
  // stored: each said once) and debug messages (what the compilation cache
  // did and why) go here. Null: warnings go to stderr, debug messages are
  // dropped.
  Logger logger;
  // Tools and tests that look inside the prepares (observer.h); they must
  // outlive the delegate.
  std::vector<PrepareObserver*> observers;
};

class GpuDelegate;
class GpuKernel;

// mgd's `auto` (the command line's --backend auto, the C API's
// kMgdGpuApiAuto): the delegate on a hardware GPU before a software one
// (Mesa's lavapipe, llvmpipe); where both APIs have a hardware GPU, the one
// measured faster on the reference workload (capabilities.h) at
// options.precision, else Vulkan before GLES. Fails with each API's
// reason when no device can be used; a workgroup table for another GPU
// fails at once (the user's mistake on every API). `options.api` is ignored.
struct AutoGpu {
  std::unique_ptr<GpuDelegate> delegate;
  bool software = false;
  std::string why;  // how it was chosen
};
absl::StatusOr<AutoGpu> CreateOnBestGpu(GpuDelegateOptions options);

// Whether the GPU delegate claims a node (the same on every device: the
// shader generators decide), and why not.
NodeSupport GpuNodeSupport(const Graph& graph, int node_index);

// Threads: Prepare may be called from several threads at once (interpreters
// created together on one delegate); prepares take turns. The accessors
// below describe what was prepared so far and are for one thread, after the
// prepares (mgd's tools and tests).
class GpuDelegate : public Delegate {
 public:
  static absl::StatusOr<std::unique_ptr<GpuDelegate>> Create(const GpuDelegateOptions& options);
  ~GpuDelegate() override;

  std::string name() const override;
  NodeSupport IsNodeSupported(const Graph& graph, int node_index) override;
  absl::StatusOr<std::unique_ptr<DelegateKernel>> Prepare(const Graph& graph, const Partition& partition) override;
  // From CostRates, measured at the first call (delegate/cost_model.h).
  absl::StatusOr<PartitionCost> EstimateCost(const Graph& graph, const Partition& partition) override;
  bool RunsInt8AsFloat() const override { return options_.int8_as_float; }
  // The rates partitioning by cost uses, measured once (some tens of ms on
  // a GPU, seconds on a software one).
  absl::StatusOr<CostRates> cost_rates();

  gpu::Device& device() { return *device_; }
  const GpuDelegateOptions& options() const { return options_; }
  // Dispatches of the partition prepared last (I/O conversions included).
  size_t last_dispatch_count() const { return last_dispatch_count_; }
  // The memory plan of each partition prepared so far.
  struct MemoryUse {
    memory::Strategy strategy = memory::Strategy::kNaive;
    memory::Problem problem = memory::Problem::kSharedObjects;
    uint64_t bytes = 0;  // allocated for activations
    size_t objects = 0;  // device buffers they live in
    uint64_t constant_bytes = 0;  // weights and other constants
  };
  const std::vector<MemoryUse>& memory_uses() const { return memory_uses_; }
  // Each prepared partition's dispatches: workgroup and where it came from.
  struct DispatchInfo {
    std::string name;
    std::vector<int> nodes;
    tuning::Workgroup workgroup{};
    std::string source;  // "table", "bucket", "op_rule", "default" or "generator"
    tuning::DispatchKey key;
    std::array<uint32_t, 3> grid{};  // all 0: the workgroup is fixed
    // Its program among the partition's: dispatches alike but for their
    // parameters share one (GpuDelegateOptions::share_programs).
    size_t program = 0;
  };
  const std::vector<std::vector<DispatchInfo>>& dispatch_infos() const { return dispatch_infos_; }
  // The layers the last prepare computed in fp32 (the accuracy guard:
  // GpuDelegateOptions::fp32_layers and the tables' entries for the model);
  // empty where it had no fp16 arithmetic.
  const std::vector<std::string>& fp32_layers() const { return fp32_layers_; }
  // Whether an int8 model's filters stay 8-bit on this GPU
  // (GpuDelegateOptions::int8_filters, else the tables' int8_filter_bits).
  bool int8_filters() const;
  // Whether its convolutions sum in integer dot products
  // (GpuDelegateOptions::int8_dot, else the tables' int8_dot_products).
  bool int8_dot() const;
  // A squeeze-and-excitation gate's workgroup: conv_settings()'s, halved to
  // the device's limits.
  int GateInvocations() const;
  // The convolutions' blocks and split sums and the gates' workgroup: the
  // tables' settings, else shaders' defaults.
  tuning::ConvSettings conv_settings() const;
  // The tables consulted, in precedence (the user's, the built-in one).
  const std::vector<const tuning::Table*>& workgroup_tables() const { return tables_; }
  // What the compilation cache did at each prepare: "hit", "stored", or
  // "miss: <why>" (the debug log of a cache).
  const std::vector<std::string>& cache_events() const { return cache_events_; }
  // How long each step of each prepare took (token, cache read, compile,
  // buffers and weights, programs, record, cache store), in order.
  struct PrepareStep {
    size_t prepare = 0;  // which Prepare call (0, 1, ...)
    std::string name;
    double ms = 0;
  };
  const std::vector<PrepareStep>& prepare_steps() const { return prepare_steps_; }
  // What an offline compiled model from this delegate is for.
  CompiledTarget Target() const;

  // Replay the timestamped recordings from now on (with an observer that
  // needs them: Profiler).
  void SetTimedRuns(bool timed) { *timed_runs_ = timed; }

 private:
  GpuDelegate(GpuDelegateOptions options, std::unique_ptr<gpu::Device> device);
  // A prepare in three parts: find the partition compiled (the model's
  // compiled entries, the cache: find_compiled.h), else compile it
  // (compiler.h), then realize it on the device (realize.h).
  // `structure_digest` is set where the model's digest was computed (the
  // accuracy guard's lookup), for the cache key to reuse.
  CompileOptions CompileOptionsFor(const Graph& graph, std::string& structure_digest) const;
  std::vector<std::string> Fp32LayersFor(const Graph& graph, std::string& structure_digest) const;
  struct Found;  // what Find found, and the cache's key and token
  absl::StatusOr<Found> Find(const Graph& graph, const Partition& partition, const CompileOptions& compile,
                             const std::string& key, const std::string& structure_digest);
  absl::StatusOr<CompiledModel> CompileAfresh(const Graph& graph, const Partition& partition,
                                              const CompileOptions& compile) const;
  // Records a prepared partition for the accessors above and tells the
  // observers, once it stands.
  void Keep(const GpuKernel& kernel, const std::string& key, const CompiledModel& compiled);

  // Says `message` once per delegate and kind (a cache folder, a store).
  void Warn(const std::string& message) const;
  // The cache folder: made when missing; a warning when it cannot be used
  // (then there is no cache) or written (entries are read, not stored).
  void CheckCacheFolder();

  GpuDelegateOptions options_;
  std::unique_ptr<gpu::Device> device_;
  std::mutex cost_mutex_;  // guards cost_rates_ (measuring it prepares, so it is not prepare_mutex_)
  std::optional<CostRates> cost_rates_;
  std::mutex prepare_mutex_;  // one Prepare at a time: they share what follows
  bool cache_usable_ = false;
  bool store_warned_ = false;
  size_t last_dispatch_count_ = 0;
  std::vector<MemoryUse> memory_uses_;
  std::vector<std::vector<DispatchInfo>> dispatch_infos_;
  std::vector<const tuning::Table*> tables_;
  // The built-in table without its entries (GpuDelegateOptions::
  // builtin_workgroups off).
  std::optional<tuning::Table> builtin_settings_;
  std::string tables_digest_;  // SHA-256 of the tables, for cache tokens
  std::vector<std::string> fp32_layers_;
  std::vector<std::string> cache_events_;
  std::vector<PrepareStep> prepare_steps_;
  size_t prepares_ = 0;
  std::chrono::steady_clock::time_point step_start_;
  // Ends a prepare step: its time since the last one.
  void Step(const char* name);
  // Records a cache event (cache_events) and logs it at debug level.
  void Note(std::string event);
  PrepareObserver::Needs needs_;  // what the observers need, together
  std::shared_ptr<bool> timed_runs_ = std::make_shared<bool>(false);
};

}  // namespace mgd
