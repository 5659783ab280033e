#include "ops/registry.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <shared_mutex>

#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/cumsum/cumsum.h"
#include "ops/densify/densify.h"
#include "ops/dequantize/dequantize.h"
#include "ops/elementwise/elementwise.h"
#include "ops/gather/gather.h"
#include "ops/lstm/lstm.h"
#include "ops/matmul/batch_matmul.h"
#include "ops/one_hot/one_hot.h"
#include "ops/movement/movement.h"
#include "ops/op_definition.h"
#include "ops/pipeline/pipeline_ops.h"
#include "ops/pool/pool.h"
#include "ops/quantize/quantize.h"
#include "ops/reduce/reduce.h"
#include "ops/resampler/resampler.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "ops/space_depth/space_depth.h"
#include "ops/split/split.h"
#include "ops/transform/transform.h"

namespace mgd::ops {
namespace {

// mgd's op families, one line each.
constexpr std::vector<OpDefinition> (*kFamilies[])() = {
    BatchMatmulOps,
    BinaryOps,
    CastOps,
    CompareOps,
    ConcatenationOps,
    Conv2dOps,
    CumsumOps,
    DensifyOps,
    DepthwiseConv2dOps,
    DequantizeOps,
    DetectionOps,
    FakeQuantOps,
    FullyConnectedOps,
    GatherOps,
    ImageToTensorOps,
    LstmOps,
    MediaPipePoolOps,
    MediaPipeTransposeConvOps,
    OneHotOps,
    PackOps,
    PadOps,
    PoolOps,
    QuantizeOps,
    ReduceOps,
    ResamplerOps,
    ReshapeOps,
    ResizeOps,
    SliceOps,
    SoftmaxOps,
    SpaceDepthOps,
    SplitOps,
    TransposeConvOps,
    TransformOps,
    TileOps,
    TransposeOps,
    UnaryOps,
};

std::vector<OpDefinition> Families() {
  std::vector<OpDefinition> all;
  for (auto family : kFamilies) {
    for (OpDefinition& op : family()) all.push_back(std::move(op));
  }
  return all;
}

class Registry {
 public:
  Registry() {
    for (OpDefinition& op : Families()) {
      auto definition = std::make_unique<OpDefinition>(std::move(op));
      if (definition->custom_name != nullptr) {
        custom_[definition->custom_name] = std::move(definition);
      } else {
        ops_[definition->op] = std::move(definition);
      }
    }
  }

  // Custom definitions come from the families only: they are fixed once made.
  const OpDefinition* FindCustom(const std::string& name) const {
    auto it = custom_.find(name);
    return it == custom_.end() ? nullptr : it->second.get();
  }

  std::vector<const OpDefinition*> CustomOps() const {
    std::vector<const OpDefinition*> all;
    for (const auto& [name, op] : custom_) all.push_back(op.get());
    return all;
  }

  const OpDefinition* Find(OpKind op) const {
    std::shared_lock lock(mutex_);
    auto it = ops_.find(op);
    return it == ops_.end() ? nullptr : it->second.get();
  }

  absl::Status Add(OpDefinition op) {
    // Custom ops are looked up by name (OpResolver), never by their code.
    if (op.op == OpKind::kCustom || op.custom_name != nullptr) {
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
  std::map<std::string, std::unique_ptr<OpDefinition>> custom_;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

const OpDefinition* FindBuiltin(OpKind op) { return TheRegistry().Find(op); }

bool IsIdentity(const Graph& graph, const Node& node) {
  const OpDefinition* definition = FindBuiltin(node.op);
  return definition != nullptr && definition->is_identity != nullptr && definition->is_identity(graph, node);
}

const OpDefinition* FindCustom(const std::string& name) { return TheRegistry().FindCustom(name); }

std::vector<const OpDefinition*> CustomOps() { return TheRegistry().CustomOps(); }

absl::Status Register(OpDefinition definition) { return TheRegistry().Add(std::move(definition)); }

}  // namespace mgd::ops
