#include "delegate/compile_only.h"

#include "delegate/gpu_delegate.h"

namespace mgd {
namespace {

class RefusingKernel : public DelegateKernel {
 public:
  absl::Status Invoke(const std::vector<TensorRef*>&, const std::vector<TensorRef*>&) override {
    return absl::FailedPreconditionError("a compile-only delegate's partition cannot run");
  }
};

}  // namespace

NodeSupport CompileOnlyDelegate::IsNodeSupported(const Graph& graph, int node_index) {
  return GpuNodeSupport(graph, node_index);
}

absl::StatusOr<std::unique_ptr<DelegateKernel>> CompileOnlyDelegate::Prepare(const Graph& graph,
                                                                              const Partition& partition) {
  auto compiled = CompilePartition(graph, partition, options_);
  if (!compiled.ok()) return compiled.status();
  compiled_.push_back(std::move(*compiled));
  partitions_.push_back(partition);
  return std::unique_ptr<DelegateKernel>(new RefusingKernel());
}

}  // namespace mgd
