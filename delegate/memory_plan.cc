#include "delegate/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd {
namespace {

uint64_t Largest(const memory::Allocation& a) { return *std::max_element(a.object_bytes.begin(), a.object_bytes.end()); }

}  // namespace

ActivationUsages ActivationUsagesOf(const CompiledModel& model, size_t alignment) {
  const uint64_t align = std::max<size_t>(alignment, 1);
  ActivationUsages result;
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    const CompiledBuffer& b = model.buffers[i];
    if (b.role != BufferRole::kActivation) continue;
    // Every record gets at least one aligned block, so that no binding starts
    // at the end of its object.
    const uint64_t bytes = std::max<uint64_t>((b.bytes + align - 1) / align * align, align);
    result.usages.push_back({bytes, std::max(b.first_use, 0), std::max(b.last_use, 0)});
    result.buffers.push_back(static_cast<int>(i));
  }
  return result;
}

absl::Status PlanMemory(CompiledModel& model, const MemoryOptions& options) {
  const ActivationUsages records = ActivationUsagesOf(model, options.alignment);
  model.memory_objects.clear();
  if (records.usages.empty()) return absl::OkStatus();
  memory::AllocationOrError planned = memory::Allocate(options.strategy, options.problem, records.usages);
  if (!planned.allocation) return absl::InvalidArgumentError(fmt::format("memory strategy: {}", planned.error));
  if (Largest(*planned.allocation) > options.max_object_bytes && options.strategy == memory::Strategy::kBest &&
      !options.problem) {
    planned = memory::Allocate(memory::Strategy::kBest, memory::Problem::kSharedObjects, records.usages);
  }
  const memory::Allocation& a = *planned.allocation;
  if (Largest(a) > options.max_object_bytes) {
    return absl::ResourceExhaustedError(fmt::format(
        "memory strategy {} ({}): a buffer of {} bytes exceeds the device's limit of {}", memory::StrategyName(a.strategy),
        memory::ProblemName(a.problem), Largest(a), options.max_object_bytes));
  }
  model.memory_objects = a.object_bytes;
  model.memory_strategy = a.strategy;
  model.memory_problem = a.problem;
  for (size_t r = 0; r < records.buffers.size(); ++r) {
    CompiledBuffer& b = model.buffers[static_cast<size_t>(records.buffers[r])];
    b.object = a.object_of[r];
    b.offset = a.offset_of[r];
  }
  return absl::OkStatus();
}

}  // namespace mgd
