// Compiles one partition into a CompiledModel: runs the graph transforms,
// the shader generators, assembles fused shaders, converts constants to
// their GPU layouts, lists the buffers and dispatches and plans the memory
// of the activations.
#pragma once

#include "absl/status/statusor.h"
#include "delegate/compiled_model.h"
#include "delegate/memory_plan.h"
#include "interpreter/delegate.h"
#include "model/graph.h"

namespace mgd {

struct CompileOptions {
  bool fp16 = false;
  bool fp32_accumulation = false;
  bool fp16_arithmetic = false;  // see shaders::NodeContext
  bool linear_grid = false;      // shaders::LinearGridFor where it fits
  bool dont_unroll = false;      // shaders::ShaderCode::dont_unroll (software GPUs)
  bool fusion = true;
  bool share_programs = false;   // GpuDelegateOptions::share_programs (applied by the delegate)
  MemoryOptions memory;
  int fault_node = -1;  // tests only: GpuDelegateOptions::fault_node
};

absl::StatusOr<CompiledModel> CompilePartition(const Graph& graph, const Partition& partition,
                                               const CompileOptions& options);

// Lets dispatches that differ only in inlined sizes and constants share a
// program, reading those as parameters (shaders/parameters.h). Run after the
// workgroups are chosen: they are part of a program.
void SharePrograms(CompiledModel& model);

}  // namespace mgd
