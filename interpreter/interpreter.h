// The interpreter: runs a Graph on the CPU reference kernels, with delegates
// taking over the subgraphs they support.
#pragma once

#include <functional>
#include <memory>
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
  Logger logger;                     // null: warnings go to stderr, the rest is dropped
  // Give every tensor its own bytes, so that all of them can be read after
  // Invoke (TFLite's preserve_all_tensors; mgd run --dump-tensors).
  bool preserve_all_tensors = false;
  // Invoke fails, naming the tensor and element, when a float input holds
  // NaN or Inf (before anything runs) or an output does (after the run):
  // mgd run --check-finite, MgdInterpreterOptionsSetCheckFinite.
  bool check_finite = false;
};

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

  // Runs the graph once: inputs must have been written. The inputs are left
  // as they were, so a second Invoke without writing them again gives the
  // same outputs.
  absl::Status Invoke();

  const std::vector<NodePlacement>& placements() const { return placements_; }
  const std::vector<Partition>& partitions() const { return partitions_; }
  // Bytes of the arena holding intermediate tensors.
  size_t arena_bytes() const { return arena_size_; }
  // The nodes in the order they run (a partition's nodes where it runs).
  std::vector<int> ExecutionOrder() const;

 private:
  struct Step;  // one kernel or one delegate partition in execution order
  Interpreter() = default;

  absl::Status Build(InterpreterOptions options);
  absl::Status PrepareNodes(const std::vector<int>& order);
  absl::Status PrepareNode(size_t n);
  bool Foldable(size_t n) const;  // prepared, foldable at load, constant inputs
  absl::Status Fold(size_t n);
  absl::Status ApplyDelegate(Delegate& delegate, int max_partitions);
  absl::Status PlanArena();
  absl::Status RunSteps();  // Invoke without its checks
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
  std::vector<std::unique_ptr<DelegateKernel>> delegate_kernels_;  // per partition
  std::vector<Step> steps_;
  std::unique_ptr<uint8_t[]> arena_;
  bool preserve_all_tensors_ = false;
  bool check_finite_ = false;
  size_t arena_size_ = 0;
};

}  // namespace mgd
