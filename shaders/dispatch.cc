// Which generator a node gets: its op's candidates from the op registry
// (ops/).
#include <fmt/format.h>

#include <algorithm>

#include "ops/registry.h"
#include "shaders/ops.h"

namespace mgd::shaders {

absl::StatusOr<GeneratedShader> GenerateShader(const NodeContext& ctx) {
  const bool custom = ctx.node->op == OpKind::kCustom;
  const std::string name = custom ? CustomName(*ctx.node) : OpName(ctx.node->op);
  const ops::OpDefinition* definition = custom ? ops::FindCustom(name) : ops::FindBuiltin(ctx.node->op);
  // The GPU computes in floats: other activations stay on the CPU, but for
  // those an op reads as they are given (an image's bytes, token ids) and
  // bools (as 0.0/1.0) where the op takes them.
  const bool bools = definition != nullptr && definition->gpu_bools;
  auto held = [&](DataType type) { return type == DataType::kFloat32 || (bools && type == DataType::kBool); };
  for (int t : ctx.node->inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = ctx.graph->tensors[static_cast<size_t>(t)];
    const bool raw = definition != nullptr && std::find(definition->raw_types.begin(), definition->raw_types.end(),
                                                        tensor.type) != definition->raw_types.end();
    if (!tensor.is_constant && !held(tensor.type) && !raw) {
      return absl::UnimplementedError(fmt::format("{} activations stay on the CPU", DataTypeName(tensor.type)));
    }
  }
  const bool none = definition == nullptr || definition->gpu.empty();
  const absl::Status no_generator = absl::UnimplementedError(
      custom ? fmt::format("no GPU shader for custom op {}", name) : fmt::format("no GPU shader for {}", name));
  if (none && !custom) return no_generator;
  for (int t : ctx.node->outputs) {
    const Tensor& out = ctx.graph->tensors[static_cast<size_t>(t)];
    if (!held(out.type)) return absl::UnimplementedError(fmt::format("{} outputs stay on the CPU", DataTypeName(out.type)));
  }
  if (none) return no_generator;  // said after the outputs' check, as for any custom op
  // The op's candidates in order: the first that takes the node wins; when
  // none does, the last (the general one) says why.
  const std::vector<Generator>& candidates = ctx.producer ? definition->gpu_with_producer : definition->gpu;
  absl::StatusOr<GeneratedShader> shader = absl::UnimplementedError(
      ctx.producer ? fmt::format("{} does not compute its input's producer", name) : "");
  for (const Generator& candidate : candidates) {
    shader = candidate(ctx);
    if (shader.ok()) break;
  }
  return shader;
}

namespace {

// Node `consumer`'s shader, computing node `producer` (and `source` before
// it) inside where those are >= 0, as the fusion planner asks for it:
// support only, in fp32 (the most shared memory a tile can take), without
// blocks of convolution outputs or split sums (whether the GPU's blocks or
// split sums pay better, and how a precision splits them, is for the
// compile, whose options hold them, to decide: it splits the group then).
absl::StatusOr<GeneratedShader> PlannedShader(const Graph& graph, int consumer, int producer, int source) {
  NodeContext ctx;
  ctx.graph = &graph;
  ctx.node_index = consumer;
  Node node = graph.nodes[static_cast<size_t>(consumer)];
  const absl::Status unfed = absl::InvalidArgumentError("the producer does not make the consumer's input 0");
  if (producer >= 0) {
    const Node& made_by = graph.nodes[static_cast<size_t>(producer)];
    if (node.inputs.empty() || made_by.outputs.empty() || node.inputs[0] != made_by.outputs[0]) return unfed;
    node.inputs[0] = made_by.inputs[0];
    ctx.producer = &made_by;
    ctx.producer_index = producer;
    if (source >= 0) {
      const Node& first = graph.nodes[static_cast<size_t>(source)];
      if (made_by.inputs.empty() || first.outputs.empty() || made_by.inputs[0] != first.outputs[0]) return unfed;
      node.inputs[0] = first.inputs[0];
      ctx.source = &first;
      ctx.source_index = source;
    }
  }
  ctx.node = &node;
  ctx.precision = Precision::Fp32();
  ctx.conv_block = {};
  ctx.split_conv_outputs = 0;
  ctx.support_only = true;
  return GenerateShader(ctx);
}

}  // namespace

bool TakesProducer(const Graph& graph, int producer, int consumer, int source) {
  const ops::OpDefinition* definition = ops::FindBuiltin(graph.nodes[static_cast<size_t>(consumer)].op);
  if (definition == nullptr || definition->gpu_with_producer.empty()) return false;
  return PlannedShader(graph, consumer, producer, source).ok();
}

bool LeavesItsStore(const Graph& graph, int n, int producer, int source) {
  auto shader = PlannedShader(graph, n, producer, source);
  return shader.ok() && shader->linkable;
}

bool IsElementwise(OpKind op) {
  const ops::OpDefinition* definition = ops::FindBuiltin(op);
  return definition != nullptr && definition->elementwise != nullptr;
}

absl::StatusOr<ElementwiseUpdate> GenerateElementwiseUpdate(const NodeContext& ctx, int fused_input,
                                                             const std::string& prefix) {
  const ops::OpDefinition* definition = ops::FindBuiltin(ctx.node->op);
  if (definition == nullptr || definition->elementwise == nullptr) {
    return absl::UnimplementedError("not an elementwise op");
  }
  return definition->elementwise(ctx, fused_input, prefix);
}

}  // namespace mgd::shaders
