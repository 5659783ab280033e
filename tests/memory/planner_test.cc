// The memory planners: exact answers on small hand-made cases, and on
// thousands of random usage records every plan is valid (no two tensors alive
// together share bytes, every tensor fits) and never beats the lower bound.
#include "memory/planner.h"

#include <gtest/gtest.h>

#include <random>

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
  for (const OffsetsPlan& offsets : {GreedyBySizeOffsets(kChain), GreedyByBreadthOffsets(kChain)}) {
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
    for (const SharedObjectsPlan& plan : {NaiveSharedObjects(u), EqualitySharedObjects(u),
                                          GreedyInOrderSharedObjects(u), GreedyBySizeSharedObjects(u)}) {
      ASSERT_EQ(CheckPlan(u, plan), "");
      EXPECT_GE(plan.total(), bound);
      EXPECT_LE(plan.total(), naive);
    }
    for (const OffsetsPlan& plan : {NaiveOffsets(u), GreedyBySizeOffsets(u), GreedyByBreadthOffsets(u)}) {
      ASSERT_EQ(CheckPlan(u, plan), "");
      EXPECT_GE(plan.arena_bytes, bound);
      EXPECT_LE(plan.arena_bytes, naive);
    }
  }
}

}  // namespace
}  // namespace mgd::memory
