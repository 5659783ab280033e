// Picks the workgroup of every dispatch that may have any: from the
// workgroup tables (a user's, then the built-in one for the GPU), else the
// default calculator; and sizes its grid of workgroups to match.
#pragma once

#include <vector>

#include "backends/gpu/gpu.h"
#include "delegate/compiled_model.h"
#include "tuning/workgroups.h"

namespace mgd {

void ChooseWorkgroups(CompiledModel& model, const std::vector<const tuning::Table*>& tables, const gpu::GpuInfo& info);

// ceil(grid / workgroup) per axis.
std::array<uint32_t, 3> GroupsFor(const std::array<uint32_t, 3>& grid, const tuning::Workgroup& workgroup);

}  // namespace mgd
