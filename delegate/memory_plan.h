// Places a compiled partition's activations (the PHWC4 tensors inside it) in
// GPU memory with one of memory/'s strategies: an arena with an offset per
// tensor, or buffers shared by tensors whose lifetimes do not overlap. User
// buffers and constants keep buffers of their own.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "delegate/compiled_model.h"
#include "memory/strategy.h"

namespace mgd {

struct MemoryOptions {
  memory::Strategy strategy = memory::Strategy::kBest;
  std::optional<memory::Problem> problem;  // unset: the strategy's offsets plan where it has one
  size_t alignment = 16;                   // binding offsets: the device's storage_buffer_offset_alignment
  uint64_t max_object_bytes = UINT64_MAX;  // the largest buffer the device binds whole
};

// One record per activation buffer of `model` (bytes rounded up to the
// alignment; lifetimes in dispatch steps), and the buffer index of each.
struct ActivationUsages {
  std::vector<memory::TensorUsage> usages;
  std::vector<int> buffers;  // index into model.buffers, per record
};
ActivationUsages ActivationUsagesOf(const CompiledModel& model, size_t alignment);

// Fills model.memory_objects and each activation's object and offset. With
// kBest an arena larger than max_object_bytes gives way to shared objects;
// a plan the options force that cannot fit is an error.
absl::Status PlanMemory(CompiledModel& model, const MemoryOptions& options);

}  // namespace mgd
