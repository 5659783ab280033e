// Which generator a node gets: its op's candidates from the op registry
// (ops/), or, for the families not moved there yet, the tables of ops_*.cc.
#include <fmt/format.h>

#include "ops/registry.h"
#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

Generators OpGenerators() {
  Generators g;
  AddElementwiseGenerators(g);
  AddConvolutionGenerators(g);
  AddPoolGenerators(g);
  AddTransformGenerators(g);
  return g;
}

}  // namespace

absl::StatusOr<GeneratedShader> GenerateShader(const NodeContext& ctx) {
  static const Generators generators = OpGenerators();
  // The GPU computes in floats: other activations stay on the CPU.
  for (int t : ctx.node->inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = ctx.graph->tensors[static_cast<size_t>(t)];
    if (!tensor.is_constant && tensor.type != DataType::kFloat32) {
      return absl::UnimplementedError("non-float activations stay on the CPU");
    }
  }
  const Generator* generator = nullptr;
  const ops::OpDefinition* definition = ctx.node->op == OpKind::kCustom ? nullptr : ops::FindBuiltin(ctx.node->op);
  absl::Status no_custom_generator;  // said after the outputs' check, as for any custom op
  if (ctx.node->op == OpKind::kCustom) {
    const std::string name = CustomName(*ctx.node);
    auto it = generators.custom.find(name);
    if (it == generators.custom.end()) {
      no_custom_generator = absl::UnimplementedError(fmt::format("no GPU shader for custom op {}", name));
    } else {
      generator = &it->second;
    }
  } else if (definition != nullptr) {
    if (definition->gpu.empty()) {
      return absl::UnimplementedError(fmt::format("no GPU shader for {}", OpName(ctx.node->op)));
    }
  } else {
    auto it = generators.builtin.find(ctx.node->op);
    if (it == generators.builtin.end()) {
      return absl::UnimplementedError(fmt::format("no GPU shader for {}", OpName(ctx.node->op)));
    }
    generator = &it->second;
  }
  for (int t : ctx.node->outputs) {
    const Tensor& out = ctx.graph->tensors[static_cast<size_t>(t)];
    if (out.type != DataType::kFloat32) return absl::UnimplementedError("non-float outputs stay on the CPU");
  }
  if (!no_custom_generator.ok()) return no_custom_generator;
  if (definition == nullptr) return (*generator)(ctx);
  // The op's candidates in order: the first that takes the node wins; when
  // none does, the last (the general one) says why.
  absl::StatusOr<GeneratedShader> shader = absl::UnimplementedError("");
  for (const Generator& candidate : definition->gpu) {
    shader = candidate(ctx);
    if (shader.ok()) break;
  }
  return shader;
}

}  // namespace mgd::shaders
