// The memory planners: exact answers on small hand-made cases, and on
// thousands of random usage records every plan is valid (no two tensors alive
// together share bytes, every tensor fits) and never beats the lower bound.
#include "memory/planner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <utility>
#include <random>

#include "memory/strategy.h"

namespace mgd::memory {
namespace {

// A [0,1] 100 bytes, B [1,2] 50, C [2,3] 100: A and C can share.
const std::vector<TensorUsage> kChain = {{100, 0, 1}, {50, 1, 2}, {100, 2, 3}};

TEST(MemoryPlanner, LowerBoundIsThePeakOfLiveBytes) {
  EXPECT_EQ(LowerBound(kChain), 150u);
  EXPECT_EQ(LowerBound({}), 0u);
  EXPECT_EQ(LowerBound({{10, 0, 5}, {20, 1, 2}, {30, 2, 3}}), 60u);
}

TEST(MemoryPlanner, HandMadeChain) {
  EXPECT_EQ(NaiveSharedObjects(kChain).total(), 250u);
  EXPECT_EQ(NaiveOffsets(kChain).arena_bytes, 250u);
  EXPECT_EQ(EqualitySharedObjects(kChain).total(), 150u);
  EXPECT_EQ(GreedyInOrderSharedObjects(kChain).total(), 150u);
  EXPECT_EQ(GreedyBySizeSharedObjects(kChain).total(), 150u);
  EXPECT_EQ(GreedyByBreadthSharedObjects(kChain).total(), 150u);
  EXPECT_EQ(MinCostFlowSharedObjects(kChain).total(), 150u);
  for (const OffsetsPlan& offsets : {GreedyInOrderOffsets(kChain), GreedyBySizeOffsets(kChain), GreedyByBreadthOffsets(kChain)}) {
    EXPECT_EQ(offsets.arena_bytes, 150u);
    EXPECT_EQ(offsets.offsets[0], offsets.offsets[2]);  // A and C share bytes
  }
}

TEST(MemoryPlanner, EqualityReusesOnlyEqualSizes) {
  // B ends before C starts, but C is larger: equality gives C its own buffer;
  // greedy in order grows B's.
  const std::vector<TensorUsage> u = {{64, 0, 1}, {32, 0, 0}, {48, 1, 2}};
  EXPECT_EQ(EqualitySharedObjects(u).total(), 64u + 32u + 48u);
  EXPECT_EQ(GreedyInOrderSharedObjects(u).total(), 64u + 48u);
}

TEST(MemoryPlanner, CheckPlanFindsOverlaps) {
  SharedObjectsPlan bad{{100}, {0, 0, 0}};
  EXPECT_NE(CheckPlan(kChain, bad), "");
  OffsetsPlan clash{{0, 0, 100}, 200};
  EXPECT_NE(CheckPlan(kChain, clash), "");
  OffsetsPlan small{{0, 100, 0}, 120};
  EXPECT_NE(CheckPlan(kChain, small), "");
}

// Every tensor inside its object, and no two tensors alive together sharing
// bytes of one object.
void ExpectValidAllocation(const std::vector<TensorUsage>& u, const Allocation& a) {
  ASSERT_EQ(a.object_of.size(), u.size());
  ASSERT_EQ(a.offset_of.size(), u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    ASSERT_GE(a.object_of[i], 0);
    ASSERT_LT(static_cast<size_t>(a.object_of[i]), a.object_bytes.size());
    EXPECT_LE(a.offset_of[i] + u[i].bytes, a.object_bytes[static_cast<size_t>(a.object_of[i])]) << "tensor " << i;
    for (size_t j = 0; j < i; ++j) {
      const bool alive_together = u[i].first <= u[j].last && u[j].first <= u[i].last;
      const bool same_bytes = a.object_of[i] == a.object_of[j] && a.offset_of[i] < a.offset_of[j] + u[j].bytes &&
                              a.offset_of[j] < a.offset_of[i] + u[i].bytes;
      EXPECT_FALSE(alive_together && same_bytes && u[i].bytes > 0 && u[j].bytes > 0) << "tensors " << j << ", " << i;
    }
  }
}

TEST(MemoryPlanner, RandomUsagesGiveValidPlansAboveTheBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const int steps = 1 + static_cast<int>(rng() % 40);
    const int n = static_cast<int>(rng() % 30);
    std::vector<TensorUsage> u;
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % static_cast<unsigned>(steps));
      const int last = first + static_cast<int>(rng() % 6);
      // PHWC4-like sizes: a few distinct shapes repeat, as in real models.
      const uint64_t bytes = 16u * (1u + rng() % 8) * (rng() % 3 == 0 ? 64u : 1u);
      u.push_back({bytes, first, last});
    }
    SCOPED_TRACE(trial);
    const uint64_t bound = LowerBound(u);
    uint64_t naive = 0;
    for (const TensorUsage& t : u) naive += t.bytes;
    const uint64_t best_shared = PlanSharedObjects(Strategy::kBest, u)->total();
    const uint64_t best_offsets = PlanOffsets(Strategy::kBest, u)->arena_bytes;
    std::vector<std::pair<uint64_t, Strategy>> offsets_totals, shared_totals;  // in the order tried
    for (Strategy s : kStrategies) {
      SCOPED_TRACE(StrategyName(s));
      if (auto plan = PlanSharedObjects(s, u)) {
        shared_totals.push_back({plan->total(), s});
        ASSERT_EQ(CheckPlan(u, *plan), "");
        EXPECT_GE(plan->total(), bound);
        EXPECT_LE(plan->total(), naive);
        EXPECT_LE(best_shared, plan->total());
      }
      if (auto plan = PlanOffsets(s, u)) {
        offsets_totals.push_back({plan->arena_bytes, s});
        ASSERT_EQ(CheckPlan(u, *plan), "");
        EXPECT_GE(plan->arena_bytes, bound);
        EXPECT_LE(plan->arena_bytes, naive);
        EXPECT_LE(best_offsets, plan->arena_bytes);
      }
    }
    // Seeded with greedy in order's buffers, the flow can only improve on it.
    EXPECT_LE(MinCostFlowSharedObjects(u).total(), GreedyInOrderSharedObjects(u).total());
    const Allocation best = *Allocate(Strategy::kBest, std::nullopt, u).allocation;
    EXPECT_EQ(best.total(), std::min(best_shared, best_offsets));
    ExpectValidAllocation(u, best);
    // The first plan at the minimum, offsets before shared objects, however
    // early a plan at the lower bound ends the search.
    std::optional<std::pair<Problem, Strategy>> first;
    for (Problem p : {Problem::kOffsets, Problem::kSharedObjects}) {
      for (const auto& [total, s] : p == Problem::kOffsets ? offsets_totals : shared_totals) {
        if (!first && total == best.total()) first = {p, s};
      }
    }
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(best.problem, first->first);
    EXPECT_EQ(best.strategy, first->second) << StrategyName(best.strategy);
  }
}

// The exact optimum of shared objects by trying every partition of the
// tensors into buffers (small cases only).
uint64_t OptimalSharedObjects(const std::vector<TensorUsage>& u) {
  uint64_t best = UINT64_MAX;
  std::vector<std::vector<size_t>> groups;
  std::function<void(size_t)> place = [&](size_t i) {
    if (i == u.size()) {
      uint64_t total = 0;
      for (const auto& g : groups) {
        uint64_t largest = 0;
        for (size_t t : g) largest = std::max(largest, u[t].bytes);
        total += largest;
      }
      best = std::min(best, total);
      return;
    }
    for (size_t g = 0; g < groups.size(); ++g) {  // by index: the recursion grows `groups`
      const bool clash = std::any_of(groups[g].begin(), groups[g].end(),
                                     [&](size_t t) { return u[t].first <= u[i].last && u[i].first <= u[t].last; });
      if (clash) continue;
      groups[g].push_back(i);
      place(i + 1);
      groups[g].pop_back();
    }
    groups.push_back({i});
    place(i + 1);
    groups.pop_back();
  };
  place(0);
  return best;
}

TEST(MemoryPlanner, SharedObjectsAgainstTheExactOptimum) {
  // Greedy in order gives the small B the only free buffer (A's), so C needs
  // a new large one; min-cost flow sees C coming and gives B its own.
  const std::vector<TensorUsage> trap = {{100, 0, 0}, {10, 1, 5}, {100, 2, 2}};
  EXPECT_EQ(OptimalSharedObjects(trap), 110u);
  EXPECT_EQ(GreedyInOrderSharedObjects(trap).total(), 200u);
  EXPECT_EQ(MinCostFlowSharedObjects(trap).total(), 110u);

  std::mt19937 rng(11);
  int mcf_optimal = 0, in_order_optimal = 0;
  const int trials = 400;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<TensorUsage> u;
    const int n = 1 + static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 8);
      u.push_back({16u * (1u + rng() % 6), first, first + static_cast<int>(rng() % 3)});
    }
    SCOPED_TRACE(trial);
    const uint64_t optimum = OptimalSharedObjects(u);
    for (Strategy s : kStrategies) EXPECT_GE(PlanSharedObjects(s, u)->total(), optimum) << StrategyName(s);
    mcf_optimal += MinCostFlowSharedObjects(u).total() == optimum;
    in_order_optimal += GreedyInOrderSharedObjects(u).total() == optimum;
  }
  // Heuristics both, but min-cost flow should find the optimum more often.
  EXPECT_GE(mcf_optimal, in_order_optimal);
  EXPECT_GE(mcf_optimal, trials * 9 / 10);
}

TEST(MemoryPlanner, StrategyNamesRoundTrip) {
  for (Strategy s : kStrategies) EXPECT_EQ(ParseStrategy(StrategyName(s)), s);
  EXPECT_EQ(ParseStrategy("best"), Strategy::kBest);
  EXPECT_EQ(ParseStrategy("greedy"), std::nullopt);
  EXPECT_EQ(ParseProblem("offsets"), Problem::kOffsets);
  EXPECT_EQ(ParseProblem("arena"), std::nullopt);
}

TEST(MemoryPlanner, AllocateFollowsTheStrategyAndProblem) {
  // Offsets where the strategy has them, shared objects otherwise.
  EXPECT_EQ(Allocate(Strategy::kGreedyBySize, std::nullopt, kChain).allocation->problem, Problem::kOffsets);
  EXPECT_EQ(Allocate(Strategy::kMinCostFlow, std::nullopt, kChain).allocation->problem, Problem::kSharedObjects);
  const Allocation naive = *Allocate(Strategy::kNaive, Problem::kSharedObjects, kChain).allocation;
  EXPECT_EQ(naive.object_bytes, (std::vector<uint64_t>{100, 50, 100}));
  const auto refused = Allocate(Strategy::kEquality, Problem::kOffsets, kChain);
  EXPECT_FALSE(refused.allocation.has_value());
  EXPECT_EQ(refused.error, "equality has no offsets plan");
  const Allocation best = *Allocate(Strategy::kBest, std::nullopt, kChain).allocation;
  EXPECT_EQ(best.total(), 150u);
  EXPECT_EQ(best.problem, Problem::kOffsets);  // ties go to one arena
}

}  // namespace
}  // namespace mgd::memory
