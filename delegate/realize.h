// Realizing a compiled partition on a device: a prepared partition whose
// shared part (programs, constants) is built and uploaded once, and whose
// executions (activation memory, user-side input and output buffers, the
// recorded dispatches) are what one invoke at a time uses. Several
// executions of one shared part can exist (NewExecution).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "backends/gpu/gpu.h"
#include "delegate/compiled_model.h"
#include "interpreter/delegate.h"
#include "interpreter/interpreter.h"
#include "shaders/dialect.h"

namespace mgd {

// What every execution shares: one program per distinct source, and the
// constants in a few device buffers (packs).
struct SharedPart {
  std::vector<std::unique_ptr<gpu::Program>> programs;
  std::vector<size_t> program_of;  // per dispatch: its program
  std::vector<std::unique_ptr<gpu::Buffer>> constant_packs;
  std::vector<gpu::Binding> constant_places;  // per CompiledBuffer: where its constant lies (null buffer: none)
};

// What one execution uses alone.
struct Execution {
  std::vector<std::unique_ptr<gpu::Buffer>> buffers;  // activation memory objects, user-side buffers
  std::vector<gpu::Binding> own_places;                // per CompiledBuffer, in the execution's own buffers
  std::vector<gpu::Binding> places;                    // per CompiledBuffer, apps' bound buffers in place
  std::vector<gpu::Buffer*> inputs, outputs;           // BHWC user-side buffers, in partition order
  std::vector<gpu::Dispatch> dispatches;               // as recorded
  std::unique_ptr<gpu::Recording> recording;
  std::unique_ptr<gpu::Recording> timed_recording;     // with GPU timestamps (profile)
};

struct PreparedPartition {
  std::shared_ptr<const SharedPart> shared;
  Execution execution;
};

// The GLSL dialect of an API.
shaders::Dialect DialectOf(gpu::Api api);

struct RealizeOptions {
  gpu::Api api = gpu::Api::kVulkan;
  bool profile = false;                      // also a timestamped recording
  Logger logger;                             // how the programs were built (debug)
  std::function<void(const char*)> step;     // ends a named prepare step
  // Threads that compile programs (the GPU table's program_threads).
  size_t program_threads = SIZE_MAX;
};

// Builds the programs (filling in the SPIR-V or program binary of each
// program's first dispatch, for the cache), uploads the constants and makes
// the first execution.
absl::StatusOr<PreparedPartition> Realize(gpu::Device& device, CompiledModel& model, const RealizeOptions& options);

// An app's buffer bound in place of one of a partition's (zero-copy I/O):
// the CompiledBuffer it stands for, and the conversion dispatch it makes
// unneeded (PHWC4; -1 for BHWC).
struct BoundBuffer {
  std::shared_ptr<gpu::Buffer> buffer;  // imported
  gpu::Binding place;
  int replaces = -1;  // CompiledBuffer index
  int skip_dispatch = -1;
};

// The dispatches over an execution's buffers with `bound` in place,
// recorded (and, to profile, recorded again with timestamps).
absl::Status RecordDispatches(gpu::Device& device, const CompiledModel& model, const SharedPart& shared, Execution& execution,
                              bool profile, const std::vector<BoundBuffer>& bound);

// Another execution of a realized partition, with `bound` in place.
absl::StatusOr<Execution> NewExecution(gpu::Device& device, const CompiledModel& model, const SharedPart& shared,
                                       bool profile, const std::vector<BoundBuffer>& bound);

// A prepared partition as the interpreter runs it: uploads the inputs,
// replays the recording (the timed one while `timed_runs` is set or timing
// was asked for), downloads the outputs. With slots (several invokes in
// flight), slot 0 is the prepared execution and each other one a
// NewExecution of its own. A run that misses its deadline leaves its
// submission in the slot, waited for before the slot runs again.
class GpuKernel : public DelegateKernel {
 public:
  // `model` is the compiled partition without its constants (they are in
  // the shared part): what another execution is made from.
  GpuKernel(gpu::Device& device, PreparedPartition prepared, std::shared_ptr<const CompiledModel> model,
            std::shared_ptr<bool> timed_runs);
  // Waits for work abandoned at a deadline: the GPU may still use the
  // buffers it frees.
  ~GpuKernel() override;

  absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs) override {
    return Invoke(inputs, outputs, std::nullopt);
  }
  absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs,
                      const Deadline& deadline) override;
  absl::Status SetTiming(bool timing) override;
  std::optional<double> DeviceMs(size_t slot) const override;
  absl::Status SetSlots(size_t slots) override;
  absl::Status Start(size_t slot, const std::vector<const void*>& inputs, const Deadline& deadline,
                     const GpuFences& fences) override;
  absl::Status Finish(size_t slot, const std::vector<void*>& outputs, const Deadline& deadline) override;
  // Every slot's execution is recorded again with the buffer in place, once
  // its work in flight is done.
  absl::Status BindBuffer(bool output, size_t index, const std::optional<GpuBuffer>& buffer, GpuLayout layout) override;
  absl::StatusOr<GpuBufferNeeds> BufferNeeds(bool output, size_t index) const override;

  const PreparedPartition& prepared() const { return prepared_; }
  // Lets the delegate's records (tuning, kept tensors, profiles) see that
  // the kernel is gone.
  std::weak_ptr<bool> alive() const { return alive_; }

 private:
  struct Slot {
    std::optional<uint64_t> ticket;  // its submission, in flight or abandoned at a deadline
    gpu::Recording* submitted = nullptr;
    std::optional<double> device_ms;  // of its last completed run
  };
  Execution& ExecutionOf(size_t slot);
  // Records `e` again over its places with the bound buffers in place.
  absl::Status Rerecord(Execution& e);
  bool Bound(bool output, size_t index) const;
  std::vector<BoundBuffer> BoundList() const;
  // The copies into (out of) an execution's user-side buffers, each the
  // partition's bytes for it, but for those bound to an app's buffer.
  std::vector<gpu::Device::UploadRequest> Uploads(const Execution& e, const std::vector<const void*>& inputs) const;
  std::vector<gpu::Device::DownloadRequest> Downloads(const Execution& e, const std::vector<void*>& outputs) const;
  // The timestamped recording while timing or profiling, else the plain one.
  gpu::Recording& ReplayOf(const Execution& e) const;
  // Waits for the slot's submission by `deadline` (none: the device's run
  // timeout); a miss keeps it for the next wait.
  absl::Status WaitFor(size_t slot, const Deadline& deadline);

  gpu::Device& device_;
  PreparedPartition prepared_;
  std::shared_ptr<const CompiledModel> model_;
  std::vector<Execution> more_executions_;  // slots 1, 2, ...
  std::vector<Slot> slots_;
  // Per partition input, then per output: the app's buffer bound to it.
  std::vector<std::optional<BoundBuffer>> bound_;
  bool timing_ = false;
  std::shared_ptr<bool> timed_runs_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace mgd
