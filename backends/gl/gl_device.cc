// OpenGL ES 3.1+ compute device: one worker thread owns the EGL context and
// runs every call (gl_worker.h); buffers are SSBOs, push constants a UBO per
// dispatch, timing from timestamp queries, completion from a fence.
#include "backends/gl/gl_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/gl/egl_context.h"
#include "backends/gl/gl_displays.h"
#include "backends/gl/gl_info.h"
#include "backends/gl/gl_interop.h"
#include "backends/gl/gl_objects.h"
#include "backends/gl/gl_submissions.h"
#include "backends/gl/gl_transfers.h"
#include "backends/gl/gl_worker.h"

namespace mgd::gpu::gl {
namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Argument checks (no GL: they run on the caller's thread)

// Each dispatch's program and buffers belong to this device, and it matches
// its program (CheckDispatch); each buffer fits in a storage block.
absl::StatusOr<std::vector<const GlProgram*>> CheckDispatches(const DeviceCore* core,
                                                              const std::vector<Dispatch>& dispatches) {
  if (dispatches.empty()) return absl::InvalidArgumentError("cannot record an empty sequence of dispatches");
  std::vector<const GlProgram*> programs;
  for (size_t i = 0; i < dispatches.size(); ++i) {
    const Dispatch& d = dispatches[i];
    const auto* program = dynamic_cast<const GlProgram*>(d.program);
    if (program == nullptr || program->core() != core) {
      return absl::InvalidArgumentError(
          fmt::format("dispatch {}: {}", i, d.program == nullptr ? "no program" : "the program is not from this GL device"));
    }
    const std::string& name = program->name();
    if (absl::Status status = CheckDispatch(core->info, d, name, program->num_bindings(),
                                            program->push_constant_bytes(), i);
        !status.ok()) {
      return status;
    }
    for (size_t b = 0; b < d.bindings.size(); ++b) {
      if (OwnBuffer(*core, d.bindings[b].buffer) == nullptr) {
        return absl::InvalidArgumentError(fmt::format(
            "dispatch {} ('{}') binding {}: the buffer does not belong to this GL device", i, name, b));
      }
    }
    programs.push_back(program);
  }
  return programs;
}

// glGetError after every call in Run costs a round trip on some drivers, so
// only in debug builds or when validation is asked for.
bool ValidationRequested(const DeviceOptions& options) {
#ifndef NDEBUG
  constexpr bool kDebugBuild = true;
#else
  constexpr bool kDebugBuild = false;
#endif
  const char* env = std::getenv("MGD_VALIDATION");
  return kDebugBuild || options.validation || (env != nullptr && std::strcmp(env, "1") == 0);
}

// ---------------------------------------------------------------------------
// Work on the GL thread

// The push constants as a uniform buffer, padded to std140's 16 bytes.
absl::Status CreateParams(const std::vector<uint8_t>& bytes, GlRecording::Step& step, const std::string& where) {
  std::vector<uint8_t> padded(bytes);
  padded.resize((bytes.size() + 15) & ~size_t{15}, 0);
  glGenBuffers(1, &step.params);
  glBindBuffer(GL_UNIFORM_BUFFER, step.params);
  glBufferData(GL_UNIFORM_BUFFER, static_cast<GLsizeiptr>(padded.size()), padded.data(), GL_STATIC_DRAW);
  glBindBuffer(GL_UNIFORM_BUFFER, 0);
  step.params_bytes = static_cast<GLsizeiptr>(padded.size());
  return CheckGl(where, "glBufferData(GL_UNIFORM_BUFFER)");
}

// Binds and dispatches one step; with `check`, glGetError after each call.
absl::Status DispatchStep(const GlRecording::Step& step, size_t index, const GlExtensions& ext, const GLuint* queries,
                       bool check) {
  auto checked = [&](const char* call) {
    return check ? CheckGl(fmt::format("Run: dispatch {} ('{}')", index, step.program_name), call)
                 : absl::OkStatus();
  };
  if (step.barrier_before) glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  glUseProgram(step.program);
  if (absl::Status s = checked("glUseProgram"); !s.ok()) return s;
  for (size_t b = 0; b < step.buffers.size(); ++b) {
    const GlRecording::Range& r = step.buffers[b];
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(b), r.buffer, r.offset, r.bytes);
  }
  if (step.params != 0) glBindBufferRange(GL_UNIFORM_BUFFER, 0, step.params, 0, step.params_bytes);
  if (absl::Status s = checked("glBindBufferRange"); !s.ok()) return s;
  // Counter pairs rather than GL_TIME_ELAPSED, which llvmpipe reads as 0
  // around compute.
  if (queries != nullptr) ext.query_counter(queries[0], GL_TIMESTAMP_EXT);
  glDispatchCompute(step.groups[0], step.groups[1], step.groups[2]);
  if (queries != nullptr) ext.query_counter(queries[1], GL_TIMESTAMP_EXT);
  return checked("glDispatchCompute");
}

// ---------------------------------------------------------------------------

class GlDevice final : public Device {
 public:
  explicit GlDevice(std::shared_ptr<DeviceCore> core)
      : core_(std::move(core)), egl_(LoadEglSync(core_->context->display())) {}
  ~GlDevice() override { Shutdown(*core_); }

  const GpuInfo& info() const override { return core_->info; }

  using Device::CreateBuffer;
  // GL places buffers itself; Upload and Download need no submit of their own.
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes, Use) override {
    return core_->worker.Call([&] { return CreateBufferOnThread(bytes); });
  }

  absl::Status Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset) override {
    return CheckAndUpload({{&buffer, data, bytes, offset}}, "Upload");
  }

  // In one task on the context thread, behind one barrier: a model's
  // weights are a hundred or more uploads, and a round trip to that thread
  // each cost more than the copies.
  absl::Status UploadAll(const std::vector<UploadRequest>& uploads) override {
    return CheckAndUpload(uploads, "UploadAll");
  }

  absl::Status RunWithTransfers(const std::vector<UploadRequest>& uploads, Recording& recording,
                                const std::vector<DownloadRequest>& downloads) override {
    constexpr std::string_view kCall = "RunWithTransfers";
    absl::StatusOr<std::vector<const GlBuffer*>> targets = CheckedTargets(*core_, kCall, uploads);
    if (!targets.ok()) return targets.status();
    absl::StatusOr<GlRecording*> gl = OwnRecording(recording, kCall);
    if (!gl.ok()) return gl.status();
    absl::StatusOr<std::vector<const GlBuffer*>> sources = CheckedSources(*core_, kCall, downloads);
    if (!sources.ok()) return sources.status();
    return CallRun(**gl, [&](Clock::time_point start) -> absl::Status {
      if (!uploads.empty()) {
        if (absl::Status s = UploadOnThread(*targets, uploads, kCall); !s.ok()) return s;
      }
      if (absl::Status s = RunOnThread(**gl, start); !s.ok()) return s;
      return downloads.empty() ? absl::OkStatus() : DownloadOnThread(*sources, downloads, kCall);
    });
  }

  absl::Status Download(const Buffer& buffer, void* data, size_t bytes, size_t offset) override {
    return CheckAndDownload({{&buffer, data, bytes, offset}}, "Download");
  }

  // In one task on the context thread, as UploadAll.
  absl::Status DownloadAll(const std::vector<DownloadRequest>& downloads) override {
    return CheckAndDownload(downloads, "DownloadAll");
  }

  absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSource& source) override {
    return core_->worker.Call([&]() -> absl::StatusOr<std::unique_ptr<Program>> {
      absl::StatusOr<std::unique_ptr<GlProgram>> program = BuildProgram(core_, source);
      if (!program.ok()) return program.status();
      return std::unique_ptr<Program>(std::move(*program));
    });
  }

  // GLSL without a binary is first compiled on helper contexts, one per
  // thread, into binaries. Then, in two tasks on the context thread: every
  // program begun (binaries handed over, shaders compiling, then linking)
  // before any is waited for, so that a driver with KHR_parallel_shader_compile
  // works on all at once; buffers other threads ask for meanwhile are made in
  // between.
  std::vector<absl::StatusOr<std::unique_ptr<Program>>> CreatePrograms(const std::vector<ProgramSource>& sources,
                                                                       size_t threads) override {
    std::vector<ProgramSource> compiled;  // sources with the helpers' binaries
    std::vector<double> helper_ms(sources.size(), -1.0);  // >= 0: a helper compiled it
    if (core_->binary_formats) compiled = CompileElsewhere(sources, threads, helper_ms);
    const std::vector<ProgramSource>& to_build = compiled.empty() ? sources : compiled;
    std::vector<absl::StatusOr<std::unique_ptr<Program>>> built;
    std::vector<PendingProgram> pending;
    absl::Status posted = core_->worker.RunAndWait([&] {
      for (const ProgramSource& source : to_build) pending.push_back(BeginProgram(core_, source, /*from_binary=*/true));
      for (PendingProgram& p : pending) LinkPending(p);
    });
    if (posted.ok()) {
      posted = core_->worker.RunAndWait([&] {
        for (size_t i = 0; i < pending.size(); ++i) {
          absl::StatusOr<std::unique_ptr<GlProgram>> program = FinishProgram(std::move(pending[i]));
          if (!program.ok()) {
            built.emplace_back(program.status());
            continue;
          }
          if (helper_ms[i] >= 0 && (*program)->from_binary()) (*program)->set_compiled_on_helper(helper_ms[i]);
          built.emplace_back(std::unique_ptr<Program>(std::move(*program)));
        }
      });
    }
    while (built.size() < sources.size()) built.emplace_back(posted.ok() ? absl::InternalError("not built") : posted);
    return built;
  }

  absl::StatusOr<std::unique_ptr<Recording>> Record(const std::vector<Dispatch>& dispatches,
                                                    const RecordOptions& options) override {
    absl::StatusOr<std::vector<const GlProgram*>> programs = CheckDispatches(core_.get(), dispatches);
    if (!programs.ok()) return programs.status();
    return core_->worker.Call([&] { return RecordOnThread(dispatches, *programs, options); });
  }

  absl::Status Run(Recording& recording) override {
    absl::StatusOr<GlRecording*> gl = OwnRecording(recording, "Run");
    if (!gl.ok()) return gl.status();
    return CallRun(**gl, [&](Clock::time_point start) { return RunOnThread(**gl, start); });
  }

  // The app's syncs waited for (on the GPU), the dispatches, the new sync
  // asked for and a fence, flushed to the GPU; the context thread is free
  // again at once.
  using Device::Submit;
  absl::StatusOr<uint64_t> Submit(Recording& recording, const SubmitSync& sync) override {
    absl::StatusOr<GlRecording*> own = OwnRecording(recording, "Submit");
    if (!own.ok()) return own.status();
    GlRecording* gl = *own;
    const Clock::time_point start = Clock::now();
    return core_->worker.Call([&]() -> absl::StatusOr<uint64_t> {
      if (absl::Status s = CheckSync(*core_, egl_, sync); !s.ok()) return s;
      if (absl::Status s = QueueWaits(*core_, egl_, sync); !s.ok()) return s;
      absl::Status status = DispatchAll(*gl);
      // A fence even after an error: the caller waits before freeing buffers.
      GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
      if (fence == nullptr) return CheckGl("Submit", "glFenceSync");
      if (status.ok()) status = MakeSignal(*core_, egl_, sync);
      glFlush();  // the fence must reach the GPU, or a wait on another thread's turn never ends
      const uint64_t ticket = submissions_.AddOnThread(fence, *gl, start);
      if (!status.ok()) return status;
      if (absl::Status s = CheckGl(fmt::format("Submit of {} dispatches", gl->steps().size()), "a GL call"); !s.ok()) {
        return s;
      }
      return ticket;
    }, Polling());
  }

  absl::StatusOr<std::unique_ptr<Buffer>> ImportBuffer(const ExternalBuffer& external) override {
    return core_->worker.Call([&] { return ImportGlBuffer(core_, external); });
  }
  Interop interop() const override { return GlInterop(*core_, egl_); }

  using Device::Wait;
  absl::Status Wait(uint64_t ticket, std::chrono::nanoseconds timeout) override {
    return submissions_.Wait(ticket, timeout);
  }

  // Releases the context on its thread, then ends the thread. Objects still
  // alive find the worker stopped; destroying the context freed theirs.
  static void Shutdown(DeviceCore& core) {
    core.worker.Stop([&core] {
      core.context.reset();
      eglReleaseThread();  // EGL's per-thread state, or it leaks with the thread
    });
  }

 private:
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBufferOnThread(size_t bytes) {
    if (bytes == 0) return absl::InvalidArgumentError("CreateBuffer: a buffer of 0 bytes");
    if (bytes > static_cast<size_t>(std::numeric_limits<GLsizeiptr>::max()) - 3) {
      return absl::InvalidArgumentError(fmt::format("CreateBuffer: {} bytes is more than GL can address", bytes));
    }
    const std::string where = fmt::format("CreateBuffer({} bytes)", bytes);
    DrainGlErrors();
    GLuint id = 0;
    glGenBuffers(1, &id);
    auto buffer = std::make_unique<GlBuffer>(core_, id, bytes);  // deletes `id` if the allocation fails
    // Shaders read whole 32-bit words, so the last partial word must exist.
    const size_t allocated = (bytes + 3) & ~size_t{3};
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, id);
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(allocated), nullptr, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    if (absl::Status status = CheckGl(where, "glBufferData"); !status.ok()) return status;
    return std::unique_ptr<Buffer>(std::move(buffer));
  }

  absl::StatusOr<GlRecording*> OwnRecording(Recording& recording, std::string_view call) const {
    auto* gl = dynamic_cast<GlRecording*>(&recording);
    if (gl == nullptr || gl->core() != core_.get()) {
      return absl::InvalidArgumentError(fmt::format("{}: the recording does not belong to this GL device", call));
    }
    return gl;
  }

  absl::Status CheckAndUpload(const std::vector<UploadRequest>& uploads, std::string_view call) {
    absl::StatusOr<std::vector<const GlBuffer*>> targets = CheckedTargets(*core_, call, uploads);
    if (!targets.ok()) return targets.status();
    const bool none = std::all_of(uploads.begin(), uploads.end(), [](const UploadRequest& u) { return u.bytes == 0; });
    if (none) return absl::OkStatus();  // no round trip to the context thread for nothing
    return core_->worker.Call([&] { return UploadOnThread(*targets, uploads, call); }, Polling());
  }

  absl::Status CheckAndDownload(const std::vector<DownloadRequest>& downloads, std::string_view call) {
    absl::StatusOr<std::vector<const GlBuffer*>> sources = CheckedSources(*core_, call, downloads);
    if (!sources.ok()) return sources.status();
    const bool none = std::all_of(downloads.begin(), downloads.end(), [](const DownloadRequest& d) { return d.bytes == 0; });
    if (none) return absl::OkStatus();
    return core_->worker.Call([&] { return DownloadOnThread(*sources, downloads, call); }, Polling());
  }

  absl::StatusOr<std::unique_ptr<Recording>> RecordOnThread(const std::vector<Dispatch>& dispatches,
                                                            const std::vector<const GlProgram*>& programs,
                                                            const RecordOptions& options) {
    DrainGlErrors();
    auto recording = std::make_unique<GlRecording>(core_);  // frees what was made if a step fails
    const std::vector<bool> barriers = PlanBarriers(dispatches);
    recording->set_num_barriers(static_cast<size_t>(std::count(barriers.begin(), barriers.end(), true)));
    for (size_t i = 0; i < dispatches.size(); ++i) {
      recording->steps().push_back(GlRecording::Step{});
      GlRecording::Step& step = recording->steps().back();
      step.program = programs[i]->id();
      step.program_name = programs[i]->name();
      for (const Binding& binding : dispatches[i].bindings) {
        step.buffers.push_back({static_cast<const GlBuffer*>(binding.buffer)->id(), static_cast<GLintptr>(binding.offset),
                                static_cast<GLsizeiptr>(BindingEnd(binding) - binding.offset)});
      }
      step.groups = dispatches[i].groups;
      step.barrier_before = barriers[i];
      if (!dispatches[i].push_constants.empty()) {
        const std::string where = fmt::format("Record: dispatch {} ('{}')", i, step.program_name);
        if (absl::Status s = CreateParams(dispatches[i].push_constants, step, where); !s.ok()) return s;
      }
    }
    // Without timer queries the recording simply has no times (dispatch_ns() empty).
    if (options.timestamps && core_->info.timestamps && !dispatches.empty()) {
      recording->queries().resize(2 * dispatches.size());
      glGenQueries(static_cast<GLsizei>(recording->queries().size()), recording->queries().data());
      if (absl::Status s = CheckGl("Record", "glGenQueries"); !s.ok()) return s;
    }
    return std::unique_ptr<Recording>(std::move(recording));
  }

  // A recording's dispatches issued (not waited for), with its timestamp
  // queries when it has them.
  absl::Status DispatchAll(GlRecording& recording) {
    DrainGlErrors();
    const std::vector<GLuint>& queries = recording.queries();
    const bool timed = !queries.empty();
    if (timed) {
      GLint disjoint = 0;
      glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // reading clears it: only this run's events count
    }
    // Dispatches of earlier runs (of any recording) may have written what
    // this run reads; PlanBarriers only sees inside one recording.
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    absl::Status status;
    const std::vector<GlRecording::Step>& steps = recording.steps();
    for (size_t i = 0; i < steps.size() && status.ok(); ++i) {
      status = DispatchStep(steps[i], i, core_->ext, timed ? &queries[2 * i] : nullptr, core_->check_each_call);
    }
    glUseProgram(0);
    return status;
  }

  // `start`: when the caller asked (CallRun).
  absl::Status RunOnThread(GlRecording& recording, Clock::time_point start) {
    const absl::Status status = DispatchAll(recording);
    // Wait even after an error: the caller may free buffers the GPU still uses.
    absl::Status waited =
        WaitForGpu(recording.steps().size(), PlanWait(core_->poll_time, recording.last_run(), Clock::now() - start));
    if (!status.ok()) return status;
    if (!waited.ok()) return waited;
    if (!recording.queries().empty()) recording.set_timestamps(ReadTimestamps(core_->ext, recording.queries()));
    // Without per-call checks only the run as a whole is known to have failed.
    return CheckGl(fmt::format("Run of {} dispatches", recording.steps().size()),
                   core_->check_each_call ? "a GL call" : "a GL call (MGD_VALIDATION=1 names which)");
  }

  // `sources` with the binaries helper contexts compiled for those without
  // one, and in `helper_ms` what each took; empty when the helpers compiled
  // nothing (none ran, or all failed).
  std::vector<ProgramSource> CompileElsewhere(const std::vector<ProgramSource>& sources, size_t threads,
                                              std::vector<double>& helper_ms) const {
    if (core_->worker.OnWorkerThread()) return {};  // a helper would replace the device's current context
    std::vector<const ProgramSource*> glsl_only;
    for (const ProgramSource& source : sources) {
      if (source.binary.empty()) glsl_only.push_back(&source);
    }
    const std::vector<HelperCompile> made = CompileOnHelperContexts(core_->display, glsl_only, threads);
    if (std::all_of(made.begin(), made.end(), [](const HelperCompile& m) { return m.binary.empty(); })) return {};
    std::vector<ProgramSource> compiled = sources;
    for (size_t i = 0, k = 0; i < compiled.size(); ++i) {
      if (!compiled[i].binary.empty()) continue;
      const HelperCompile& m = made[k++];
      compiled[i].binary = m.binary;
      if (!m.binary.empty()) helper_ms[i] = m.ms;
    }
    return compiled;
  }

  // Runs `run(start)` on the context thread, which runs `recording`: this
  // thread and that one wait as PlanWait says for the time the recording's
  // last run took, then this one's is kept.
  template <typename Run>
  absl::Status CallRun(GlRecording& recording, Run&& run) {
    const Clock::time_point start = Clock::now();
    absl::Status status = core_->worker.Call([&] { return run(start); }, PlanWait(core_->poll_time, recording.last_run()));
    if (status.ok()) recording.set_last_run(Clock::now() - start);
    return status;
  }
  // How a short call that waits for the GPU (an upload, a download) waits.
  WaitPlan Polling() const { return PlanWait(core_->poll_time, {}); }

  std::shared_ptr<DeviceCore> core_;
  GlSubmissions submissions_{*core_};
  EglSyncFunctions egl_;  // fixed once the device exists
};

// On the worker thread: probes, selects and keeps one context current.
// A context asking for `priority` in place of the probe's, where the display
// has EGL_IMG_context_priority.
absl::Status UsePriority(Candidate& chosen, Priority priority) {
  if (priority == Priority::kMedium) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<DisplayRef>> display = DisplayRef::Open(chosen.context->source());
  if (!display.ok()) return display.status();
  const char* extensions = eglQueryString((*display)->display(), EGL_EXTENSIONS);
  if (extensions == nullptr || std::string(extensions).find("EGL_IMG_context_priority") == std::string::npos) {
    return absl::OkStatus();
  }
  const EGLint level = priority == Priority::kLow ? EGL_CONTEXT_PRIORITY_LOW_IMG : EGL_CONTEXT_PRIORITY_HIGH_IMG;
  absl::StatusOr<std::unique_ptr<EglContext>> context = EglContext::Create(std::move(*display), level);
  if (!context.ok()) return context.status();
  chosen.context = std::move(*context);
  return absl::OkStatus();
}

absl::Status OpenDevice(DeviceCore& core, const DeviceOptions& options) {
  Probe probe;
  if (options.egl_display != 0) {
    // The app's display is the device; no other is probed or selected.
    absl::StatusOr<Candidate> app = OpenAppDisplay(reinterpret_cast<EGLDisplay>(options.egl_display),
                                                   reinterpret_cast<EGLContext>(options.egl_share_context));
    if (!app.ok()) return app.status();
    probe.usable.push_back(std::move(*app));
  } else {
    probe = ProbeDisplays();
  }
  if (probe.usable.empty()) return NoDevice(probe);
  std::vector<GpuInfo> infos;
  for (const Candidate& c : probe.usable) infos.push_back(c.caps.info);
  std::string selector = options.egl_display != 0 ? "0" : options.selector;
  if (selector.empty()) {
    const char* env = std::getenv("MGD_DEVICE");
    if (env != nullptr) selector = env;
  }
  absl::StatusOr<size_t> index = SelectDevice(infos, selector);
  if (!index.ok()) return index.status();
  Candidate& chosen = probe.usable[*index];
  if (absl::Status status = UsePriority(chosen, options.priority); !status.ok()) return status;
  if (absl::Status status = chosen.context->MakeCurrent(); !status.ok()) return status;
  core.context = std::move(chosen.context);
  core.display = core.context->source();
  core.info = chosen.caps.info;
  core.info.priority = core.context->PriorityGranted(options.priority);
  core.ext = chosen.caps.ext;
  core.binary_formats = chosen.caps.binary_formats;
  core.check_each_call = ValidationRequested(options);
  core.poll_time = PollTime(options.wait, core.info);
  // As many compiler threads as the driver likes (0xFFFFFFFF, the
  // extension's "implementation-dependent maximum"): cold starts compile
  // all programs at once (CreatePrograms).
  if (core.ext.max_shader_compiler_threads != nullptr) core.ext.max_shader_compiler_threads(0xFFFFFFFFu);
  if (options.clamp_limits) {
    core.info.limits = ClampToGles31(core.info.limits);
    core.info.clamped_limits = true;
  }
  return absl::OkStatus();  // the other candidates' contexts go with `probe`
}

}  // namespace

absl::StatusOr<std::vector<GpuInfo>> ListDevices() {
  // On a thread of its own: probing makes contexts current, which must not
  // disturb a context the caller has on its thread.
  Worker worker;
  absl::StatusOr<std::vector<GpuInfo>> infos = worker.Call([]() -> absl::StatusOr<std::vector<GpuInfo>> {
    std::vector<GpuInfo> result;
    {
      Probe probe = ProbeDisplays();
      for (const Candidate& c : probe.usable) result.push_back(c.caps.info);
    }
    eglReleaseThread();
    return result;
  });
  return infos;
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) {
  auto core = std::make_shared<DeviceCore>();
  absl::Status status = core->worker.Call([&] { return OpenDevice(*core, options); });
  if (!status.ok()) {
    GlDevice::Shutdown(*core);
    return status;
  }
  return std::unique_ptr<Device>(new GlDevice(std::move(core)));
}

}  // namespace mgd::gpu::gl
