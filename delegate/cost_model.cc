#include "delegate/cost_model.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "delegate/capabilities.h"
#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"
#include "ops/registry.h"

namespace mgd {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

// The median of `runs` invokes after two to warm up, in ms.
absl::StatusOr<double> MedianMs(Interpreter& interpreter, int runs) {
  std::vector<double> ms;
  for (int i = 0; i < 2 + runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = interpreter.Invoke(); !s.ok()) return s;
    if (i >= 2) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Median ms of `graph` through `delegate` (null: on the CPU), which must
// take it whole.
absl::StatusOr<double> Time(const Graph& graph, Delegate* delegate, int runs) {
  InterpreterOptions options;
  if (delegate != nullptr) options.delegates.push_back(delegate);
  options.logger = [](LogLevel, const std::string&) {};
  absl::StatusOr<std::unique_ptr<Interpreter>> interpreter = Interpreter::Create(graph, std::move(options));
  if (!interpreter.ok()) return interpreter.status();
  if (delegate != nullptr && (*interpreter)->partitions().size() != 1) {
    return absl::InternalError("a cost measurement's graph did not run on the GPU whole");
  }
  return MedianMs(**interpreter, runs);
}

// x -> `count` nodes of `op` in a chain over `shape` (ADD adds a constant 1).
Graph Chain(OpKind op, const Shape& shape, int count) {
  Graph g;
  auto tensor = [&]() {
    g.tensors.push_back(Tensor{});
    g.tensors.back().shape = shape;
    return static_cast<int>(g.tensors.size()) - 1;
  };
  int x = tensor();
  g.inputs = {x};
  for (int i = 0; i < count; ++i) {
    Node n;
    n.op = op;
    n.inputs = {x};
    if (op == OpKind::kAdd) {
      g.tensors.push_back(Tensor{});
      g.tensors.back().shape = {1};
      std::vector<uint8_t> one(4);
      const float v = 1.0f;
      std::memcpy(one.data(), &v, 4);
      g.tensors.back().data = std::move(one);
      g.tensors.back().is_constant = true;
      n.inputs.push_back(static_cast<int>(g.tensors.size()) - 1);
    }
    x = tensor();
    n.outputs = {x};
    g.nodes.push_back(std::move(n));
  }
  g.outputs = {x};
  return g;
}

double Bytes(const Graph& graph, const std::vector<int>& tensors) {
  double sum = 0;
  for (int t : tensors) {
    const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
    sum += static_cast<double>(NumElements(tensor.shape)) * static_cast<double>(ElementSize(tensor.type));
  }
  return sum;
}

}  // namespace

double EstimatedFlops(const Graph& graph, const Node& node) {
  const ops::OpDefinition* definition = ops::FindBuiltin(node.op);
  if (definition != nullptr && definition->flops != nullptr) return definition->flops(graph, node);
  if (node.outputs.empty()) return 0;
  const Shape& out = graph.tensors[static_cast<size_t>(node.outputs[0])].shape;
  const double elements = static_cast<double>(NumElements(out));
  // Each weight is used once per output row (a pixel of a convolution, a
  // row of a dense layer, a step of an LSTM); each activation input is read
  // once per output element.
  const double rows = out.empty() || out.back() == 0 ? 1.0 : elements / static_cast<double>(out.back());
  double weights = 0, activations = 0;
  for (int t : node.inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
    if (tensor.is_constant) {
      weights += static_cast<double>(NumElements(tensor.shape));
    } else {
      activations += 1;
    }
  }
  return 2.0 * weights * rows + elements * std::max(1.0, activations);
}

absl::StatusOr<CostRates> MeasureCostRates(GpuDelegate& delegate) {
  constexpr int kRuns = 5;
  const Graph reference = ReferenceWorkload();
  const Graph tiny = Chain(OpKind::kAdd, {1, 4}, 1);
  const Graph big = Chain(OpKind::kAdd, {1, 128, 128, 32}, 1);  // 2 MiB in, 2 MiB out
  const Graph chain = Chain(OpKind::kSoftmax, {1, 4}, 8);
  absl::StatusOr<double> cpu = Time(reference, nullptr, 3);
  if (!cpu.ok()) return cpu.status();
  absl::StatusOr<double> gpu = Time(reference, &delegate, kRuns);
  if (!gpu.ok()) return gpu.status();
  absl::StatusOr<double> one = Time(tiny, &delegate, kRuns);
  if (!one.ok()) return one.status();
  absl::StatusOr<double> copy = Time(big, &delegate, kRuns);
  if (!copy.ok()) return copy.status();
  absl::StatusOr<double> eight = Time(chain, &delegate, kRuns);
  if (!eight.ok()) return eight.status();
  CostRates r;
  const double mflops = ReferenceWorkloadFlops() / 1e6;
  r.cpu_ms_per_mflop = *cpu / mflops;
  r.partition_ms = *one;
  r.dispatch_ms = std::max(0.0, (*eight - *one) / 7);
  r.ms_per_mib = std::max(0.0, (*copy - *one) / 4);
  const double reference_mib = 2 * Bytes(reference, reference.inputs) / kMib;
  r.gpu_ms_per_mflop = std::max(0.0, *gpu - *one - 2 * r.dispatch_ms - reference_mib * r.ms_per_mib) / mflops;
  return r;
}

PartitionCost EstimatePartitionCost(const Graph& graph, const Partition& partition, const CostRates& rates) {
  double mflops = 0;
  for (int n : partition.nodes) mflops += EstimatedFlops(graph, graph.nodes[static_cast<size_t>(n)]) / 1e6;
  PartitionCost cost;
  cost.cpu_ms = mflops * rates.cpu_ms_per_mflop;
  cost.delegate_ms = mflops * rates.gpu_ms_per_mflop +
                     static_cast<double>(std::max<size_t>(partition.nodes.size(), 1) - 1) * rates.dispatch_ms;
  cost.transfer_ms =
      rates.partition_ms + (Bytes(graph, partition.inputs) + Bytes(graph, partition.outputs)) / kMib * rates.ms_per_mib;
  return cost;
}

}  // namespace mgd
