// Partitioning in epochs, as TFLite's GraphPartitionHelper does: repeatedly
// take every node whose producers have all run and whose support matches the
// current epoch's kind (supported / not supported), until none is left, then
// switch kind. Every supported epoch is cycle-free by construction (each of
// its nodes depends only on earlier epochs or on itself) and becomes one
// partition.
#include <algorithm>
#include <map>
#include <numeric>

#include "interpreter/delegate.h"

namespace mgd {
namespace {

}  // namespace

std::vector<Partition> PartitionGraph(const Graph& graph, const std::vector<int>& order,
                                      const std::vector<bool>& supported, int max_partitions) {
  const size_t num_nodes = graph.nodes.size();
  std::vector<int> producer(graph.tensors.size(), -1);
  for (int n : order) {
    for (int t : graph.nodes[static_cast<size_t>(n)].outputs) producer[static_cast<size_t>(t)] = n;
  }
  std::vector<bool> done(num_nodes, false);
  auto ready = [&](int n) {
    for (int t : graph.nodes[static_cast<size_t>(n)].inputs) {
      if (t == kNoTensor) continue;
      const int p = producer[static_cast<size_t>(t)];
      if (p >= 0 && !done[static_cast<size_t>(p)]) return false;
    }
    return true;
  };

  std::vector<std::vector<int>> groups;  // supported epochs
  std::vector<int> remaining = order;
  bool kind = !remaining.empty() && supported[static_cast<size_t>(remaining.front())];
  while (!remaining.empty()) {
    std::vector<int> epoch;
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = remaining.begin(); it != remaining.end();) {
        const int n = *it;
        if (supported[static_cast<size_t>(n)] == kind && ready(n)) {
          done[static_cast<size_t>(n)] = true;
          epoch.push_back(n);
          it = remaining.erase(it);
          progress = true;
        } else {
          ++it;
        }
      }
    }
    if (kind && !epoch.empty()) groups.push_back(std::move(epoch));
    kind = !kind;
  }

  // Each supported epoch is one partition, also where it falls into parts
  // that share no tensor (two crops of one image, say): one submission for
  // all of it, as TFLite's delegates take an epoch.
  std::vector<Partition> partitions;
  for (const auto& group : groups) {
    std::vector<bool> in_group(num_nodes, false);
    for (int n : group) in_group[static_cast<size_t>(n)] = true;
    Partition p;
    for (int n : order) {  // the global execution order inside the partition
      if (in_group[static_cast<size_t>(n)]) p.nodes.push_back(n);
    }
    partitions.push_back(std::move(p));
  }

  if (max_partitions > 0 && static_cast<int>(partitions.size()) > max_partitions) {
    std::stable_sort(partitions.begin(), partitions.end(),
                     [](const Partition& a, const Partition& b) { return a.nodes.size() > b.nodes.size(); });
    partitions.resize(static_cast<size_t>(max_partitions));
  }

  // Inputs and outputs of each partition.
  std::vector<bool> is_graph_output(graph.tensors.size(), false);
  for (int t : graph.outputs) is_graph_output[static_cast<size_t>(t)] = true;
  for (Partition& p : partitions) {
    std::vector<bool> inside(num_nodes, false);
    for (int n : p.nodes) inside[static_cast<size_t>(n)] = true;
    std::vector<bool> seen(graph.tensors.size(), false);
    for (int n : p.nodes) {
      for (int t : graph.nodes[static_cast<size_t>(n)].inputs) {
        if (t == kNoTensor || seen[static_cast<size_t>(t)]) continue;
        const int prod = producer[static_cast<size_t>(t)];
        if (graph.tensors[static_cast<size_t>(t)].is_constant || (prod >= 0 && inside[static_cast<size_t>(prod)])) continue;
        seen[static_cast<size_t>(t)] = true;
        p.inputs.push_back(t);
      }
    }
    for (int n : p.nodes) {
      for (int t : graph.nodes[static_cast<size_t>(n)].outputs) {
        bool needed = is_graph_output[static_cast<size_t>(t)];
        for (size_t m = 0; m < num_nodes && !needed; ++m) {
          if (inside[m]) continue;
          const auto& ins = graph.nodes[m].inputs;
          needed = std::find(ins.begin(), ins.end(), t) != ins.end();
        }
        if (needed) p.outputs.push_back(t);
      }
    }
    // A variable tensor read inside (an LSTM's state) may be updated there in
    // place: the partition gives it back too, so the state carries over to
    // the next invoke whichever side runs it.
    for (int t : p.inputs) {
      if (graph.tensors[static_cast<size_t>(t)].is_variable) p.outputs.push_back(t);
    }
  }
  // Sort partitions by their first node so numbering follows the graph.
  std::sort(partitions.begin(), partitions.end(),
            [](const Partition& a, const Partition& b) { return a.nodes.front() < b.nodes.front(); });
  return partitions;
}

namespace {
constexpr char kRefusePayload[] = "mgd/delegate/refuses-model";
}  // namespace

absl::Status RefuseModel(const std::string& message) {
  absl::Status status = absl::FailedPreconditionError(message);
  status.SetPayload(kRefusePayload, absl::Cord("1"));
  return status;
}

bool RefusesModel(const absl::Status& status) { return status.GetPayload(kRefusePayload).has_value(); }

}  // namespace mgd
