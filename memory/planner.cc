#include "memory/planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace mgd::memory {
namespace {

bool Overlap(const TensorUsage& a, const TensorUsage& b) { return a.first <= b.last && b.first <= a.last; }

// Tensor indices sorted by size, largest first (ties: earlier first use).
std::vector<size_t> BySize(const std::vector<TensorUsage>& u) {
  std::vector<size_t> order(u.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return u[a].bytes != u[b].bytes ? u[a].bytes > u[b].bytes : u[a].first < u[b].first;
  });
  return order;
}

// TFLite's "greedy by breadth" order: the steps with the most live bytes
// first, and within a step its tensors largest first.
std::vector<size_t> ByBreadth(const std::vector<TensorUsage>& u) {
  std::map<int, uint64_t> breadth;
  for (const TensorUsage& t : u) {
    for (int s = t.first; s <= t.last; ++s) breadth[s] += t.bytes;
  }
  std::vector<std::pair<uint64_t, int>> steps;
  for (const auto& [step, bytes] : breadth) steps.push_back({bytes, step});
  std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> order;
  std::vector<bool> taken(u.size(), false);
  const std::vector<size_t> by_size = BySize(u);
  for (const auto& [bytes, step] : steps) {
    for (size_t i : by_size) {
      if (!taken[i] && u[i].first <= step && step <= u[i].last) {
        taken[i] = true;
        order.push_back(i);
      }
    }
  }
  for (size_t i = 0; i < u.size(); ++i) {
    if (!taken[i]) order.push_back(i);
  }
  return order;
}

// Among free buffers: the smallest that fits; else the largest, to be grown.
int BestFit(uint64_t bytes, const std::vector<int>& free, const std::vector<uint64_t>& sizes) {
  int best = -1, largest = -1;
  for (int b : free) {
    const uint64_t s = sizes[static_cast<size_t>(b)];
    if (s >= bytes && (best < 0 || s < sizes[static_cast<size_t>(best)])) best = b;
    if (largest < 0 || s > sizes[static_cast<size_t>(largest)]) largest = b;
  }
  return best >= 0 ? best : largest;
}

std::vector<size_t> ByFirstUse(const std::vector<TensorUsage>& u) {
  std::vector<size_t> order(u.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return u[a].first < u[b].first; });
  return order;
}

}  // namespace

uint64_t SharedObjectsPlan::total() const { return std::accumulate(object_bytes.begin(), object_bytes.end(), uint64_t{0}); }

uint64_t LowerBound(const std::vector<TensorUsage>& usages) {
  std::map<int, int64_t> delta;  // step -> change in live bytes
  for (const TensorUsage& t : usages) {
    delta[t.first] += static_cast<int64_t>(t.bytes);
    delta[t.last + 1] -= static_cast<int64_t>(t.bytes);
  }
  int64_t live = 0, best = 0;
  for (const auto& [step, d] : delta) {
    live += d;
    best = std::max(best, live);
  }
  return static_cast<uint64_t>(best);
}

SharedObjectsPlan NaiveSharedObjects(const std::vector<TensorUsage>& usages) {
  SharedObjectsPlan plan;
  for (size_t i = 0; i < usages.size(); ++i) {
    plan.object_bytes.push_back(usages[i].bytes);
    plan.object_of.push_back(static_cast<int>(i));
  }
  return plan;
}

// Shared by the in-order strategies: buffers free again after their tensor's
// last step; `pick` chooses among the free ones (or -1 for a new buffer).
template <typename Pick>
SharedObjectsPlan InOrder(const std::vector<TensorUsage>& usages, Pick pick) {
  SharedObjectsPlan plan;
  plan.object_of.assign(usages.size(), -1);
  std::vector<int> busy_until;  // per buffer: last step of its current tensor
  for (size_t i : ByFirstUse(usages)) {
    std::vector<int> free;
    for (size_t b = 0; b < busy_until.size(); ++b) {
      if (busy_until[b] < usages[i].first) free.push_back(static_cast<int>(b));
    }
    int b = pick(usages[i].bytes, free, plan.object_bytes);
    if (b < 0) {
      plan.object_bytes.push_back(usages[i].bytes);
      busy_until.push_back(usages[i].last);
      b = static_cast<int>(plan.object_bytes.size()) - 1;
    } else {
      plan.object_bytes[static_cast<size_t>(b)] = std::max(plan.object_bytes[static_cast<size_t>(b)], usages[i].bytes);
      busy_until[static_cast<size_t>(b)] = usages[i].last;
    }
    plan.object_of[i] = b;
  }
  return plan;
}

SharedObjectsPlan EqualitySharedObjects(const std::vector<TensorUsage>& usages) {
  return InOrder(usages, [](uint64_t bytes, const std::vector<int>& free, const std::vector<uint64_t>& sizes) {
    for (int b : free) {
      if (sizes[static_cast<size_t>(b)] == bytes) return b;
    }
    return -1;
  });
}

SharedObjectsPlan GreedyInOrderSharedObjects(const std::vector<TensorUsage>& usages) { return InOrder(usages, BestFit); }

SharedObjectsPlan GreedyBySizeSharedObjects(const std::vector<TensorUsage>& usages) {
  SharedObjectsPlan plan;
  plan.object_of.assign(usages.size(), -1);
  std::vector<std::vector<size_t>> members;
  for (size_t i : BySize(usages)) {
    int chosen = -1;
    for (size_t b = 0; b < members.size() && chosen < 0; ++b) {
      const bool clash = std::any_of(members[b].begin(), members[b].end(),
                                     [&](size_t j) { return Overlap(usages[i], usages[j]); });
      if (!clash) chosen = static_cast<int>(b);
    }
    if (chosen < 0) {
      members.emplace_back();
      plan.object_bytes.push_back(usages[i].bytes);  // the largest member comes first
      chosen = static_cast<int>(members.size()) - 1;
    }
    members[static_cast<size_t>(chosen)].push_back(i);
    plan.object_of[i] = chosen;
  }
  return plan;
}

SharedObjectsPlan GreedyByBreadthSharedObjects(const std::vector<TensorUsage>& usages) {
  SharedObjectsPlan plan;
  plan.object_of.assign(usages.size(), -1);
  std::vector<std::vector<size_t>> members;
  for (size_t i : ByBreadth(usages)) {
    std::vector<int> free;
    for (size_t b = 0; b < members.size(); ++b) {
      const bool clash = std::any_of(members[b].begin(), members[b].end(),
                                     [&](size_t j) { return Overlap(usages[i], usages[j]); });
      if (!clash) free.push_back(static_cast<int>(b));
    }
    int b = BestFit(usages[i].bytes, free, plan.object_bytes);
    if (b < 0) {
      members.emplace_back();
      plan.object_bytes.push_back(0);
      b = static_cast<int>(members.size()) - 1;
    }
    members[static_cast<size_t>(b)].push_back(i);
    plan.object_bytes[static_cast<size_t>(b)] = std::max(plan.object_bytes[static_cast<size_t>(b)], usages[i].bytes);
    plan.object_of[i] = b;
  }
  return plan;
}

OffsetsPlan NaiveOffsets(const std::vector<TensorUsage>& usages) {
  OffsetsPlan plan;
  for (const TensorUsage& t : usages) {
    plan.offsets.push_back(plan.arena_bytes);
    plan.arena_bytes += t.bytes;
  }
  return plan;
}

namespace {

// Places tensors in `order`, each at the best-fitting gap between the
// already placed tensors whose lifetimes overlap it, else after them.
OffsetsPlan PlaceInOrder(const std::vector<TensorUsage>& usages, const std::vector<size_t>& order) {
  OffsetsPlan plan;
  plan.offsets.assign(usages.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed) {
      if (Overlap(usages[i], usages[j])) taken.push_back({plan.offsets[j], plan.offsets[j] + usages[j].bytes});
    }
    std::sort(taken.begin(), taken.end());
    uint64_t offset = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (const auto& [start, end] : taken) {
      if (start >= offset && start - offset >= usages[i].bytes && start - offset < best_gap) {
        best = offset;
        best_gap = start - offset;
      }
      offset = std::max(offset, end);
    }
    plan.offsets[i] = best != UINT64_MAX ? best : offset;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + usages[i].bytes);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace

OffsetsPlan GreedyInOrderOffsets(const std::vector<TensorUsage>& usages) { return PlaceInOrder(usages, ByFirstUse(usages)); }
OffsetsPlan GreedyBySizeOffsets(const std::vector<TensorUsage>& usages) { return PlaceInOrder(usages, BySize(usages)); }
OffsetsPlan GreedyByBreadthOffsets(const std::vector<TensorUsage>& usages) {
  return PlaceInOrder(usages, ByBreadth(usages));
}

std::string CheckPlan(const std::vector<TensorUsage>& u, const SharedObjectsPlan& plan) {
  if (plan.object_of.size() != u.size()) return "the plan does not cover every tensor";
  for (size_t i = 0; i < u.size(); ++i) {
    const int b = plan.object_of[i];
    if (b < 0 || static_cast<size_t>(b) >= plan.object_bytes.size()) return "tensor " + std::to_string(i) + " has no buffer";
    if (plan.object_bytes[static_cast<size_t>(b)] < u[i].bytes) return "tensor " + std::to_string(i) + " does not fit its buffer";
    for (size_t j = 0; j < i; ++j) {
      if (plan.object_of[j] == b && Overlap(u[i], u[j])) {
        return "tensors " + std::to_string(j) + " and " + std::to_string(i) + " share a buffer while both alive";
      }
    }
  }
  return "";
}

std::string CheckPlan(const std::vector<TensorUsage>& u, const OffsetsPlan& plan) {
  if (plan.offsets.size() != u.size()) return "the plan does not cover every tensor";
  for (size_t i = 0; i < u.size(); ++i) {
    if (plan.offsets[i] + u[i].bytes > plan.arena_bytes) return "tensor " + std::to_string(i) + " ends past the arena";
    for (size_t j = 0; j < i; ++j) {
      const bool bytes_overlap = plan.offsets[i] < plan.offsets[j] + u[j].bytes && plan.offsets[j] < plan.offsets[i] + u[i].bytes;
      if (bytes_overlap && u[i].bytes > 0 && u[j].bytes > 0 && Overlap(u[i], u[j])) {
        return "tensors " + std::to_string(j) + " and " + std::to_string(i) + " overlap in bytes while both alive";
      }
    }
  }
  return "";
}

}  // namespace mgd::memory
