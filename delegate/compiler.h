// Compiles one partition into a CompiledModel: runs the graph transforms,
// the shader generators, assembles fused shaders, converts constants to
// their GPU layouts, lists the buffers and dispatches and plans the memory
// of the activations.
#pragma once

#include "absl/status/statusor.h"
#include "delegate/compile_options.h"
#include "delegate/compiled_model.h"
#include "delegate/memory_plan.h"
#include "interpreter/delegate.h"
#include "model/graph.h"

namespace mgd {

absl::StatusOr<CompiledModel> CompilePartition(const Graph& graph, const Partition& partition,
                                               const CompileOptions& options);

// Lets dispatches that differ only in the values of their declared
// parameters share a program, reading those from the parameter block
// (shaders/parameters.h). Run after the workgroups are chosen: they are part
// of a program.
void SharePrograms(CompiledModel& model);

}  // namespace mgd
