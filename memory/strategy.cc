#include "memory/strategy.h"

#include <numeric>

namespace mgd::memory {
namespace {

Allocation FromSharedObjects(Strategy strategy, const SharedObjectsPlan& plan) {
  Allocation a{strategy, Problem::kSharedObjects, plan.object_bytes, plan.object_of, {}};
  a.offset_of.assign(plan.object_of.size(), 0);
  return a;
}

Allocation FromOffsets(Strategy strategy, const OffsetsPlan& plan) {
  return Allocation{strategy, Problem::kOffsets, {plan.arena_bytes}, std::vector<int>(plan.offsets.size(), 0), plan.offsets};
}

std::optional<Allocation> AllocateOne(Strategy strategy, Problem problem, const std::vector<TensorUsage>& usages) {
  if (problem == Problem::kOffsets) {
    auto plan = PlanOffsets(strategy, usages);
    return plan ? std::optional(FromOffsets(strategy, *plan)) : std::nullopt;
  }
  auto plan = PlanSharedObjects(strategy, usages);
  return plan ? std::optional(FromSharedObjects(strategy, *plan)) : std::nullopt;
}

}  // namespace

const char* StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kNaive: return "naive";
    case Strategy::kEquality: return "equality";
    case Strategy::kGreedyInOrder: return "greedy_in_order";
    case Strategy::kGreedyByBreadth: return "greedy_by_breadth";
    case Strategy::kGreedyBySize: return "greedy_by_size";
    case Strategy::kMinCostFlow: return "min_cost_flow";
    case Strategy::kBest: return "best";
  }
  return "?";
}

std::optional<Strategy> ParseStrategy(std::string_view name) {
  for (Strategy s : kStrategies) {
    if (name == StrategyName(s)) return s;
  }
  if (name == "best") return Strategy::kBest;
  return std::nullopt;
}

std::string StrategyNames() {
  std::string names;
  for (Strategy s : kStrategies) names += std::string(StrategyName(s)) + ", ";
  return names + "best";
}

const char* ProblemName(Problem problem) { return problem == Problem::kOffsets ? "offsets" : "shared_objects"; }

std::optional<Problem> ParseProblem(std::string_view name) {
  if (name == "offsets") return Problem::kOffsets;
  if (name == "shared_objects") return Problem::kSharedObjects;
  return std::nullopt;
}

std::optional<SharedObjectsPlan> PlanSharedObjects(Strategy strategy, const std::vector<TensorUsage>& usages) {
  switch (strategy) {
    case Strategy::kNaive: return NaiveSharedObjects(usages);
    case Strategy::kEquality: return EqualitySharedObjects(usages);
    case Strategy::kGreedyInOrder: return GreedyInOrderSharedObjects(usages);
    case Strategy::kGreedyByBreadth: return GreedyByBreadthSharedObjects(usages);
    case Strategy::kGreedyBySize: return GreedyBySizeSharedObjects(usages);
    case Strategy::kMinCostFlow: return MinCostFlowSharedObjects(usages);
    case Strategy::kBest: break;
  }
  std::optional<SharedObjectsPlan> best;
  for (Strategy s : kStrategies) {
    auto plan = PlanSharedObjects(s, usages);
    if (plan && (!best || plan->total() < best->total())) best = std::move(plan);
  }
  return best;
}

std::optional<OffsetsPlan> PlanOffsets(Strategy strategy, const std::vector<TensorUsage>& usages) {
  switch (strategy) {
    case Strategy::kNaive: return NaiveOffsets(usages);
    case Strategy::kGreedyInOrder: return GreedyInOrderOffsets(usages);
    case Strategy::kGreedyByBreadth: return GreedyByBreadthOffsets(usages);
    case Strategy::kGreedyBySize: return GreedyBySizeOffsets(usages);
    case Strategy::kEquality:
    case Strategy::kMinCostFlow: return std::nullopt;
    case Strategy::kBest: break;
  }
  std::optional<OffsetsPlan> best;
  for (Strategy s : kStrategies) {
    auto plan = PlanOffsets(s, usages);
    if (plan && (!best || plan->arena_bytes < best->arena_bytes)) best = std::move(plan);
  }
  return best;
}

uint64_t Allocation::total() const { return std::accumulate(object_bytes.begin(), object_bytes.end(), uint64_t{0}); }

AllocationOrError Allocate(Strategy strategy, std::optional<Problem> problem, const std::vector<TensorUsage>& usages) {
  if (strategy != Strategy::kBest) {
    const Problem p = problem.value_or(PlanOffsets(strategy, usages) ? Problem::kOffsets : Problem::kSharedObjects);
    auto allocation = AllocateOne(strategy, p, usages);
    if (!allocation) return {std::nullopt, std::string(StrategyName(strategy)) + " has no " + ProblemName(p) + " plan"};
    return {std::move(allocation), ""};
  }
  // Offsets first: on a tie one arena beats several buffers. A plan at the
  // lower bound cannot be beaten, so the strategies after it are not tried
  // (the min-cost flow's shared objects were most of a prepare's planning:
  // pose_landmark_lite's arena meets the bound by breadth).
  const uint64_t bound = LowerBound(usages);
  std::optional<Allocation> best;
  for (Problem p : {Problem::kOffsets, Problem::kSharedObjects}) {
    if (problem && *problem != p) continue;
    for (Strategy s : kStrategies) {
      if (best && best->total() <= bound) break;
      auto allocation = AllocateOne(s, p, usages);
      if (allocation && (!best || allocation->total() < best->total())) best = std::move(allocation);
    }
  }
  return {std::move(best), ""};
}

}  // namespace mgd::memory
