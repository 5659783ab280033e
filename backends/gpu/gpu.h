// The GPU interface mgd's delegate runs on: devices, buffers, compute programs
// from GLSL, recorded sequences of dispatches replayed per run, timestamps.
// It knows nothing of ops or models. Implementations: backends/vulkan and
// backends/gl.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/gpu_interop.h"

namespace mgd::gpu {

// How long a run may take before the GPU is taken to be hung. Generous: a
// software GPU compiles pipelines lazily at their first dispatch, which on a
// loaded 2-core machine can take minutes for a whole model.
inline constexpr std::chrono::nanoseconds kRunTimeout = std::chrono::seconds(600);

enum class Api { kVulkan, kGles };
const char* ApiName(Api api);  // "vulkan", "gl"

enum class DeviceType { kDiscrete, kIntegrated, kVirtual, kCpu, kOther };
const char* DeviceTypeName(DeviceType type);

struct GpuLimits {
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint32_t max_shared_memory_bytes = 0;
  uint32_t max_storage_buffers_per_shader = 0;
  uint64_t max_storage_buffer_bytes = 0;  // the most one binding may cover
  uint32_t storage_buffer_offset_alignment = 0;  // a binding's offset is a multiple of this
  uint32_t max_push_constant_bytes = 0;  // GL: the uniform block mgd uses instead
};

// What a phone GPU can be counted on for: the GLES 3.1 compute minimums
// (docs/design.md: 128 invocations, 16 KiB shared memory, 8 storage blocks).
GpuLimits Gles31MinimumLimits();
// Each limit lowered to the GLES 3.1 minimum (the clamped-limits mode).
GpuLimits ClampToGles31(const GpuLimits& limits);

// What the tuning tables key on, and what `mgd info` prints.
struct GpuInfo {
  Api api = Api::kVulkan;
  std::string vendor;       // "NVIDIA", "Mesa", "ARM", ...
  uint32_t vendor_id = 0;   // PCI vendor id (0 when unknown)
  std::string device_name;  // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  uint32_t device_id = 0;
  DeviceType type = DeviceType::kOther;
  std::string driver_name;
  std::string driver_version;
  std::string api_version;  // "1.3.239", "OpenGL ES 3.2 Mesa 22.3.6"
  GpuLimits limits;
  bool fp16_arithmetic = false;
  bool storage_16bit = false;
  // Shaders can ask for IEEE Inf and NaN in fp32 arithmetic (Vulkan's
  // shaderSignedZeroInfNanPreserveFloat32; GLSL ES has no way to ask).
  bool ieee_inf_nan = false;
  // Dot products of four packed 8-bit integers in shaders (Vulkan's
  // shaderIntegerDotProduct; not asked of GLES).
  bool int8_dot_products = false;
  bool subgroups = false;
  uint32_t subgroup_size = 0;
  bool timestamps = false;
  bool clamped_limits = false;  // limits lowered to the GLES 3.1 minimums
  // The device's priority as granted, and how: "high (VK_EXT_global_priority)",
  // "medium (the driver has no priorities)", "medium (high not permitted)".
  std::string priority = "medium (the driver default)";

  bool is_software() const { return type == DeviceType::kCpu; }
};

// How the device's work competes with other work on the GPU (NNAPI's
// priority): an app's rendering should not wait behind a background model.
// Applied where the driver has a way (Vulkan: VK_EXT_global_priority; GL:
// EGL_IMG_context_priority); GpuInfo::priority says what was granted.
enum class Priority { kLow, kMedium, kHigh };
const char* PriorityName(Priority priority);  // "low", "medium", "high"

// How a thread waits for the GPU's work (TFLite's Metal delegate's wait
// types). kPassive sleeps in the driver (vkWaitForFences, glClientWaitSync)
// until it wakes the thread, tens of microseconds after the GPU finished on
// desktop drivers; kActive polls for up to kActiveWaitLimit around when the
// work should end (PlanWait), answering as soon as the GPU finishes but
// keeping a core busy meanwhile (NVIDIA H100: face_detection's invoke
// 0.19 -> 0.17 ms, docs/perf.md). kAuto: active on a hardware GPU, passive
// on a software one, whose work runs on the very cores a poll would take.
enum class WaitMode { kAuto, kPassive, kActive };
const char* WaitModeName(WaitMode mode);  // "auto", "passive", "active"
inline constexpr std::chrono::microseconds kActiveWaitLimit{2000};
// How long a wait on `info`'s device polls before it sleeps: 0 or kActiveWaitLimit.
std::chrono::nanoseconds PollTime(WaitMode mode, const GpuInfo& info);
// How one active wait spends its time. A run longer than the poll budget (a
// phone's 10-30 ms model) would keep a core busy for all of that budget and
// still wake late, and one a little shorter would keep it busy throughout,
// so the wait first sleeps (SleepFor, or GL's caller on its future; either
// ends early if the work finishes) until kWakeLead before the run is
// expected to end, then polls. kWakeLead is far longer than a timed sleep's
// late wake (Linux's timer slack, 50 us); runs shorter than it poll from the
// start.
struct WaitPlan {
  std::chrono::nanoseconds sleep{0};  // SleepFor (the fence checked between slices), a future
  std::chrono::nanoseconds poll{0};   // then polls for up to this long
};
inline constexpr std::chrono::microseconds kWakeLead{1000};
// `poll_time`: PollTime's for the device; `expected`: how long the same
// recording took last time (0: unknown); `waited`: how long ago the work was
// submitted.
WaitPlan PlanWait(std::chrono::nanoseconds poll_time, std::chrono::nanoseconds expected,
                  std::chrono::nanoseconds waited = {});
// Polls `done` until it says true or `budget` has passed; what it last said.
template <typename Done>
bool PollFor(std::chrono::nanoseconds budget, Done&& done) {
  if (budget.count() <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + budget;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
  }
}

// Sleeps for up to `duration` in slices of kSleepSlice, asking `done`
// before each; what it last said. Not the driver's timed wait: NVIDIA's
// vkWaitForFences spins through a timeout of a millisecond (a ViT's 1.8 ms
// run cost 1.8 ms of CPU with 0.8 ms of it asked as a sleep; docs/perf.md),
// as its glClientWaitSync does through any; an OS sleep never spins.
inline constexpr std::chrono::microseconds kSleepSlice{250};
template <typename Done>
bool SleepFor(std::chrono::nanoseconds duration, Done&& done) {
  const auto until = std::chrono::steady_clock::now() + duration;
  for (;;) {
    if (done()) return true;
    const auto left = until - std::chrono::steady_clock::now();
    if (left.count() <= 0) return false;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(left, kSleepSlice));
  }
}

struct DeviceOptions {
  // Which device: a decimal index into the enumeration order or a
  // case-insensitive substring of the device name. Empty: the MGD_DEVICE
  // environment variable, else the best device (discrete > integrated >
  // virtual > CPU).
  std::string selector;
  // Vulkan: enable the Khronos validation layer and collect its messages.
  // Default on in debug builds and when MGD_VALIDATION=1.
  bool validation = false;
  // Report (and enforce) the GLES 3.1 minimum limits, as a phone would.
  bool clamp_limits = false;
  // Faults to show (faults.h), for tests; also the MGD_FAULTS variable.
  std::shared_ptr<struct FaultSwitches> faults;
  Priority priority = Priority::kMedium;
  WaitMode wait = WaitMode::kAuto;
  // GL: make the context on this EGLDisplay (initialized by the app, e.g.
  // its window's) sharing objects with this EGLContext, instead of probing
  // displays of mgd's own; the app's buffers and the device's are then one
  // another's. 0: probe. Handles as integers; Vulkan ignores them.
  uint64_t egl_display = 0, egl_share_context = 0;
};

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t size() const = 0;
};

// A compute program from complete GLSL source in the device's dialect
// (Vulkan: "#version 450" with set 0 storage bindings 0..n-1 and an optional
// push_constant block; GL: "#version 310 es" with SSBO bindings 0..n-1 and an
// optional std140 uniform block at binding 0).
struct ProgramSource {
  std::string name;  // names the program in errors ("conv2d_3")
  std::string glsl;
  uint32_t num_bindings = 0;
  uint32_t push_constant_bytes = 0;  // a multiple of 4, at most 128
  uint32_t shared_memory_bytes = 0;  // declared by the generator, checked against the limits
  // Vulkan: SPIR-V compiled earlier from this GLSL (Program::spirv(), kept by
  // a compilation cache): validated and used instead of compiling again.
  std::vector<uint32_t> spirv{};
  // What Program::binary() gave (kept by a compilation cache), used instead
  // of compiling. GL: the program binary; when the driver refuses it
  // (another driver version), the GLSL is compiled after all. Vulkan: the
  // shader module identifier; when the driver no longer has that pipeline,
  // it is built from `spirv`.
  std::vector<uint8_t> binary{};
};

class Program {
 public:
  virtual ~Program() = default;
  virtual const std::string& name() const = 0;
  virtual std::array<uint32_t, 3> workgroup_size() const = 0;  // from the shader
  // Vulkan: the SPIR-V it was built from (empty on GL).
  virtual std::vector<uint32_t> spirv() const { return {}; }
  // What lets the driver rebuild it without compiling, empty where the
  // driver offers nothing. GL: the program binary, its format tag first
  // (4 bytes, little endian). Vulkan: the shader module identifier
  // (VK_EXT_shader_module_identifier), its algorithm's UUID first; the
  // pipeline itself comes from the pipeline cache data.
  virtual std::vector<uint8_t> binary() const { return {}; }
  // Whether it was built from ProgramSource::binary without compiling.
  virtual bool from_binary() const { return false; }
  // How building it went, for the debug log (Vulkan 1.3's pipeline
  // creation feedback): the driver's own time for the pipeline, and whether
  // the pipeline cache served it.
  struct BuildFeedback {
    bool driver_known = false;
    bool cache_hit = false;
    double driver_ms = 0;
    // Wall time per phase, in order (Vulkan: SPIR-V, modules and layouts,
    // pipelines; GL: compile and link or binary, interface checks).
    struct Phase {
      const char* name;
      double ms;
    };
    std::vector<Phase> phases;
  };
  virtual BuildFeedback build_feedback() const { return {}; }
};

enum class Access { kRead, kWrite, kReadWrite };

// A buffer, or the part of it from `offset` on (`bytes` of it; 0: to the
// end), as storage binding i sees it: the shader's element 0 is at `offset`,
// which must be a multiple of the storage_buffer_offset_alignment limit.
struct Binding {
  Buffer* buffer = nullptr;
  Access access = Access::kReadWrite;
  size_t offset = 0;
  size_t bytes = 0;
};
// The end of the bytes a binding covers (offset + bytes, or the buffer's end).
size_t BindingEnd(const Binding& binding);

struct Dispatch {
  Program* program = nullptr;
  std::vector<Binding> bindings;       // binding i of the program
  std::vector<uint8_t> push_constants; // program's push_constant_bytes
  std::array<uint32_t, 3> groups{1, 1, 1};
};

// A sequence of dispatches recorded once and replayed by Device::Run. A
// barrier goes before a dispatch only when it reads or writes bytes an
// earlier dispatch wrote (or writes bytes an earlier dispatch read) since the
// last barrier.
class Recording {
 public:
  virtual ~Recording() = default;
  virtual size_t num_dispatches() const = 0;
  virtual size_t num_barriers() const = 0;
  // GPU time per dispatch in nanoseconds from the last run, when the
  // recording was made with timestamps; empty otherwise.
  virtual std::vector<double> dispatch_ns() const = 0;
  // When each dispatch began in the last run, in nanoseconds after the first
  // one began (the GPU's clock); empty without timestamps.
  virtual std::vector<double> dispatch_start_ns() const = 0;

  // How long its last run took from submission until a waiter saw it
  // finish (0 before the first): the next active wait sleeps through most
  // of that (PlanWait). Set by the device; atomic, as another thread's
  // wait may read it.
  std::chrono::nanoseconds last_run() const { return std::chrono::nanoseconds(last_run_ns_.load(std::memory_order_relaxed)); }
  void set_last_run(std::chrono::nanoseconds run) { last_run_ns_.store(run.count(), std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> last_run_ns_{0};
};

struct RecordOptions {
  bool timestamps = false;
  // The first dispatch waits for every earlier submission's dispatches, as
  // runs of recordings that share an app's buffer (a bound input or output)
  // must: Vulkan otherwise lets submissions overlap (GL runs them in order).
  bool after_earlier_work = false;
};

// An app's buffer used in place of one of the device's (zero-copy I/O), and
// the sync objects a submission waits on and signals (base/gpu_interop.h).
using ExternalBuffer = GpuBuffer;
using SyncObject = GpuSync;
using SubmitSync = GpuFences;

// The device's native objects, for apps that share buffers and sync
// objects with it, and what it can import and export. Handles are the API's
// own (VkInstance, VkDevice, EGLDisplay... as integers).
struct Interop {
  uint64_t vk_instance = 0, vk_physical_device = 0, vk_device = 0, vk_queue = 0;
  uint32_t vk_queue_family = 0;
  uint64_t egl_display = 0, egl_context = 0;
  bool timeline_semaphores = false;  // Vulkan: kVulkanTimelineSemaphore
  bool memory_fd_import = false;     // Vulkan: ExternalBuffer::kVulkanMemoryFd
  bool sync_fd_wait = false;         // kSyncFd waits
  bool sync_fd_signal = false;       // signal_new of kSyncFd
  bool egl_fence_sync = false;       // GL: EGL_KHR_fence_sync and EGL_KHR_wait_sync
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const GpuInfo& info() const = 0;

  // kUpload / kDownload: buffers the host writes before / reads after every
  // run (a delegate's inputs and outputs). Where the GPU has its own memory,
  // they live in host-visible memory so that Upload and Download are plain
  // copies, with no transfer submitted and waited for on their own: uploads
  // in device memory the host can map where there is some, downloads in
  // cached system memory.
  // kConstant: written once (a model's weights, by UploadAll), then only
  // read by the GPU: in device-local memory the host can map where there is
  // some (resizable BAR, integrated GPUs), written in place rather than
  // through a staging buffer and a copy.
  enum class Use { kDevice, kUpload, kDownload, kConstant };
  virtual absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes, Use use) = 0;
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes) { return CreateBuffer(bytes, Use::kDevice); }
  virtual absl::Status Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset = 0) = 0;
  virtual absl::Status Download(const Buffer& buffer, void* data, size_t bytes, size_t offset = 0) = 0;
  // Several uploads as one (a model's weights at prepare): the same result as
  // Upload for each, but Vulkan copies them all through one staging buffer
  // in one submission instead of waiting for the GPU once per buffer.
  struct UploadRequest {
    Buffer* buffer = nullptr;
    const void* data = nullptr;
    size_t bytes = 0;
    size_t offset = 0;
  };
  virtual absl::Status UploadAll(const std::vector<UploadRequest>& uploads) {
    for (const UploadRequest& u : uploads) {
      if (absl::Status s = Upload(*u.buffer, u.data, u.bytes, u.offset); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  struct DownloadRequest {
    const Buffer* buffer = nullptr;
    void* data = nullptr;
    size_t bytes = 0;
    size_t offset = 0;
  };
  // Several downloads as one (an async invoke's outputs): the same result as
  // Download for each; GL reads them all in one task on its context thread.
  virtual absl::Status DownloadAll(const std::vector<DownloadRequest>& downloads) {
    for (const DownloadRequest& d : downloads) {
      if (absl::Status s = Download(*d.buffer, d.data, d.bytes, d.offset); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // An invoke's round: Upload for each of `uploads`, Run, then Download for
  // each of `downloads`. GL does it all in one task on its context thread:
  // one wake of that thread and one of the caller's, where three calls woke
  // each three times.
  virtual absl::Status RunWithTransfers(const std::vector<UploadRequest>& uploads, Recording& recording,
                                        const std::vector<DownloadRequest>& downloads);
  // Makes room ahead of time to stage `bytes` of UploadAll's (16-byte
  // aligned each), so that another thread pays for a large host-visible
  // allocation while this one creates buffers. A no-op where uploads are
  // not staged; a failure is met again, and reported, by UploadAll.
  virtual void ReserveUploadBytes(size_t /*bytes*/) {}

  virtual absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSource& source) = 0;
  // Many programs at once, result i for sources[i]. By default CreateProgram
  // on up to `threads` threads (drivers compile on the calling thread); GL,
  // whose one context thread serializes calls, hands the driver all of them
  // before it waits for any (KHR_parallel_shader_compile).
  virtual std::vector<absl::StatusOr<std::unique_ptr<Program>>> CreatePrograms(const std::vector<ProgramSource>& sources,
                                                                               size_t threads);

  virtual absl::StatusOr<std::unique_ptr<Recording>> Record(const std::vector<Dispatch>& dispatches,
                                                            const RecordOptions& options = {}) = 0;
  // Submits a recording and waits for it to complete (and, for a recording
  // with timestamps, reads them).
  virtual absl::Status Run(Recording& recording) = 0;
  // Submits a recording and returns at once with a ticket for Wait, so that
  // the host can fill another recording's upload buffers while this one
  // runs (several invokes in flight). Submissions start in order; they may
  // overlap on the GPU, so recordings in flight together must not write
  // memory another one reads or writes. A recording is submitted again only
  // after its ticket completed, and lives until then. By default Run, and a
  // ticket that is already complete.
  // With `sync`: after its waits, signalling its signals (gpu::SubmitSync),
  // so that an app's producer and consumer chain with the GPU work without
  // the host waiting; Unimplemented (naming it) for a sync object the device
  // cannot use.
  virtual absl::StatusOr<uint64_t> Submit(Recording& recording, const SubmitSync& sync);
  absl::StatusOr<uint64_t> Submit(Recording& recording) { return Submit(recording, SubmitSync{}); }
  // Waits until submission `ticket` has completed (and reads a timestamped
  // recording's timestamps), from any thread. After `timeout`:
  // DeadlineExceeded, and the ticket stays to be waited for again (the GPU
  // cannot be stopped; its work must complete before the buffers it uses
  // are reused or freed). Once completed, a ticket is gone.
  virtual absl::Status Wait(uint64_t ticket, std::chrono::nanoseconds timeout);
  absl::Status Wait(uint64_t ticket) { return Wait(ticket, kRunTimeout); }

  // An app's buffer as one of the device's, for bindings (not for Upload
  // or Download). It must outlive every recording that binds it.
  virtual absl::StatusOr<std::unique_ptr<Buffer>> ImportBuffer(const ExternalBuffer& external) {
    (void)external;
    return absl::UnimplementedError("this device cannot use an app's buffers");
  }
  virtual Interop interop() const { return {}; }
  // Vulkan: the queue is the app's to submit to between these (Vulkan
  // requires queue submissions to be externally synchronized); a no-op on GL.
  virtual void LockQueue() {}
  virtual void UnlockQueue() {}

  // Vulkan: the pipeline cache every program is created through
  // (vkGetPipelineCacheData), for a compilation cache to keep; empty on GL.
  virtual std::vector<uint8_t> PipelineCacheData() const { return {}; }
  // Vulkan: adds pipeline cache data kept earlier, so that creating the same
  // pipelines again skips the driver's compiler. Data made by another device,
  // driver or pipeline cache version is refused with an error saying which
  // (the device then simply compiles); a no-op on GL.
  virtual absl::Status MergePipelineCacheData(const std::vector<uint8_t>& data) {
    (void)data;
    return absl::OkStatus();
  }

  // Vulkan validation messages seen so far (empty when validation is off).
  virtual std::vector<std::string> validation_messages() const { return {}; }
};

// Devices of one API on this machine, best first; an empty list (not an
// error) when the API or driver is missing.
absl::StatusOr<std::vector<GpuInfo>> ListDevices(Api api);
absl::StatusOr<std::unique_ptr<Device>> CreateDevice(Api api, const DeviceOptions& options = {});

// Picks among devices (best first) by selector: an index or a name substring.
absl::StatusOr<size_t> SelectDevice(const std::vector<GpuInfo>& devices, const std::string& selector);

// Keeps every already-loaded shared library whose file name satisfies
// `matches` loaded for the life of the process (dlopen NOLOAD|NODELETE).
// Both backends use it for Mesa's drivers, whose once-only allocations are
// lost (and reported by LeakSanitizer with no stack) when they are unloaded.
void PinLoadedModules(bool (*matches)(const std::string& file_name));

// Shared by both backends: a program's workgroup, shared memory, bindings
// and push constants against the device's (possibly clamped) limits.
absl::Status CheckProgramLimits(const GpuInfo& info, const ProgramSource& source,
                                const std::array<uint32_t, 3>& workgroup_size);
// A dispatch against its program: binding count, binding ranges (inside the
// buffer, aligned, within the storage block limit), push constant size, grid.
absl::Status CheckDispatch(const GpuInfo& info, const Dispatch& dispatch, const std::string& program_name,
                           uint32_t num_bindings, uint32_t push_constant_bytes, size_t index);

// Where barriers go: barrier_before[i] is true when dispatch i depends on an
// earlier one since the last barrier (read-after-write, write-after-read,
// write-after-write on overlapping bytes of a buffer).
std::vector<bool> PlanBarriers(const std::vector<Dispatch>& dispatches);

}  // namespace mgd::gpu
