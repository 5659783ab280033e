#include "ops/registry.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <shared_mutex>

#include "ops/concatenation/concatenation.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "ops/space_depth/space_depth.h"

namespace mgd::ops {
namespace {

// mgd's op families, one line each.
std::vector<OpDefinition> Families() {
  std::vector<OpDefinition> all;
  for (auto family : {ConcatenationOps, ReduceOps, ReshapeOps, ResizeOps, SoftmaxOps, SpaceDepthOps}) {
    for (OpDefinition& op : family()) all.push_back(std::move(op));
  }
  return all;
}

class Registry {
 public:
  Registry() {
    for (OpDefinition& op : Families()) ops_[op.op] = std::make_unique<OpDefinition>(std::move(op));
  }

  const OpDefinition* Find(OpKind op) const {
    std::shared_lock lock(mutex_);
    auto it = ops_.find(op);
    return it == ops_.end() ? nullptr : it->second.get();
  }

  absl::Status Add(OpDefinition op) {
    // Custom ops are looked up by name (OpResolver), never by their code.
    if (op.op == OpKind::kCustom) {
      return absl::InvalidArgumentError("op CUSTOM: custom ops are registered by name with the OpResolver");
    }
    if (op.validate == nullptr || op.cpu_kernel == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("op {}: a definition needs validation rules and a CPU kernel", OpName(op.op)));
    }
    std::unique_lock lock(mutex_);
    auto [it, added] = ops_.try_emplace(op.op);
    if (!added) return absl::AlreadyExistsError(fmt::format("op {} is already defined", OpName(op.op)));
    it->second = std::make_unique<OpDefinition>(std::move(op));
    return absl::OkStatus();
  }

 private:
  mutable std::shared_mutex mutex_;
  // Definitions never move or go, so the pointers Find hands out stay valid.
  std::map<OpKind, std::unique_ptr<OpDefinition>> ops_;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

const OpDefinition* FindBuiltin(OpKind op) { return TheRegistry().Find(op); }

absl::Status Register(OpDefinition definition) { return TheRegistry().Add(std::move(definition)); }

}  // namespace mgd::ops
