// The interpreter: runs a Graph on the CPU reference kernels, with delegates
// taking over the subgraphs they support.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "interpreter/delegate.h"
#include "interpreter/kernel.h"
#include "interpreter/op_resolver.h"
#include "model/graph.h"

namespace mgd {

enum class LogLevel { kDebug, kInfo, kWarning, kError };
using Logger = std::function<void(LogLevel, const std::string&)>;

struct InterpreterOptions {
  OpResolver resolver;
  std::vector<Delegate*> delegates;  // not owned; applied in order
  int max_delegated_partitions = 0;  // 0: no limit
  // Keep a partition on the delegate only where its expected cost
  // (Delegate::EstimateCost: the work, its dispatches and the transfers to
  // and from the CPU) is below its nodes' on the CPU. Off by default, as in
  // TFLite: a small model would go to the CPU whole.
  bool partition_by_cost = false;
  Logger logger;                     // null: warnings go to stderr, the rest is dropped
  // Give every tensor its own bytes, so that all of them can be read after
  // Invoke (TFLite's preserve_all_tensors; mgd run --dump-tensors).
  bool preserve_all_tensors = false;
  // Invoke fails, naming the tensor and element, when a float input holds
  // NaN or Inf (before anything runs) or an output does (after the run):
  // mgd run --check-finite, MgdInterpreterOptionsSetCheckFinite.
  bool check_finite = false;
  // How many InvokeAsync calls may be in flight at once (at least 1); one
  // more waits for the oldest to complete. With 2, the host uploads frame
  // N+1 while the GPU computes frame N. A delegate keeps this many extra
  // sets of its per-invoke buffers once InvokeAsync is first used.
  int max_in_flight = 2;
  // Time each invoke on the device too (NNAPI's measureTiming): delegates
  // replay timestamped work, which costs a little. Without it InvokeTiming
  // says only the wall times.
  bool measure_timing = false;
};

// What one invoke took (NNAPI's timing): in all, inside delegate kernels
// (uploads, device work, downloads), and on the device, unknown (nullopt)
// without measure_timing, without delegates, without device timestamps or where a delegate
// cannot say.
struct InvokeTiming {
  double total_ms = 0;
  double in_delegates_ms = 0;
  std::optional<double> device_ms;
};

// Per invoke: a limit, and where its timing goes.
struct InvokeOptions {
  // A run not done this long after the call fails with DeadlineExceeded
  // ("deadline exceeded"), between steps or while the device works (whose
  // work is then abandoned: it completes in the background, and the next
  // invoke waits for it before reusing its buffers). None: no limit.
  std::optional<std::chrono::nanoseconds> timeout;
  InvokeTiming* timing = nullptr;  // filled when the run succeeded
  // Fenced invokes (base/gpu_interop.h): the GPU work waits for `wait` and
  // signals `signal` (and makes `signal_new`), so that an app's producer and
  // consumer on the GPU chain with it without the host waiting. The graph
  // must run whole in one delegated GPU partition. The objects are those of
  // the delegate's device (GpuDelegate::device().interop()). `signal_new`
  // is filled in before Invoke or InvokeAsync returns.
  GpuFences fences;
};

// A model input's bytes in host memory, for the invokes that take buffers.
struct InputBytes {
  const void* data = nullptr;
  size_t bytes = 0;
};
// Where a model output goes.
struct OutputBytes {
  void* data = nullptr;
  size_t bytes = 0;
};

// The completion of one InvokeAsync: wait for it or ask whether it is done.
// Shared by the caller and the interpreter; it may outlive both.
class InvokeEvent {
 public:
  void Wait() const;
  // False when `timeout` passed first.
  bool WaitFor(std::chrono::nanoseconds timeout) const;
  bool done() const;
  // The invoke's result, once done (Unavailable before).
  absl::Status status() const;
  // Its timing, once done and successful.
  InvokeTiming timing() const;

  void Complete(absl::Status status, const InvokeTiming& timing);  // the interpreter's

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_;
  std::optional<absl::Status> status_;
  InvokeTiming timing_;
};

using InvokeCallback = std::function<void(const absl::Status&)>;

// Where a node runs, for `mgd ops` and reports.
struct NodePlacement {
  enum class Where { kCpu, kDelegate, kFolded } where = Where::kCpu;
  int partition = -1;   // index into partitions() when delegated
  std::string reason;   // why it is not delegated (or the delegate's name)
};

class Interpreter {
 public:
  // Validates the graph, resolves every op (an unresolved custom op is an
  // error), folds constant DEQUANTIZE/DENSIFY, prepares every kernel (shape
  // checks), applies the delegates, and plans the tensor arena.
  static absl::StatusOr<std::unique_ptr<Interpreter>> Create(Graph graph, InterpreterOptions options);
  ~Interpreter();

  const Graph& graph() const { return graph_; }
  size_t num_inputs() const { return graph_.inputs.size(); }
  size_t num_outputs() const { return graph_.outputs.size(); }
  TensorRef& input(size_t i) { return tensors_[static_cast<size_t>(graph_.inputs[i])]; }
  const TensorRef& output(size_t i) const { return tensors_[static_cast<size_t>(graph_.outputs[i])]; }
  const TensorRef& tensor(int index) const { return tensors_[static_cast<size_t>(index)]; }

  // Threads: every Invoke, Invoke with buffers and InvokeAsync may be called
  // from any thread, also at once; runs of the graph take turns (an
  // interpreter's CPU kernels and arena serve one run at a time), except
  // that a fully delegated graph's async invokes overlap on the GPU. Each
  // result is bit-identical to a single-threaded run's. Reading input and
  // output tensors while another thread invokes is a race of the caller's:
  // threads sharing an interpreter pass their own buffers (the overloads
  // below). Create and delete an interpreter on any thread; delete it only
  // when no call on it is running (pending async invokes complete first).

  // Runs the graph once: inputs must have been written. The inputs are left
  // as they were, so a second Invoke without writing them again gives the
  // same outputs.
  absl::Status Invoke();
  absl::Status Invoke(const InvokeOptions& options);
  // Copies `inputs` in (one per model input, each exactly its tensor's
  // bytes), runs the graph and copies the outputs out, as one turn: what
  // threads sharing an interpreter call. Leaves the interpreter's input and
  // output tensors with this run's data.
  absl::Status Invoke(const std::vector<InputBytes>& inputs, const std::vector<OutputBytes>& outputs,
                      const InvokeOptions& options = {});
  // Returns at once (or once fewer than max_in_flight invokes are pending):
  // the inputs are read before it returns, the outputs are written before
  // the event completes. `done`, when given, is called first, on mgd's
  // completion thread, in the order the invokes were made; it may invoke
  // again but must not delete the interpreter. Where the graph is one
  // delegated partition whose kernel has slots (mgd's GPU delegate), the
  // invokes overlap: frame N+1's inputs are uploaded while frame N computes.
  // Otherwise they run one after another on that thread, through the
  // interpreter's tensors as Invoke with buffers does. An error in the
  // arguments is returned here; one of the run completes the event.
  absl::StatusOr<std::shared_ptr<InvokeEvent>> InvokeAsync(const std::vector<InputBytes>& inputs,
                                                           std::vector<OutputBytes> outputs,
                                                           InvokeCallback done = nullptr,
                                                           const InvokeOptions& options = {});

  // Sets every variable tensor (the state an LSTM keeps from one invoke to
  // the next) back to zero, as TFLite's ResetVariableTensors: what an app
  // calls between two independent sequences. Takes its turn with invokes.
  void ResetVariableTensors();

  // Zero-copy I/O: the app's GPU buffer (base/gpu_interop.h) in place of
  // host memory for graph input or output tensor `tensor`, laid out as
  // `layout`; nullopt unbinds. The tensor must be read (written) only by one
  // delegated partition whose delegate takes GPU buffers. Invokes then
  // neither read nor write its host bytes: the invokes that take buffers
  // accept a null, empty one for it, and check_finite passes over it.
  // Invokes in flight on one buffer take turns on the GPU; the app must not
  // touch the buffer until the invoke has signalled or completed. Waits for
  // async invokes in flight; call it while no other invoke is being made.
  // The buffer must outlive the binding (or the interpreter).
  absl::Status BindBuffer(int tensor, const std::optional<GpuBuffer>& buffer, GpuLayout layout = GpuLayout::kBhwc);
  // What a buffer bound to `tensor` must hold, per layout.
  absl::StatusOr<GpuBufferNeeds> BufferNeeds(int tensor) const;
  bool bound(int tensor) const { return bound_[static_cast<size_t>(tensor)]; }

  const std::vector<NodePlacement>& placements() const { return placements_; }
  const std::vector<Partition>& partitions() const { return partitions_; }
  // Per partition its expected cost, where partitioning by cost asked the
  // delegate and it could say.
  const std::vector<std::optional<PartitionCost>>& partition_costs() const { return partition_costs_; }
  // Bytes of the arena holding intermediate tensors.
  size_t arena_bytes() const { return arena_size_; }
  // Whether a delegate runs this int8 graph as float ops that round as it
  // does (Delegate::RunsInt8AsFloat): graph() is then that float graph.
  bool int8_as_float() const { return int8_as_float_; }
  // The nodes in the order they run (a partition's nodes where it runs).
  std::vector<int> ExecutionOrder() const;

 private:
  struct Step {  // one kernel or one delegate partition in execution order
    int node = -1;       // a CPU kernel
    int partition = -1;  // or a delegate partition
  };
  Interpreter() = default;

  absl::Status Build(InterpreterOptions options);
  absl::Status PrepareNodes(const std::vector<int>& order);
  absl::Status PrepareNode(size_t n);
  bool Foldable(size_t n) const;  // prepared, foldable at load, constant inputs
  absl::Status Fold(size_t n);
  absl::Status ApplyDelegate(Delegate& delegate, int max_partitions, bool by_cost);
  absl::Status PlanArena();
  // Invoke without its checks or turn; the delegates' share of the time
  // added to `timing`.
  absl::Status RunSteps(const Deadline& deadline, InvokeTiming& timing, const GpuFences& fences);
  absl::Status CheckedRun(const Deadline& deadline, InvokeTiming* timing, const GpuFences& fences);  // Invoke in its turn
  // The one delegated partition that runs the whole graph, for fenced
  // invokes; an error saying why not otherwise.
  absl::StatusOr<size_t> WholeGraphPartition() const;
  // The partition that alone reads (writes) graph input (output) `tensor`,
  // whether it is an output there, and its index among the partition's.
  struct BindingPlace {
    size_t partition = 0;
    bool output = false;
    size_t index = 0;
  };
  absl::StatusOr<BindingPlace> PlaceOfBinding(int tensor) const;
  void DrainAsync();  // waits until no async invoke is in flight
  // Buffers for the invokes that take them: counts, sizes, pointers.
  absl::Status CheckBuffers(const std::vector<InputBytes>& inputs, const std::vector<OutputBytes>& outputs) const;
  // The first NaN or Inf of a float tensor, as an error naming it.
  static absl::Status CheckFinite(const TensorRef& t, const char* role, size_t index);
  struct Async;  // invoke_async.cc: the in-flight invokes and their thread
  absl::Status StartAsync();
  void CompleteAsync();  // the completion thread's loop
  void StopAsync();      // completes what is in flight, ends the thread
  void Log(LogLevel level, const std::string& message) const;

  Graph graph_;
  OpResolver resolver_;
  Logger logger_;
  std::vector<TensorRef> tensors_;
  std::vector<std::vector<uint8_t>> folded_data_;  // storage of folded constants
  std::vector<std::unique_ptr<Kernel>> kernels_;   // per node (null when folded)
  std::vector<KernelContext> contexts_;            // per node
  std::vector<NodePlacement> placements_;
  std::vector<Partition> partitions_;
  std::vector<std::optional<PartitionCost>> partition_costs_;  // as partitions_
  std::vector<std::unique_ptr<DelegateKernel>> delegate_kernels_;  // per partition
  std::vector<Step> steps_;
  std::vector<bool> bound_;  // per tensor: an app's GPU buffer is bound to it
  std::unique_ptr<uint8_t[]> arena_;
  bool preserve_all_tensors_ = false;
  bool check_finite_ = false;
  size_t arena_size_ = 0;
  bool int8_as_float_ = false;
  int max_in_flight_ = 2;
  bool measure_timing_ = false;
  std::mutex run_mutex_;  // one run of the steps at a time
  std::shared_ptr<Async> async_;  // made by the first InvokeAsync that can (shared: Async is incomplete here)
  std::mutex async_start_mutex_;
  bool async_started_ = false;  // under async_start_mutex_; async_ is set for good once it is
};

}  // namespace mgd
