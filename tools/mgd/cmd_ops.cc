// mgd ops: every node, where it runs, and why.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {

absl::Status Ops(const OpsOptions& options) {
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(options.backend));
  MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(options.model));
  InterpreterOptions interpreter_options;
  if (backend.delegate != nullptr) interpreter_options.delegates.push_back(backend.delegate.get());
  interpreter_options.max_delegated_partitions = options.max_partitions;
  interpreter_options.partition_by_cost = options.partition_by_cost;
  auto created = Interpreter::Create(std::move(graph), std::move(interpreter_options));
  if (!created.ok()) return WithModelPath(options.model, created.status());
  auto interpreter = std::move(*created);
  const Graph& g = interpreter->graph();
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const NodePlacement& p = interpreter->placements()[n];
    const Node& node = g.nodes[n];
    const std::string op = OpLabel(node);
    const bool delegated = p.where == NodePlacement::Where::kDelegate;
    std::string reason = p.reason;
    if (reason.empty() && p.where == NodePlacement::Where::kCpu) reason = fmt::format("backend {} runs everything on the CPU", backend.backend);
    nodes.push_back({{"index", n}, {"op", op}, {"delegated", delegated}, {"reason", delegated ? "" : reason}});
    if (delegated) nodes.back()["partition"] = p.partition;
  }
  // Per partition what crossing to the GPU and back costs: the bytes of the
  // tensors it reads from and writes to the CPU's side, each run.
  nlohmann::json partitions = nlohmann::json::array();
  for (size_t i = 0; i < interpreter->partitions().size(); ++i) {
    const Partition& part = interpreter->partitions()[i];
    auto bytes = [&](const std::vector<int>& tensors) {
      size_t sum = 0;
      for (int t : tensors) sum += interpreter->tensor(t).bytes;
      return sum;
    };
    partitions.push_back({{"index", i},
                          {"nodes", part.nodes.size()},
                          {"inputs", part.inputs.size()},
                          {"outputs", part.outputs.size()},
                          {"input_bytes", bytes(part.inputs)},
                          {"output_bytes", bytes(part.outputs)}});
    // With --partition-by-cost: what it is expected to cost each run.
    if (const std::optional<PartitionCost>& cost = interpreter->partition_costs()[i]) {
      partitions.back()["expected_ms"] = {
          {"gpu", cost->delegate_ms}, {"transfers", cost->transfer_ms}, {"cpu", cost->cpu_ms}};
    }
  }
  if (options.json) {
    std::printf("%s\n",
                JsonText(nlohmann::json{{"backend", backend.backend}, {"nodes", nodes}, {"partitions", partitions}}).c_str());
    return absl::OkStatus();
  }
  fmt::print("{:>5}  {:<28} {:<9} {}\n", "index", "op", "runs on", "reason");
  for (const auto& n : nodes) {
    fmt::print("{:>5}  {:<28} {:<9} {}\n", n["index"].get<int>(), n["op"].get<std::string>(),
               n["delegated"].get<bool>() ? backend.backend : "cpu", n["reason"].get<std::string>());
  }
  for (const auto& part : partitions) {
    fmt::print("partition {}: {} nodes; per run {} bytes in ({} tensors), {} bytes out ({} tensors)",
               part["index"].get<size_t>(), part["nodes"].get<size_t>(), part["input_bytes"].get<size_t>(),
               part["inputs"].get<size_t>(), part["output_bytes"].get<size_t>(), part["outputs"].get<size_t>());
    if (part.contains("expected_ms")) {
      const auto& e = part["expected_ms"];
      fmt::print("; expected {:.3f} ms on the GPU plus {:.3f} ms of transfers, against {:.3f} ms on the CPU",
                 e["gpu"].get<double>(), e["transfers"].get<double>(), e["cpu"].get<double>());
    }
    fmt::print("\n");
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
