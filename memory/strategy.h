// The planning strategies by name, best-of, and the allocation a delegate
// makes from a plan: either one arena with an offset per tensor, or several
// buffers each shared by tensors whose lifetimes do not overlap.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/planner.h"

namespace mgd::memory {

enum class Strategy { kNaive, kEquality, kGreedyInOrder, kGreedyByBreadth, kGreedyBySize, kMinCostFlow, kBest };
// Every strategy but kBest, in the order reports list them.
inline constexpr Strategy kStrategies[] = {Strategy::kNaive,           Strategy::kEquality,
                                           Strategy::kGreedyInOrder,   Strategy::kGreedyByBreadth,
                                           Strategy::kGreedyBySize,    Strategy::kMinCostFlow};

const char* StrategyName(Strategy strategy);  // "greedy_by_size", ...
std::optional<Strategy> ParseStrategy(std::string_view name);
std::string StrategyNames();  // "naive, equality, ..., best" for error messages

enum class Problem { kSharedObjects, kOffsets };
const char* ProblemName(Problem problem);  // "shared_objects", "offsets"
std::optional<Problem> ParseProblem(std::string_view name);

// `strategy`'s plan; nullopt where it has none for that problem (equality and
// min-cost flow only solve shared objects). kBest: the smallest plan of all.
std::optional<SharedObjectsPlan> PlanSharedObjects(Strategy strategy, const std::vector<TensorUsage>& usages);
std::optional<OffsetsPlan> PlanOffsets(Strategy strategy, const std::vector<TensorUsage>& usages);

// Where each tensor lives: buffer `object_of[i]` at byte `offset_of[i]`.
// An offsets plan is one object (the arena); a shared-objects plan has every
// offset 0.
struct Allocation {
  Strategy strategy = Strategy::kNaive;  // the strategy that made the plan (never kBest)
  Problem problem = Problem::kOffsets;
  std::vector<uint64_t> object_bytes;
  std::vector<int> object_of;
  std::vector<uint64_t> offset_of;
  uint64_t total() const;
};

// The allocation for `strategy`: its offsets plan where it has one, else its
// shared objects, unless `problem` says which. kBest: the smallest plan over
// every strategy (and both problems unless `problem` says which). Tensors of
// 0 bytes still get a place. An error message instead when `strategy` does not
// solve `problem`.
struct AllocationOrError {
  std::optional<Allocation> allocation;
  std::string error;
};
AllocationOrError Allocate(Strategy strategy, std::optional<Problem> problem, const std::vector<TensorUsage>& usages);

}  // namespace mgd::memory
