#include "passes/fold_mul_add.h"

#include <cstring>

#include "model/constants.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "passes/fold_into_producer.h"

namespace mgd {
namespace {

int AddConstant(Graph& graph, const Shape& shape, const std::vector<float>& data, const std::string& name) {
  Tensor t;
  t.name = name;
  t.shape = shape;
  t.type = DataType::kFloat32;
  t.is_constant = true;
  std::vector<uint8_t> bytes(data.size() * 4);
  std::memcpy(bytes.data(), data.data(), bytes.size());
  t.data = std::move(bytes);
  graph.tensors.push_back(std::move(t));
  return static_cast<int>(graph.tensors.size()) - 1;
}

}  // namespace

void FoldMulAddIntoConvolutions(Subgraph& subgraph) {
  Graph& graph = *subgraph.graph;
  auto tensor = [&](int t) -> const Tensor& { return graph.tensors[static_cast<size_t>(t)]; };
  ProducerFolding folding(subgraph);
  for (int n : subgraph.nodes) {
    Node& m = graph.nodes[static_cast<size_t>(n)];
    if ((m.op != OpKind::kMul && m.op != OpKind::kAdd) || m.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const int t = m.inputs[static_cast<size_t>(side)];
      const Tensor& k = tensor(m.inputs[static_cast<size_t>(1 - side)]);
      const int producer = folding.SoleProducer(t);
      if (producer < 0 || !k.is_constant || k.type != DataType::kFloat32) continue;
      Node& conv = graph.nodes[static_cast<size_t>(producer)];
      if (!ops::IsSpatialConvolution(conv.op)) continue;
      if (tensor(m.outputs[0]).shape != tensor(t).shape) continue;
      if (ops::ConvolutionActivation(conv) != Activation::kNone) continue;
      const Tensor& w = tensor(conv.inputs[1]);
      const int channels = tensor(t).shape.back();
      const int64_t kn = NumElements(k.shape);
      if (!w.is_constant || w.type != DataType::kFloat32 || (kn != 1 && (kn != channels || k.shape.back() != channels))) continue;
      const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoTensor;
      if (has_bias && !tensor(conv.inputs[2]).is_constant) continue;
      const std::vector<float> values = ConstantFloats(k);
      std::vector<float> factor(static_cast<size_t>(channels));
      for (int c = 0; c < channels; ++c) factor[static_cast<size_t>(c)] = values[kn == 1 ? 0 : static_cast<size_t>(c)];
      std::vector<float> bias = has_bias ? ConstantFloats(tensor(conv.inputs[2]))
                                         : std::vector<float>(static_cast<size_t>(channels), 0.0f);
      bias.resize(static_cast<size_t>(channels), 0.0f);
      if (m.op == OpKind::kMul) {
        std::vector<float> weights = ConstantFloats(w);
        // OHWI: the output channel is the first dimension; depthwise 1HWC: the last.
        const size_t per_out = weights.size() / static_cast<size_t>(channels);
        for (size_t i = 0; i < weights.size(); ++i) {
          weights[i] *= factor[conv.op == OpKind::kConv2d ? i / per_out : i % static_cast<size_t>(channels)];
        }
        for (int c = 0; c < channels; ++c) bias[static_cast<size_t>(c)] *= factor[static_cast<size_t>(c)];
        const Shape shape = w.shape;
        const std::string name = w.name + "_scaled";
        conv.inputs[1] = AddConstant(graph, shape, weights, name);
      } else {
        for (int c = 0; c < channels; ++c) bias[static_cast<size_t>(c)] += factor[static_cast<size_t>(c)];
      }
      const int bias_tensor = AddConstant(graph, {channels}, bias, tensor(t).name + "_bias");
      if (conv.inputs.size() < 3) conv.inputs.resize(3, kNoTensor);
      conv.inputs[2] = bias_tensor;
      ops::SetConvolutionActivation(conv, AttributesOf<ops::ElementwiseAttributes>(m.attributes).activation);
      folding.Fold(n, producer);
      break;
    }
  }
  folding.Finish();
}

}  // namespace mgd
