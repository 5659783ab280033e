#include "interpreter/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <numeric>

#include "base/parallel.h"
#include "model/fp16.h"
#include "model/status_macros.h"
#include "model/validator.h"
#include "passes/int8_as_float.h"

namespace mgd {

namespace {
constexpr size_t kTensorAlignment = 64;
constexpr size_t kMaxArenaBytes = size_t{4} << 30;

bool FoldableAtLoad(OpKind op) { return op == OpKind::kDequantize || op == OpKind::kDensify; }
}  // namespace


Interpreter::~Interpreter() { StopAsync(); }

absl::StatusOr<std::unique_ptr<Interpreter>> Interpreter::Create(Graph graph, InterpreterOptions options) {
  MGD_RETURN_IF_ERROR(ValidateGraph(graph));
  std::unique_ptr<Interpreter> interpreter(new Interpreter());
  const bool int8_as_float =
      std::any_of(options.delegates.begin(), options.delegates.end(),
                  [](const Delegate* d) { return d != nullptr && d->RunsInt8AsFloat(); }) &&
      HasInt8Activations(graph);
  if (int8_as_float) {
    MGD_ASSIGN_OR_RETURN(graph, Int8AsFloat(graph));
  }
  graph = WithHybridFiltersDequantized(std::move(graph));
  interpreter->int8_as_float_ = int8_as_float;
  interpreter->graph_ = std::move(graph);
  MGD_RETURN_IF_ERROR(interpreter->Build(std::move(options)));
  return interpreter;
}

void Interpreter::Log(LogLevel level, const std::string& message) const {
  if (logger_) {
    logger_(level, message);
  } else if (level >= LogLevel::kWarning) {
    std::fprintf(stderr, "mgd: warning: %s\n", message.c_str());
  }
}

absl::Status Interpreter::Build(InterpreterOptions options) {
  resolver_ = std::move(options.resolver);
  logger_ = std::move(options.logger);
  preserve_all_tensors_ = options.preserve_all_tensors;
  check_finite_ = options.check_finite;
  if (options.max_in_flight < 1) {
    return absl::InvalidArgumentError(fmt::format("max_in_flight is {}; at least 1", options.max_in_flight));
  }
  max_in_flight_ = options.max_in_flight;
  measure_timing_ = options.measure_timing;
  const size_t num_tensors = graph_.tensors.size();
  const size_t num_nodes = graph_.nodes.size();

  tensors_.resize(num_tensors);
  bound_.assign(num_tensors, false);
  for (size_t i = 0; i < num_tensors; ++i) {
    Tensor& t = graph_.tensors[i];
    TensorRef& r = tensors_[i];
    r.index = static_cast<int>(i);
    r.name = t.name;
    r.type = t.type;
    r.shape = t.shape;
    r.is_constant = t.is_constant;
    r.bytes = t.is_constant ? t.data.size() : static_cast<size_t>(NumElements(t.shape)) * ElementSize(t.type);
    // Kernels read constants and never write them (TensorRef's pointer is
    // writable for the tensors they compute).
    r.data = t.is_constant ? const_cast<uint8_t*>(t.data.data()) : nullptr;
  }

  kernels_.resize(num_nodes);
  contexts_.resize(num_nodes);
  placements_.assign(num_nodes, NodePlacement{});
  for (size_t n = 0; n < num_nodes; ++n) {
    const Node& node = graph_.nodes[n];
    if (node.op == OpKind::kCustom) {
      auto& custom = std::get<CustomAttributes>(graph_.nodes[n].attributes);
      const CustomOp* op = resolver_.FindCustom(custom.name, node.version);
      if (op == nullptr) {
        return absl::NotFoundError(fmt::format(
            "{}: custom op '{}' (version {}) is not registered; register it with "
            "MgdInterpreterOptionsAddCustomOp or OpResolver::AddCustom",
            NodeLabel(graph_, static_cast<int>(n)), custom.name, node.version));
      }
      // mgd's own custom ops read their options once, here (a program's
      // kernel that replaces one gets the bytes only).
      custom.decoded = nullptr;
      if (op->decode != nullptr) {
        auto decoded = op->decode(custom.options);
        if (!decoded.ok()) {
          return absl::InvalidArgumentError(
              fmt::format("{}: {}", NodeLabel(graph_, static_cast<int>(n)), decoded.status().message()));
        }
        custom.decoded = std::make_shared<const OpAttributes>(*std::move(decoded));
      }
      kernels_[n] = op->factory(node);
      if (kernels_[n] == nullptr) {
        return absl::InternalError(fmt::format("{}: the custom op's factory returned no kernel", NodeLabel(graph_, static_cast<int>(n))));
      }
    } else {
      kernels_[n] = CreateBuiltinKernel(node);
    }
    KernelContext& ctx = contexts_[n];
    ctx.graph = &graph_;
    ctx.node_index = static_cast<int>(n);
    ctx.node = &graph_.nodes[n];
    for (int t : node.inputs) ctx.inputs.push_back(t == kNoTensor ? nullptr : &tensors_[static_cast<size_t>(t)]);
    for (int t : node.outputs) ctx.outputs.push_back(&tensors_[static_cast<size_t>(t)]);
  }

  MGD_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(graph_));
  MGD_RETURN_IF_ERROR(PrepareNodes(order));

  for (Delegate* delegate : options.delegates) {
    if (delegate != nullptr) MGD_RETURN_IF_ERROR(ApplyDelegate(*delegate, options.max_delegated_partitions, options.partition_by_cost));
  }
  if (measure_timing_) {
    for (auto& kernel : delegate_kernels_) {
      absl::Status s = kernel->SetTiming(true);
      if (!s.ok() && !absl::IsUnimplemented(s)) return s;  // unimplemented: its device time is unknown
    }
  }

  // Steps: CPU nodes and partitions, topologically sorted as units.
  std::vector<int> unit_of_node(num_nodes, -1);  // unit id: partition p -> p, node n -> P + n
  const int num_partitions = static_cast<int>(partitions_.size());
  for (size_t n = 0; n < num_nodes; ++n) {
    if (placements_[n].where == NodePlacement::Where::kFolded) continue;
    unit_of_node[n] = placements_[n].where == NodePlacement::Where::kDelegate ? placements_[n].partition
                                                                              : num_partitions + static_cast<int>(n);
  }
  std::vector<int> producer(num_tensors, -1);
  for (size_t n = 0; n < num_nodes; ++n) {
    for (int t : graph_.nodes[n].outputs) producer[static_cast<size_t>(t)] = static_cast<int>(n);
  }
  const size_t num_units = static_cast<size_t>(num_partitions) + num_nodes;
  std::vector<std::vector<int>> successors(num_units);
  std::vector<int> pending(num_units, 0);
  std::vector<int> position(num_units, INT32_MAX);  // earliest topological position, for a stable order
  for (size_t i = 0; i < order.size(); ++i) {
    const int u = unit_of_node[static_cast<size_t>(order[i])];
    if (u >= 0) position[static_cast<size_t>(u)] = std::min(position[static_cast<size_t>(u)], static_cast<int>(i));
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    const int u = unit_of_node[n];
    if (u < 0) continue;
    for (int t : graph_.nodes[n].inputs) {
      if (t == kNoTensor || producer[static_cast<size_t>(t)] < 0) continue;
      const int pu = unit_of_node[static_cast<size_t>(producer[static_cast<size_t>(t)])];
      if (pu < 0 || pu == u) continue;
      successors[static_cast<size_t>(pu)].push_back(u);
      ++pending[static_cast<size_t>(u)];
    }
  }
  auto later = [&](int a, int b) { return position[static_cast<size_t>(a)] > position[static_cast<size_t>(b)]; };
  std::vector<int> ready;
  for (size_t u = 0; u < num_units; ++u) {
    if (position[u] != INT32_MAX && pending[u] == 0) ready.push_back(static_cast<int>(u));
  }
  std::make_heap(ready.begin(), ready.end(), later);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    const int u = ready.back();
    ready.pop_back();
    Step step;
    if (u < num_partitions) step.partition = u;
    else step.node = u - num_partitions;
    steps_.push_back(step);
    for (int s : successors[static_cast<size_t>(u)]) {
      if (--pending[static_cast<size_t>(s)] == 0) {
        ready.push_back(s);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    }
  }
  return PlanArena();
}

absl::Status Interpreter::PrepareNode(size_t n) {
  KernelContext& ctx = contexts_[n];
  MGD_RETURN_IF_ERROR(kernels_[n]->Prepare(ctx));
  // A kernel may have resized its outputs (custom ops do): keep sizes and the
  // graph the delegates see in step.
  for (TensorRef* out : ctx.outputs) {
    out->bytes = static_cast<size_t>(out->elements()) * ElementSize(out->type);
    graph_.tensors[static_cast<size_t>(out->index)].shape = out->shape;
  }
  return absl::OkStatus();
}

bool Interpreter::Foldable(size_t n) const {
  const KernelContext& ctx = contexts_[n];
  return FoldableAtLoad(graph_.nodes[n].op) &&
         std::all_of(ctx.inputs.begin(), ctx.inputs.end(), [](const TensorRef* t) { return t == nullptr || t->is_constant; });
}

// Computes a prepared node once now; its output becomes a constant of the graph.
absl::Status Interpreter::Fold(size_t n) {
  KernelContext& ctx = contexts_[n];
  TensorRef& out = ctx.out(0);
  Tensor& folded = graph_.tensors[static_cast<size_t>(out.index)];
  folded.data.assign(out.bytes, 0);
  out.data = folded.data.mutable_data();
  MGD_RETURN_IF_ERROR(kernels_[n]->Invoke(ctx));
  folded.is_constant = true;
  out.is_constant = true;
  placements_[n].where = NodePlacement::Where::kFolded;
  placements_[n].reason = "folded at load (constant input)";
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareNodes(const std::vector<int>& order) {
  // Folds of what the file holds as constants (a model's fp16 weights behind
  // DEQUANTIZE: megabytes of fresh memory to fill) depend on nothing else,
  // so they run first, on all cores; folds of folded outputs follow in order.
  std::vector<size_t> early;
  for (int n : order) {
    if (Foldable(static_cast<size_t>(n))) early.push_back(static_cast<size_t>(n));
  }
  for (size_t n : early) MGD_RETURN_IF_ERROR(PrepareNode(n));
  std::vector<absl::Status> folded(early.size());
  ParallelFor(early.size(), [&](size_t i) { folded[i] = Fold(early[i]); });
  for (const absl::Status& s : folded) MGD_RETURN_IF_ERROR(s);
  for (int n : order) {
    const size_t un = static_cast<size_t>(n);
    if (placements_[un].where == NodePlacement::Where::kFolded) continue;
    MGD_RETURN_IF_ERROR(PrepareNode(un));
    if (Foldable(un)) MGD_RETURN_IF_ERROR(Fold(un));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::ApplyDelegate(Delegate& delegate, int max_partitions, bool by_cost) {
  MGD_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(graph_));
  std::vector<int> candidates;
  for (int n : order) {
    if (placements_[static_cast<size_t>(n)].where == NodePlacement::Where::kCpu) candidates.push_back(n);
  }
  std::vector<bool> supported(graph_.nodes.size(), false);
  for (int n : candidates) {
    NodeSupport s = delegate.IsNodeSupported(graph_, n);
    supported[static_cast<size_t>(n)] = s.supported;
    if (!s.supported) placements_[static_cast<size_t>(n)].reason = fmt::format("{}: {}", delegate.name(), s.reason);
  }
  std::vector<Partition> partitions = PartitionGraph(graph_, candidates, supported, max_partitions);
  std::vector<bool> kept(graph_.nodes.size(), false);
  for (const Partition& p : partitions) {
    for (int n : p.nodes) kept[static_cast<size_t>(n)] = true;
  }
  for (int n : candidates) {
    if (supported[static_cast<size_t>(n)] && !kept[static_cast<size_t>(n)]) {
      placements_[static_cast<size_t>(n)].reason =
          fmt::format("{}: beyond the maximum of {} delegated partitions", delegate.name(), max_partitions);
    }
  }
  for (Partition& p : partitions) {
    std::optional<PartitionCost> cost;
    if (by_cost) {
      absl::StatusOr<PartitionCost> estimate = delegate.EstimateCost(graph_, p);
      if (estimate.ok()) cost = *estimate;
      if (cost && !cost->pays()) {
        const std::string why = fmt::format(
            "{}: on the CPU by cost: its partition of {} nodes would take {:.3f} ms there plus {:.3f} ms of "
            "transfers, against {:.3f} ms on the CPU",
            delegate.name(), p.nodes.size(), cost->delegate_ms, cost->transfer_ms, cost->cpu_ms);
        for (int n : p.nodes) placements_[static_cast<size_t>(n)].reason = why;
        continue;
      }
    }
    auto kernel = delegate.Prepare(graph_, p);
    if (!kernel.ok() && RefusesModel(kernel.status())) {
      return absl::FailedPreconditionError(fmt::format("{}: {}", delegate.name(), kernel.status().message()));
    }
    if (!kernel.ok()) {
      const std::string why = fmt::format("{} failed to prepare a partition of {} nodes, which runs on the CPU: {}",
                                          delegate.name(), p.nodes.size(), kernel.status().message());
      Log(LogLevel::kWarning, why);
      for (int n : p.nodes) placements_[static_cast<size_t>(n)].reason = why;
      continue;
    }
    const int index = static_cast<int>(partitions_.size());
    for (int n : p.nodes) {
      placements_[static_cast<size_t>(n)] = {NodePlacement::Where::kDelegate, index, delegate.name()};
    }
    partitions_.push_back(std::move(p));
    partition_costs_.push_back(cost);
    delegate_kernels_.push_back(std::move(*kernel));
  }
  return absl::OkStatus();
}

std::vector<int> Interpreter::ExecutionOrder() const {
  std::vector<int> order;
  for (const Step& s : steps_) {
    if (s.node >= 0) {
      order.push_back(s.node);
    } else {
      const Partition& p = partitions_[static_cast<size_t>(s.partition)];
      order.insert(order.end(), p.nodes.begin(), p.nodes.end());
    }
  }
  return order;
}

absl::Status Interpreter::PlanArena() {
  // Lifetimes in steps of the tensors the interpreter itself holds: inputs and
  // outputs of CPU kernels and of partitions (a partition's internals are the
  // delegate's business), graph inputs and outputs.
  const size_t num_tensors = tensors_.size();
  const int last_step = static_cast<int>(steps_.size());
  std::vector<int> first(num_tensors, INT32_MAX), last(num_tensors, -1);
  auto use = [&](int t, int step) {
    if (t == kNoTensor || tensors_[static_cast<size_t>(t)].is_constant) return;
    first[static_cast<size_t>(t)] = std::min(first[static_cast<size_t>(t)], step);
    last[static_cast<size_t>(t)] = std::max(last[static_cast<size_t>(t)], step);
  };
  // Graph inputs live to the end: an invoke never changes its inputs, so a
  // second invoke without writing them again gives the same outputs.
  for (int t : graph_.inputs) {
    use(t, 0);
    use(t, last_step);
  }
  for (int t : graph_.outputs) use(t, last_step);
  // Variable tensors carry state from one invoke to the next: nothing else
  // may share their bytes.
  for (size_t t = 0; t < num_tensors; ++t) {
    if (graph_.tensors[t].is_variable) {
      use(static_cast<int>(t), 0);
      use(static_cast<int>(t), last_step);
    }
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const int step = static_cast<int>(s);
    if (steps_[s].node >= 0) {
      const Node& node = graph_.nodes[static_cast<size_t>(steps_[s].node)];
      for (int t : node.inputs) use(t, step);
      for (int t : node.outputs) use(t, step);
    } else {
      const Partition& p = partitions_[static_cast<size_t>(steps_[s].partition)];
      for (int t : p.inputs) use(t, step);
      for (int t : p.outputs) use(t, step);
    }
  }
  if (preserve_all_tensors_) {  // alive from start to end: nothing shares bytes
    for (size_t t = 0; t < num_tensors; ++t) {
      if (last[t] >= 0) {
        first[t] = 0;
        last[t] = last_step;
      }
    }
  }
  // Greedy by size: largest first, each at the lowest offset free over its lifetime.
  std::vector<int> order;
  for (size_t t = 0; t < num_tensors; ++t) {
    if (last[t] >= 0) order.push_back(static_cast<int>(t));
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return tensors_[static_cast<size_t>(a)].bytes > tensors_[static_cast<size_t>(b)].bytes;
  });
  struct Placed {
    size_t offset, size;
    int first, last;
  };
  std::vector<Placed> placed;
  std::vector<size_t> offsets(num_tensors, 0);
  size_t total = 0;
  for (int t : order) {
    const size_t ut = static_cast<size_t>(t);
    const size_t size = (tensors_[ut].bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed) {
      if (p.first <= last[ut] && first[ut] <= p.last) busy.emplace_back(p.offset, p.offset + p.size);
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    offsets[ut] = offset;
    placed.push_back({offset, size, first[ut], last[ut]});
    total = std::max(total, offset + size);
  }
  arena_size_ = total;
  // A model can ask for more than the machine has: say so instead of aborting
  // (or being killed once the pages are touched).
  if (total > kMaxArenaBytes) {
    return absl::ResourceExhaustedError(fmt::format(
        "the model's tensors need {} bytes at once, above mgd's limit of {} bytes", total, kMaxArenaBytes));
  }
  arena_.reset(new (std::nothrow) uint8_t[std::max<size_t>(total, kTensorAlignment) + kTensorAlignment]);
  if (arena_ == nullptr) {
    return absl::ResourceExhaustedError(fmt::format("cannot allocate {} bytes for the model's tensors", total));
  }
  uint8_t* base = arena_.get();
  base += (kTensorAlignment - reinterpret_cast<uintptr_t>(base) % kTensorAlignment) % kTensorAlignment;
  std::memset(base, 0, total);
  for (int t : order) tensors_[static_cast<size_t>(t)].data = base + offsets[static_cast<size_t>(t)];
  return absl::OkStatus();
}

// OK for other types than float.
absl::Status Interpreter::CheckFinite(const TensorRef& t, const char* role, size_t index) {
  if (t.data == nullptr || (t.type != DataType::kFloat32 && t.type != DataType::kFloat16)) return absl::OkStatus();
  const int64_t n = t.elements();
  int64_t first = -1, count = 0;
  float value = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = t.type == DataType::kFloat32 ? t.as<float>()[i] : HalfToFloat(t.as<uint16_t>()[i]);
    if (std::isfinite(v)) continue;
    if (first < 0) {
      first = i;
      value = v;
    }
    ++count;
  }
  if (first < 0) return absl::OkStatus();
  const std::string message =
      fmt::format("{} {} '{}' {}: element {} is {} ({} of its {} values are not finite)", role, index, t.name,
                  ShapeToString(t.shape), first, std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf", count, n);
  return std::string(role) == "input" ? absl::InvalidArgumentError(message) : absl::DataLossError(message);
}

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// A fenced run of a partition: in slot 0, its work submitted with the fences.
absl::Status RunFenced(DelegateKernel& kernel, const std::vector<TensorRef*>& ins, const std::vector<TensorRef*>& outs,
                       const Deadline& deadline, const GpuFences& fences) {
  std::vector<const void*> in_data;
  for (const TensorRef* t : ins) in_data.push_back(t->data);
  std::vector<void*> out_data;
  for (TensorRef* t : outs) out_data.push_back(t->data);
  MGD_RETURN_IF_ERROR(kernel.Start(0, in_data, deadline, fences));
  return kernel.Finish(0, out_data, deadline);
}


}  // namespace

Deadline DeadlineAfter(std::chrono::steady_clock::time_point start, const std::optional<std::chrono::nanoseconds>& timeout) {
  // Beyond a year is no limit (and start + timeout could overflow).
  if (!timeout || *timeout > std::chrono::hours(24 * 365)) return std::nullopt;
  return start + *timeout;
}

absl::Status Exceeded(const Deadline& deadline, const std::string& where) {
  if (!deadline || Clock::now() <= *deadline) return absl::OkStatus();
  return absl::DeadlineExceededError("deadline exceeded " + where);
}

absl::Status Interpreter::Invoke() { return Invoke(InvokeOptions{}); }

absl::Status Interpreter::Invoke(const InvokeOptions& options) {
  const Deadline deadline = DeadlineAfter(Clock::now(), options.timeout);
  std::lock_guard<std::mutex> turn(run_mutex_);
  return CheckedRun(deadline, options.timing, options.fences);
}

void Interpreter::ResetVariableTensors() {
  std::lock_guard<std::mutex> turn(run_mutex_);
  for (size_t t = 0; t < tensors_.size(); ++t) {
    if (graph_.tensors[t].is_variable && tensors_[t].data != nullptr) std::memset(tensors_[t].data, 0, tensors_[t].bytes);
  }
}

absl::Status Interpreter::CheckBuffers(const std::vector<InputBytes>& inputs, const std::vector<OutputBytes>& outputs) const {
  if (inputs.size() != num_inputs() || outputs.size() != num_outputs()) {
    return absl::InvalidArgumentError(fmt::format("{} input and {} output buffers for a model of {} inputs and {} outputs",
                                                  inputs.size(), outputs.size(), num_inputs(), num_outputs()));
  }
  auto check = [&](const char* role, size_t i, const TensorRef& t, const void* data, size_t bytes) -> absl::Status {
    const int tensor = role[0] == 'i' ? graph_.inputs[i] : graph_.outputs[i];
    if (bound_[static_cast<size_t>(tensor)] && data == nullptr && bytes == 0) return absl::OkStatus();  // on the GPU
    if (bytes != t.bytes) {
      return absl::InvalidArgumentError(fmt::format("{} {} '{}' {} is {} bytes; its buffer has {}", role, i, t.name,
                                                    ShapeToString(t.shape), t.bytes, bytes));
    }
    if (data == nullptr && bytes > 0) return absl::InvalidArgumentError(fmt::format("{} {} '{}': no buffer", role, i, t.name));
    return absl::OkStatus();
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    MGD_RETURN_IF_ERROR(check("input", i, tensors_[static_cast<size_t>(graph_.inputs[i])], inputs[i].data, inputs[i].bytes));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    MGD_RETURN_IF_ERROR(check("output", i, output(i), outputs[i].data, outputs[i].bytes));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::Invoke(const std::vector<InputBytes>& inputs, const std::vector<OutputBytes>& outputs,
                                 const InvokeOptions& options) {
  MGD_RETURN_IF_ERROR(CheckBuffers(inputs, outputs));
  const Deadline deadline = DeadlineAfter(Clock::now(), options.timeout);
  std::lock_guard<std::mutex> turn(run_mutex_);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].bytes > 0 && !bound(graph_.inputs[i])) std::memcpy(input(i).data, inputs[i].data, inputs[i].bytes);
  }
  MGD_RETURN_IF_ERROR(CheckedRun(deadline, options.timing, options.fences));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].bytes > 0 && !bound(graph_.outputs[i])) std::memcpy(outputs[i].data, output(i).data, outputs[i].bytes);
  }
  return absl::OkStatus();
}

absl::Status Interpreter::CheckedRun(const Deadline& deadline, InvokeTiming* timing, const GpuFences& fences) {
  const Clock::time_point start = Clock::now();
  if (!fences.empty()) MGD_RETURN_IF_ERROR(WholeGraphPartition().status());
  if (check_finite_) {
    for (size_t i = 0; i < num_inputs(); ++i) {
      if (bound(graph_.inputs[i])) continue;
      if (absl::Status s = CheckFinite(input(i), "input", i); !s.ok()) return s;
    }
  }
  InvokeTiming measured;
  if (absl::Status s = RunSteps(deadline, measured, fences); !s.ok()) return s;
  // Work that cannot be stopped midway (a CPU kernel, a driver that runs
  // dispatches as they are issued) may end past the deadline: still missed.
  MGD_RETURN_IF_ERROR(Exceeded(deadline, "by the end of the run"));
  if (check_finite_) {
    for (size_t i = 0; i < num_outputs(); ++i) {
      if (bound(graph_.outputs[i])) continue;
      if (absl::Status s = CheckFinite(output(i), "output", i); !s.ok()) return s;
    }
  }
  measured.total_ms = MsSince(start);
  if (timing != nullptr) *timing = measured;
  return absl::OkStatus();
}

absl::Status Interpreter::RunSteps(const Deadline& deadline, InvokeTiming& timing, const GpuFences& fences) {
  std::vector<TensorRef*> ins, outs;
  bool device_known = measure_timing_ && !partitions_.empty();
  double device_ms = 0;
  for (const Step& step : steps_) {
    if (step.node >= 0) {
      const size_t n = static_cast<size_t>(step.node);
      MGD_RETURN_IF_ERROR(Exceeded(deadline, fmt::format("before node {} ({})", n, OpName(graph_.nodes[n].op))));
      absl::Status s = kernels_[n]->Invoke(contexts_[n]);
      if (!s.ok()) return s;
      continue;
    }
    const auto index = static_cast<size_t>(step.partition);
    const Partition& p = partitions_[index];
    MGD_RETURN_IF_ERROR(Exceeded(deadline, fmt::format("before delegate partition {}", step.partition)));
    ins.clear();
    outs.clear();
    for (int t : p.inputs) ins.push_back(&tensors_[static_cast<size_t>(t)]);
    for (int t : p.outputs) outs.push_back(&tensors_[static_cast<size_t>(t)]);
    const Clock::time_point start = Clock::now();
    absl::Status s = fences.empty() ? delegate_kernels_[index]->Invoke(ins, outs, deadline)
                                    : RunFenced(*delegate_kernels_[index], ins, outs, deadline, fences);
    if (!s.ok()) {
      return absl::Status(s.code(), fmt::format("delegate partition {} (nodes {}..): {}", step.partition,
                                                p.nodes.front(), s.message()));
    }
    timing.in_delegates_ms += MsSince(start);
    const std::optional<double> ms = delegate_kernels_[index]->DeviceMs(0);
    device_known = device_known && ms.has_value();
    if (ms) device_ms += *ms;
  }
  if (device_known) timing.device_ms = device_ms;
  return absl::OkStatus();
}

}  // namespace mgd
