#include "delegate/workgroups.h"

namespace mgd {

std::array<uint32_t, 3> GroupsFor(const std::array<uint32_t, 3>& grid, const tuning::Workgroup& wg) {
  std::array<uint32_t, 3> groups{};
  for (size_t i = 0; i < 3; ++i) groups[i] = std::max<uint32_t>(1, (grid[i] + wg[i] - 1) / wg[i]);
  return groups;
}

void ChooseWorkgroups(CompiledModel& model, const std::vector<const tuning::Table*>& tables, const gpu::GpuInfo& info) {
  for (CompiledDispatch& d : model.dispatches) {
    if (d.grid == std::array<uint32_t, 3>{0, 0, 0}) continue;
    const tuning::Choice choice = tuning::Choose(tables, d.key, d.grid, info);
    const std::array<uint32_t, 3> groups = GroupsFor(d.grid, choice.workgroup);
    bool fits = true;
    for (size_t i = 0; i < 3; ++i) fits = fits && groups[i] <= info.limits.max_workgroup_count[i];
    if (!fits) continue;  // a grid too large for that shape: keep the generator's
    d.code.workgroup = choice.workgroup;
    d.groups = groups;
    d.workgroup_source = tuning::SourceName(choice.source);
  }
}

}  // namespace mgd
