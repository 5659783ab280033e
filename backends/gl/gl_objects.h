// The GL backend's internals: what a device shares with the objects it
// made, the objects themselves, and GL error checking. Everything that calls
// GL runs on the device's worker thread.
#pragma once

#include <GLES3/gl31.h>
// After gl31.h: the extension typedefs (timer queries, subgroups).
#include <GLES2/gl2ext.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "backends/gl/egl_context.h"
#include "backends/gl/gl_worker.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu::gl {

// Extension entry points: not exported by libGLESv2, so looked up with
// eglGetProcAddress once a context is current. Null when missing.
struct GlExtensions {
  PFNGLQUERYCOUNTEREXTPROC query_counter = nullptr;
  PFNGLGETQUERYOBJECTUI64VEXTPROC get_query_object_ui64v = nullptr;
  PFNGLGETQUERYIVEXTPROC get_query_iv = nullptr;
  // KHR_parallel_shader_compile: the driver compiles, links and loads
  // program binaries on threads of its own until a status is queried.
  PFNGLMAXSHADERCOMPILERTHREADSKHRPROC max_shader_compiler_threads = nullptr;
};

// A device's state, shared with its buffers, programs and recordings so
// that they can release their GL objects on the right thread, and so that an
// object outliving its device finds the worker stopped rather than a
// dangling pointer.
struct DeviceCore {
  Worker worker;
  // Only touched on the worker thread; null after the device is destroyed.
  std::unique_ptr<EglContext> context;
  DisplaySource display;  // the context's, for helper contexts; fixed once the device exists
  GpuInfo info;  // fixed once the device exists
  GlExtensions ext;
  bool binary_formats = false;   // GL_NUM_PROGRAM_BINARY_FORMATS > 0
  bool check_each_call = false;  // glGetError after every call of Run (debug / validation)
  std::chrono::nanoseconds poll_time{0};  // how long a wait polls its fence first (gpu::PollTime)

  // Runs `release` on the worker unless the device is gone (destroying the
  // context already freed every object it had).
  void Release(const std::function<void()>& release) { (void)worker.RunAndWait(release); }
};

// "GL_INVALID_OPERATION", ...
const char* GlErrorName(GLenum error);
// Clears GL's error flags (a driver may hold several).
void DrainGlErrors();
// OK, or the error a GL call left: "{where}: {call} failed: GL_INVALID_VALUE"
// (ResourceExhausted for GL_OUT_OF_MEMORY, Internal otherwise).
absl::Status CheckGl(std::string_view where, const char* call);
// The status for `error` (glGetError's, not yet drained) in `call`.
absl::Status GlFailure(GLenum error, std::string_view where, const char* call);

class GlBuffer final : public Buffer {
 public:
  // `owned`: false for an app's buffer (ImportBuffer), which is left alone.
  GlBuffer(std::shared_ptr<DeviceCore> core, GLuint id, size_t size, bool owned = true)
      : core_(std::move(core)), id_(id), size_(size), owned_(owned) {}
  ~GlBuffer() override;
  size_t size() const override { return size_; }

  GLuint id() const { return id_; }
  const DeviceCore* core() const { return core_.get(); }

 private:
  std::shared_ptr<DeviceCore> core_;
  GLuint id_;
  size_t size_;  // as requested; the GL allocation is rounded up to 4 bytes
  bool owned_;
};

class GlProgram final : public Program {
 public:
  GlProgram(std::shared_ptr<DeviceCore> core, const ProgramSource& source, GLuint id)
      : core_(std::move(core)),
        name_(source.name),
        id_(id),
        num_bindings_(source.num_bindings),
        push_constant_bytes_(source.push_constant_bytes) {}
  ~GlProgram() override;
  const std::string& name() const override { return name_; }
  std::array<uint32_t, 3> workgroup_size() const override { return workgroup_size_; }

  GLuint id() const { return id_; }
  const DeviceCore* core() const { return core_.get(); }
  uint32_t num_bindings() const { return num_bindings_; }
  uint32_t push_constant_bytes() const { return push_constant_bytes_; }
  // The driver's program binary (glGetProgramBinary) for the compilation
  // cache, its format first; empty when the driver offers none.
  std::vector<uint8_t> binary() const override;
  bool from_binary() const override { return from_binary_; }
  BuildFeedback build_feedback() const override { return feedback_; }
  void set_build_feedback(BuildFeedback feedback) { feedback_ = std::move(feedback); }

  void set_workgroup_size(const std::array<uint32_t, 3>& size) { workgroup_size_ = size; }
  void set_binary(std::vector<uint8_t> binary, GLenum format, bool loaded) {
    binary_ = std::move(binary);
    binary_format_ = format;
    from_binary_ = loaded;
  }
  // Loaded from a binary a helper context compiled moments ago, not from one
  // the caller kept: from_binary() says false, the phases say where the
  // compile went.
  void set_compiled_on_helper(double helper_ms) {
    from_binary_ = false;
    feedback_.phases.insert(feedback_.phases.begin(), {"compile and link on a helper context", helper_ms});
  }

 private:
  std::shared_ptr<DeviceCore> core_;
  std::string name_;
  GLuint id_;
  uint32_t num_bindings_;
  uint32_t push_constant_bytes_;
  std::array<uint32_t, 3> workgroup_size_{1, 1, 1};
  std::vector<uint8_t> binary_;
  GLenum binary_format_ = 0;
  bool from_binary_ = false;
  BuildFeedback feedback_;
};

// A program on its way: begun by BeginProgram (the driver may then load or
// compile it in the background, KHR_parallel_shader_compile), completed by
// FinishProgram. All on the current context (worker thread).
struct PendingProgram {
  const ProgramSource* source = nullptr;
  std::shared_ptr<DeviceCore> core;
  std::unique_ptr<GlProgram> program;  // null while only a shader compiles
  GLuint shader = 0;                   // compiling; deleted once linked
  absl::Status status;                 // an error met on the way
  double ms = 0;                       // this thread's time in its calls
};
// `from_binary`: hand the driver source.binary when there is one.
PendingProgram BeginProgram(std::shared_ptr<DeviceCore> core, const ProgramSource& source, bool from_binary);
// Once its shader compiled: starts the link of a program begun from GLSL
// (errors are kept for FinishProgram). A no-op for a binary.
void LinkPending(PendingProgram& pending);
absl::StatusOr<std::unique_ptr<GlProgram>> FinishProgram(PendingProgram pending);

// Compiles and links `source` on the current context (worker thread).
absl::StatusOr<std::unique_ptr<GlProgram>> BuildProgram(std::shared_ptr<DeviceCore> core,
                                                        const ProgramSource& source);

// The binary of a linked program on the current context, its format first
// (GlProgram::binary()'s layout); empty when the driver gives none.
std::vector<uint8_t> TaggedBinary(GLuint program);

struct HelperCompile {
  std::vector<uint8_t> binary;  // TaggedBinary's layout; empty where that failed
  double ms = 0;                // the helper's compile, link and glGetProgramBinary
};
// Each source compiled on up to `threads` helper contexts of `display`, each
// on a thread of its own; where that failed, the device's context compiles
// the GLSL and reports the error. Needs a driver with binary formats; all
// empty when fewer than two helpers would run. Call it on a thread without a
// current context of its own to keep.
std::vector<HelperCompile> CompileOnHelperContexts(const DisplaySource& display,
                                                   const std::vector<const ProgramSource*>& sources, size_t threads);

class GlRecording final : public Recording {
 public:
  // The part of a buffer one SSBO binding covers.
  struct Range {
    GLuint buffer = 0;
    GLintptr offset = 0;
    GLsizeiptr bytes = 0;
  };
  // One dispatch as Run replays it: GL names captured at Record time.
  struct Step {
    GLuint program = 0;
    std::string program_name;  // for errors
    std::vector<Range> buffers;  // SSBO binding i
    GLuint params = 0;           // the push-constant UBO, 0 when none
    GLsizeiptr params_bytes = 0;
    std::array<uint32_t, 3> groups{1, 1, 1};
    bool barrier_before = false;
  };

  explicit GlRecording(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {}
  ~GlRecording() override;
  size_t num_dispatches() const override { return steps_.size(); }
  size_t num_barriers() const override { return num_barriers_; }
  std::vector<double> dispatch_ns() const override;
  std::vector<double> dispatch_start_ns() const override;

  const DeviceCore* core() const { return core_.get(); }
  std::vector<Step>& steps() { return steps_; }
  void set_num_barriers(size_t n) { num_barriers_ = n; }
  // Two timestamp queries per dispatch (before, after); empty without timestamps.
  std::vector<GLuint>& queries() { return queries_; }
  // GPU timestamps of the last run, before and after each dispatch.
  std::vector<uint64_t> timestamps() const;
  void set_timestamps(std::vector<uint64_t> timestamps);

 private:
  std::shared_ptr<DeviceCore> core_;
  std::vector<Step> steps_;
  size_t num_barriers_ = 0;
  std::vector<GLuint> queries_;
  mutable std::mutex mutex_;  // timestamps_ is written by Run and read from any thread
  std::vector<uint64_t> timestamps_;
};

}  // namespace mgd::gpu::gl
