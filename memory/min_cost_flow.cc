// Shared objects by minimum-cost flow (the TFLite GPU delegate's idea, solved
// with Boost.Graph). A flow network with a left and a right vertex per tensor:
//   source -> left(i)   capacity 1, cost 0: tensor i hands its buffer on once
//   left(i) -> right(j) capacity 1, cost max(0, bytes j - bytes i), when i's
//                       last step comes before j's first: j takes i's buffer
//                       (growing it if j is larger)
//   source -> right(j)  capacity 1, cost bytes j: j gets a new buffer
//   right(j) -> sink    capacity 1, cost 0: every tensor gets exactly one
// A maximum flow of minimum cost gives each tensor its predecessor in a chain
// of tensors sharing one buffer; the buffer's size is the largest of its
// chain.
//
// With the tensors' own sizes as costs, a chain whose sizes go down and up
// again (big, small, big) is charged for growing twice, so the flow avoids
// such chains although they cost nothing. The fix: solve again with each
// tensor's size replaced by the size of the buffer the last plan gave it
// (c_i >= bytes_i). For that plan's own chains the charged cost is exactly
// its total, and for any chain the true cost (its largest tensor) is at most
// the charged one, so each solve is never worse than the plan whose sizes it
// used: repeat while it improves. Seeding the same loop with greedy in
// order's buffers makes the result never worse than greedy in order either.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

#include <future>

#include "memory/planner.h"

namespace mgd::memory {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, int64_t,
                    boost::property<boost::edge_residual_capacity_t, int64_t,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                    boost::property<boost::edge_weight_t, int64_t>>>>>;
using Edge = Traits::edge_descriptor;

class Network {
 public:
  explicit Network(size_t vertices) : graph_(vertices) {}

  // An edge and its zero-capacity reverse, as the solver needs.
  Edge Add(size_t from, size_t to, int64_t cost) {
    const Edge forward = boost::add_edge(from, to, graph_).first;
    const Edge backward = boost::add_edge(to, from, graph_).first;
    boost::put(boost::edge_capacity, graph_, forward, 1);
    boost::put(boost::edge_capacity, graph_, backward, 0);
    boost::put(boost::edge_weight, graph_, forward, cost);
    boost::put(boost::edge_weight, graph_, backward, -cost);
    boost::put(boost::edge_reverse, graph_, forward, backward);
    boost::put(boost::edge_reverse, graph_, backward, forward);
    return forward;
  }

  void Solve(size_t source, size_t sink) { boost::successive_shortest_path_nonnegative_weights(graph_, source, sink); }

  bool Carries(Edge e) const {
    return boost::get(boost::edge_capacity, graph_, e) - boost::get(boost::edge_residual_capacity, graph_, e) > 0;
  }

 private:
  FlowGraph graph_;
};

// One min-cost flow with `cost_bytes[i]` (>= usages[i].bytes) standing for
// tensor i's size in the costs.
SharedObjectsPlan SolveOnce(const std::vector<TensorUsage>& usages, const std::vector<uint64_t>& cost_bytes) {
  const size_t n = usages.size();
  const size_t source = 2 * n, sink = 2 * n + 1;
  auto left = [](size_t i) { return i; };
  auto right = [n](size_t j) { return n + j; };
  Network network(2 * n + 2);
  struct Handover {
    size_t from, to;
    Edge edge;
  };
  std::vector<Handover> handovers;
  for (size_t i = 0; i < n; ++i) {
    network.Add(source, left(i), 0);
    network.Add(source, right(i), static_cast<int64_t>(cost_bytes[i]));
    network.Add(right(i), sink, 0);
    for (size_t j = 0; j < n; ++j) {
      if (usages[i].last < usages[j].first) {
        const int64_t growth = std::max<int64_t>(0, static_cast<int64_t>(cost_bytes[j]) - static_cast<int64_t>(cost_bytes[i]));
        handovers.push_back({i, j, network.Add(left(i), right(j), growth)});
      }
    }
  }
  network.Solve(source, sink);

  std::vector<int> previous(n, -1);
  for (const Handover& h : handovers) {
    if (network.Carries(h.edge)) previous[h.to] = static_cast<int>(h.from);
  }
  // Chains start at tensors with no predecessor; each chain is one buffer.
  SharedObjectsPlan plan;
  plan.object_of.assign(n, -1);
  std::vector<int> next(n, -1);
  for (size_t j = 0; j < n; ++j) {
    if (previous[j] >= 0) next[static_cast<size_t>(previous[j])] = static_cast<int>(j);
  }
  for (size_t start = 0; start < n; ++start) {
    if (previous[start] >= 0) continue;
    const int object = static_cast<int>(plan.object_bytes.size());
    plan.object_bytes.push_back(0);
    for (int t = static_cast<int>(start); t >= 0; t = next[static_cast<size_t>(t)]) {
      plan.object_of[static_cast<size_t>(t)] = object;
      plan.object_bytes.back() = std::max(plan.object_bytes.back(), usages[static_cast<size_t>(t)].bytes);
    }
  }
  return plan;
}

// Each tensor's buffer size in `plan`.
std::vector<uint64_t> BufferBytes(const SharedObjectsPlan& plan) {
  std::vector<uint64_t> bytes;
  for (int object : plan.object_of) bytes.push_back(plan.object_bytes[static_cast<size_t>(object)]);
  return bytes;
}

// Solves again with the sizes of `plan`'s buffers while that improves.
SharedObjectsPlan Refine(const std::vector<TensorUsage>& usages, SharedObjectsPlan plan) {
  for (int round = 0; round < 16; ++round) {
    SharedObjectsPlan next = SolveOnce(usages, BufferBytes(plan));
    if (next.total() >= plan.total()) break;
    plan = std::move(next);
  }
  return plan;
}

}  // namespace

SharedObjectsPlan MinCostFlowSharedObjects(const std::vector<TensorUsage>& usages) {
  std::vector<uint64_t> own;
  for (const TensorUsage& t : usages) own.push_back(t.bytes);
  // The two seeds' solves are independent: the greedy one on a thread of its
  // own (pose_landmark_lite: 16 ms of a cold prepare, the two about equal).
  std::future<SharedObjectsPlan> greedy = std::async(std::launch::async, [&usages] {
    return Refine(usages, SolveOnce(usages, BufferBytes(GreedyInOrderSharedObjects(usages))));
  });
  SharedObjectsPlan from_own = Refine(usages, SolveOnce(usages, own));
  SharedObjectsPlan from_greedy = greedy.get();
  return from_greedy.total() < from_own.total() ? from_greedy : from_own;
}

}  // namespace mgd::memory
