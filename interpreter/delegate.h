// The delegate interface: how an accelerator (the GPU delegate, or a test
// delegate) takes over parts of a graph. The interpreter asks per node whether
// it is supported, partitions the graph into maximal connected supported
// subgraphs without creating cycles, and hands each one to Prepare. A failed
// Prepare leaves that partition on the CPU, unless the error came from
// RefuseModel: then the interpreter is not created at all.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/gpu_interop.h"
#include "interpreter/kernel.h"
#include "model/graph.h"

namespace mgd {

struct NodeSupport {
  bool supported = false;
  std::string reason;  // why not, when not supported
};

// A connected set of supported nodes the delegate runs as one kernel.
struct Partition {
  std::vector<int> nodes;    // in execution order
  std::vector<int> inputs;   // non-constant tensors read from outside
  std::vector<int> outputs;  // tensors read outside the partition or graph outputs
};

// What a partition is expected to cost per run on its delegate, against
// its nodes on the CPU's kernels (InterpreterOptions::partition_by_cost).
struct PartitionCost {
  double delegate_ms = 0;  // the work and its dispatches
  double transfer_ms = 0;  // the submission, inputs in and outputs back
  double cpu_ms = 0;       // its nodes on the CPU instead
  bool pays() const { return delegate_ms + transfer_ms < cpu_ms; }
};

// When a run must be done by (InvokeOptions::timeout); none: no limit.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
// `timeout` after `start`; none without a timeout or past a year.
Deadline DeadlineAfter(std::chrono::steady_clock::time_point start, const std::optional<std::chrono::nanoseconds>& timeout);
// DeadlineExceeded ("deadline exceeded " + where) once `deadline` passed.
absl::Status Exceeded(const Deadline& deadline, const std::string& where);

// How the bytes of an app's buffer bound to a tensor are laid out: the
// tensor's own (BHWC, float32), or the GPU delegate's PHWC4 (channels in
// slices of 4, zero-padded; float16 when the delegate stores fp16), which
// skips the conversion to it.
enum class GpuLayout { kBhwc, kPhwc4 };
const char* GpuLayoutName(GpuLayout layout);

// What a buffer bound to a partition input or output must hold.
struct GpuBufferNeeds {
  uint64_t bhwc_bytes = 0;
  uint64_t phwc4_bytes = 0;
  bool phwc4_half = false;  // PHWC4 elements are float16
};

class DelegateKernel {
 public:
  virtual ~DelegateKernel() = default;
  // `inputs` and `outputs` follow the Partition's order.
  virtual absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs) = 0;
  // Invoke by a deadline: work still running then fails the run with
  // DeadlineExceeded and is abandoned (a kernel that cannot stop it lets it
  // finish before that slot is used again). By default the deadline is not
  // looked at (the interpreter checks it between steps).
  virtual absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs,
                              const Deadline& /*deadline*/) {
    return Invoke(inputs, outputs);
  }

  // Timing (InterpreterOptions::measure_timing): after SetTiming(true) the
  // kernel times its work on the device, and DeviceMs(slot) is that time for
  // the last run completed in `slot` (slot 0: Invoke's). Unknown (nullopt)
  // where the device has no timestamps or the kernel cannot say.
  virtual absl::Status SetTiming(bool /*timing*/) { return absl::UnimplementedError("no timing"); }
  virtual std::optional<double> DeviceMs(size_t /*slot*/) const { return std::nullopt; }

  // Several invokes in flight (Interpreter::InvokeAsync), for kernels that
  // can: SetSlots(n) gives the kernel n sets of what one invoke uses alone
  // (slot 0 is Invoke's own); Start(slot, inputs, deadline) reads the inputs
  // (each its tensor's bytes, in the Partition's order) and begins the work
  // (after the slot's abandoned work, if any, by the deadline); Finish
  // (slot, outputs, deadline) waits for it and writes the outputs (a missed
  // deadline as for Invoke). Start or Invoke on one thread may meet Finish
  // of another slot on a second; a slot is Finished before it is Started
  // again. By default no slots: the interpreter then runs async invokes one
  // after another.
  // `fences`: GPU sync objects the work waits on and signals (fenced
  // invokes; kernels without them fail on any).
  virtual absl::Status SetSlots(size_t /*slots*/) { return absl::UnimplementedError("no slots"); }
  virtual absl::Status Start(size_t /*slot*/, const std::vector<const void*>& /*inputs*/, const Deadline& /*deadline*/,
                             const GpuFences& /*fences*/) {
    return absl::UnimplementedError("no slots");
  }
  virtual absl::Status Finish(size_t /*slot*/, const std::vector<void*>& /*outputs*/, const Deadline& /*deadline*/) {
    return absl::UnimplementedError("no slots");
  }

  // Zero-copy I/O: the app's GPU buffer in place of host memory for the
  // partition's input (or output) `index`, laid out as `layout`; nullopt
  // unbinds. Start and Invoke then neither read nor write that tensor's
  // host bytes. The buffer must outlive the binding.
  virtual absl::Status BindBuffer(bool /*output*/, size_t /*index*/, const std::optional<GpuBuffer>& /*buffer*/,
                                  GpuLayout /*layout*/) {
    return absl::UnimplementedError("this delegate takes no GPU buffers");
  }
  virtual absl::StatusOr<GpuBufferNeeds> BufferNeeds(bool /*output*/, size_t /*index*/) const {
    return absl::UnimplementedError("this delegate takes no GPU buffers");
  }
};

class Delegate {
 public:
  virtual ~Delegate() = default;
  virtual std::string name() const = 0;
  // `graph` is the graph as the interpreter runs it: constant-input
  // DEQUANTIZE/DENSIFY nodes are already folded into constant tensors.
  virtual NodeSupport IsNodeSupported(const Graph& graph, int node_index) = 0;
  virtual absl::StatusOr<std::unique_ptr<DelegateKernel>> Prepare(const Graph& graph, const Partition& partition) = 0;
  // The expected cost of running `partition` here (partitioning by cost);
  // an error when the delegate cannot say, and the partition is kept.
  virtual absl::StatusOr<PartitionCost> EstimateCost(const Graph& /*graph*/, const Partition& /*partition*/) {
    return absl::UnimplementedError("no cost estimates");
  }
  // Whether it runs an int8 model's ops as float ops that round as the
  // integer kernels do (passes/int8_as_float.h): the interpreter then
  // rewrites such a graph before asking IsNodeSupported, and runs the
  // nodes left to the CPU that way too.
  virtual bool RunsInt8AsFloat() const { return false; }
};

// For a Prepare that must not fall back to the CPU: the model asks for this
// delegate as it is and nothing else will do (a model compiled offline for
// another GPU). Interpreter creation fails with `message`.
absl::Status RefuseModel(const std::string& message);
bool RefusesModel(const absl::Status& status);

// Splits the supported nodes among `candidates` (a topological order of the
// nodes to schedule) into partitions. The result is cycle-free: no path
// leaves a partition and comes back into it. With max_partitions > 0 only the
// largest ones are kept.
std::vector<Partition> PartitionGraph(const Graph& graph, const std::vector<int>& order,
                                      const std::vector<bool>& supported, int max_partitions);

}  // namespace mgd
