// A delegate that claims what the GPU delegate claims and compiles each
// partition as it would, but needs no GPU and runs nothing: for looking at
// what prepare makes (mgd plan, tests of the memory plan). Its kernels refuse
// to run.
#pragma once

#include <string>
#include <vector>

#include "delegate/compiler.h"
#include "interpreter/delegate.h"

namespace mgd {

class CompileOnlyDelegate : public Delegate {
 public:
  explicit CompileOnlyDelegate(CompileOptions options) : options_(std::move(options)) {}

  std::string name() const override { return "gpu-compile-only"; }
  NodeSupport IsNodeSupported(const Graph& graph, int node_index) override;
  absl::StatusOr<std::unique_ptr<DelegateKernel>> Prepare(const Graph& graph, const Partition& partition) override;

  // One per prepared partition, in the order the interpreter prepared them.
  const std::vector<CompiledModel>& compiled() const { return compiled_; }
  const std::vector<Partition>& partitions() const { return partitions_; }

 private:
  CompileOptions options_;
  std::vector<CompiledModel> compiled_;
  std::vector<Partition> partitions_;
};

}  // namespace mgd
