// The picture `mgd plan --svg` draws: each partition's chosen memory plan,
// tensors as boxes (x: the dispatch steps they live through, y: where their
// bytes are), buffers of a shared-objects plan stacked on top of each other.
#pragma once

#include <string>
#include <vector>

#include "delegate/compiled_model.h"

namespace mgd::cli {

struct PlannedPartition {
  const CompiledModel* model = nullptr;
  std::vector<std::string> tensor_names;  // per CompiledModel::buffers entry ("" when none)
  uint64_t lower_bound = 0;
};

std::string PlanSvg(const std::string& title, const std::vector<PlannedPartition>& partitions);

}  // namespace mgd::cli
