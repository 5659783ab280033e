// The interpreter's side of apps' GPU objects: which delegated partition a
// bound buffer or a fenced invoke goes to, and the checks that keep the
// host's copies of bound tensors out of the way.
#include <fmt/format.h>

#include <algorithm>

#include "interpreter/interpreter.h"
#include "model/status_macros.h"

namespace mgd {

absl::StatusOr<size_t> Interpreter::WholeGraphPartition() const {
  if (steps_.size() == 1 && steps_[0].partition >= 0) return static_cast<size_t>(steps_[0].partition);
  size_t on_cpu = 0;
  for (const Step& step : steps_) on_cpu += step.node >= 0 ? 1 : 0;
  return absl::FailedPreconditionError(fmt::format(
      "fenced invokes need the whole graph in one delegated GPU partition; this graph runs as {} partition(s) and {} "
      "node(s) on the CPU (mgd ops says why)", partitions_.size(), on_cpu));
}

absl::StatusOr<Interpreter::BindingPlace> Interpreter::PlaceOfBinding(int tensor) const {
  if (tensor < 0 || static_cast<size_t>(tensor) >= tensors_.size()) {
    return absl::InvalidArgumentError(fmt::format("tensor {} does not exist (the graph has {})", tensor, tensors_.size()));
  }
  const std::string name = fmt::format("tensor {} '{}'", tensor, tensors_[static_cast<size_t>(tensor)].name);
  const bool is_input = std::count(graph_.inputs.begin(), graph_.inputs.end(), tensor) > 0;
  const bool is_output = std::count(graph_.outputs.begin(), graph_.outputs.end(), tensor) > 0;
  if (is_input == is_output) {
    return absl::InvalidArgumentError(fmt::format("{} is not {} of the graph: only a graph input or output is bound to a GPU buffer",
                                                  name, is_input ? "only an input or only an output" : "an input or output"));
  }
  for (size_t p = 0; p < partitions_.size(); ++p) {
    const std::vector<int>& io = is_input ? partitions_[p].inputs : partitions_[p].outputs;
    auto it = std::find(io.begin(), io.end(), tensor);
    if (it == io.end()) continue;
    // Nothing else may need the host's bytes: no node outside the partition
    // reads the tensor.
    const std::vector<int>& nodes = partitions_[p].nodes;
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      if (std::count(nodes.begin(), nodes.end(), static_cast<int>(n)) > 0) continue;
      const std::vector<int>& reads = graph_.nodes[n].inputs;
      if (std::count(reads.begin(), reads.end(), tensor) > 0) {
        return absl::FailedPreconditionError(fmt::format("{} is also read by node {} ({}), outside the GPU partition: it "
                                                         "needs the tensor in host memory", name, n, OpName(graph_.nodes[n].op)));
      }
    }
    return BindingPlace{p, is_output, static_cast<size_t>(it - io.begin())};
  }
  return absl::FailedPreconditionError(fmt::format("{} is not {} by a delegated partition (mgd ops says where its nodes run)",
                                                   name, is_input ? "read" : "written"));
}

absl::StatusOr<GpuBufferNeeds> Interpreter::BufferNeeds(int tensor) const {
  MGD_ASSIGN_OR_RETURN(const BindingPlace place, PlaceOfBinding(tensor));
  return delegate_kernels_[place.partition]->BufferNeeds(place.output, place.index);
}

absl::Status Interpreter::BindBuffer(int tensor, const std::optional<GpuBuffer>& buffer, GpuLayout layout) {
  MGD_ASSIGN_OR_RETURN(const BindingPlace place, PlaceOfBinding(tensor));
  DrainAsync();
  std::lock_guard<std::mutex> turn(run_mutex_);
  absl::Status bound = delegate_kernels_[place.partition]->BindBuffer(place.output, place.index, buffer, layout);
  if (!bound.ok()) {
    return absl::Status(bound.code(), fmt::format("binding a GPU buffer to tensor {} '{}': {}", tensor,
                                                  tensors_[static_cast<size_t>(tensor)].name, bound.message()));
  }
  bound_[static_cast<size_t>(tensor)] = buffer.has_value();
  return absl::OkStatus();
}

}  // namespace mgd
