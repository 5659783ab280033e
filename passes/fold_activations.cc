#include "passes/fold_activations.h"

#include "ops/conv/conv.h"
#include "ops/registry.h"
#include "passes/fold_into_producer.h"

namespace mgd {
void FoldActivationsIntoConvolutions(Subgraph& subgraph) {
  Graph& graph = *subgraph.graph;
  ProducerFolding folding(subgraph);
  for (int n : subgraph.nodes) {
    const Node& relu = graph.nodes[static_cast<size_t>(n)];
    const ops::OpDefinition* definition = ops::FindBuiltin(relu.op);
    if (definition == nullptr || definition->as_activation == Activation::kNone || relu.inputs.size() != 1 ||
        relu.outputs.size() != 1) {
      continue;
    }
    const int t = relu.inputs[0];
    const int producer = folding.SoleProducer(t);
    if (producer < 0) continue;
    Node& conv = graph.nodes[static_cast<size_t>(producer)];
    if (!ops::IsSpatialConvolution(conv.op) || conv.outputs.size() != 1 ||
        graph.tensors[static_cast<size_t>(t)].type != DataType::kFloat32 ||
        graph.tensors[static_cast<size_t>(relu.outputs[0])].shape != graph.tensors[static_cast<size_t>(t)].shape ||
        ops::ConvolutionActivation(conv) != Activation::kNone) {
      continue;
    }
    ops::SetConvolutionActivation(conv, definition->as_activation);
    folding.Fold(n, producer);
  }
  folding.Finish();
}

}  // namespace mgd
