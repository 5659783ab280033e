#include "delegate/fusion.h"

#include <algorithm>
#include <cstring>

#include "model/slice.h"
#include "shaders/ops.h"

namespace mgd {
namespace {

const Tensor& TensorOf(const Graph& g, int t) { return g.tensors[static_cast<size_t>(t)]; }

std::map<int, int> CountConsumers(const PartitionView& view) {
  std::map<int, int> consumers;
  for (int n : view.nodes) {
    for (int t : view.graph->nodes[static_cast<size_t>(n)].inputs) {
      if (t != kNoTensor) ++consumers[t];
    }
  }
  return consumers;
}

bool SameLayout(const Shape& a, const Shape& b) {
  auto x = shaders::ToBhwc(a);
  auto y = shaders::ToBhwc(b);
  return x.ok() && y.ok() && *x == *y;
}

// A PAD with constant paddings and zero value: its [before, after] per dimension.
bool PadMargins(const Graph& g, const Node& node, std::vector<int64_t>* margins) {
  if (node.op != OpKind::kPad || node.inputs.size() != 2 || !TensorOf(g, node.inputs[1]).is_constant) return false;
  *margins = shaders::ConstantInts(TensorOf(g, node.inputs[1]));
  return margins->size() == 2 * TensorOf(g, node.inputs[0]).shape.size();
}

bool IsNoOp(const Graph& g, const Node& node) {
  const Tensor& in = TensorOf(g, node.inputs[0]);
  const Tensor& out = TensorOf(g, node.outputs[0]);
  if (in.is_constant || in.type != DataType::kFloat32 || !SameLayout(in.shape, out.shape)) return false;
  switch (node.op) {
    case OpKind::kReshape: case OpKind::kSqueeze: case OpKind::kExpandDims:
      return true;
    case OpKind::kPad: {
      std::vector<int64_t> m;
      return PadMargins(g, node, &m) && std::all_of(m.begin(), m.end(), [](int64_t v) { return v == 0; });
    }
    case OpKind::kConcatenation: return node.inputs.size() == 1;
    case OpKind::kSlice: case OpKind::kStridedSlice: {
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (!TensorOf(g, node.inputs[i]).is_constant) return false;
      }
      const bool strided = node.op == OpKind::kStridedSlice;
      const std::vector<int64_t> steps = strided ? shaders::ConstantInts(TensorOf(g, node.inputs[3])) : std::vector<int64_t>{};
      StridedSliceAttributes a;
      if (strided) a = std::get<StridedSliceAttributes>(node.attributes);
      auto view = ResolveSlice(in.shape, shaders::ConstantInts(TensorOf(g, node.inputs[1])), shaders::ConstantInts(TensorOf(g, node.inputs[2])),
                               strided ? &steps : nullptr, a);
      return view.ok() && view->offset == 0 && view->full_shape == in.shape &&
             std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; });
    }
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor:
      return in.shape == out.shape;
    default: return false;
  }
}

bool IsConvolution(OpKind op) { return op == OpKind::kConv2d || op == OpKind::kDepthwiseConv2d; }

// Storage buffers a group's shader binds, at most: the head's non-constant
// inputs, its outputs, one weights buffer, and the tails' other operands.
int BindingsOf(const Graph& g, const FusedGroup& group) {
  auto activations = [&](const Node& node) {
    int n = 0;
    for (int t : node.inputs) n += t != kNoTensor && !TensorOf(g, t).is_constant;
    return n;
  };
  const Node& head = g.nodes[static_cast<size_t>(group.head)];
  int bindings = activations(head) + static_cast<int>(head.outputs.size()) + 1;
  for (const auto& [node, position] : group.tails) bindings += activations(g.nodes[static_cast<size_t>(node)]) - 1;
  return bindings;
}

}  // namespace

std::vector<int> FusedGroup::nodes() const {
  std::vector<int> all;
  if (input_pad >= 0) all.push_back(input_pad);
  all.push_back(head);
  for (const auto& [node, position] : tails) {
    if (auto it = operand_pads.find(node); it != operand_pads.end()) all.push_back(it->second.second);
    all.push_back(node);
  }
  if (output_pad >= 0) all.push_back(output_pad);
  return all;
}

void RemoveNoOps(PartitionView& view, FusionPlan& plan) {
  std::vector<int> kept;
  for (int n : view.nodes) {
    const Node& node = view.graph->nodes[static_cast<size_t>(n)];
    if (node.outputs.size() == 1 && !node.inputs.empty() && IsNoOp(*view.graph, node)) {
      int source = node.inputs[0];
      if (auto it = plan.aliases.find(source); it != plan.aliases.end()) source = it->second;
      plan.aliases[node.outputs[0]] = source;
      continue;
    }
    kept.push_back(n);
  }
  view.nodes = std::move(kept);
}

void FoldMulAddIntoConvolutions(Graph& graph, PartitionView& view) {
  const std::map<int, int> consumers = CountConsumers(view);
  std::map<int, int> producer;  // tensor -> node
  for (int n : view.nodes) producer[graph.nodes[static_cast<size_t>(n)].outputs[0]] = n;
  std::set<int> removed;
  for (int n : view.nodes) {
    Node& m = graph.nodes[static_cast<size_t>(n)];
    if ((m.op != OpKind::kMul && m.op != OpKind::kAdd) || m.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const int t = m.inputs[static_cast<size_t>(side)];
      const Tensor& k = TensorOf(graph, m.inputs[static_cast<size_t>(1 - side)]);
      auto it = producer.find(t);
      if (it == producer.end() || removed.count(it->second) || !k.is_constant || k.type != DataType::kFloat32) continue;
      Node& conv = graph.nodes[static_cast<size_t>(it->second)];
      if (!IsConvolution(conv.op) || consumers.at(t) != 1 || view.escaping.count(t)) continue;
      if (TensorOf(graph, m.outputs[0]).shape != TensorOf(graph, t).shape) continue;
      const Activation conv_activation = conv.op == OpKind::kConv2d
                                             ? std::get<Conv2dAttributes>(conv.attributes).activation
                                             : std::get<DepthwiseConv2dAttributes>(conv.attributes).activation;
      if (conv_activation != Activation::kNone) continue;
      const Tensor& w = TensorOf(graph, conv.inputs[1]);
      const int channels = TensorOf(graph, t).shape.back();
      const int64_t kn = NumElements(k.shape);
      if (!w.is_constant || w.type != DataType::kFloat32 || (kn != 1 && (kn != channels || k.shape.back() != channels))) continue;
      if (conv.inputs.size() > 2 && conv.inputs[2] != kNoTensor && !TensorOf(graph, conv.inputs[2]).is_constant) continue;
      std::vector<float> factor(static_cast<size_t>(channels)), values(static_cast<size_t>(kn));
      std::memcpy(values.data(), k.data.data(), values.size() * 4);
      for (int c = 0; c < channels; ++c) factor[static_cast<size_t>(c)] = values[kn == 1 ? 0 : static_cast<size_t>(c)];
      // New bias (and, for MUL, weights) tensors: the old ones may be shared.
      std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
      if (conv.inputs.size() > 2 && conv.inputs[2] != kNoTensor) {
        std::memcpy(bias.data(), TensorOf(graph, conv.inputs[2]).data.data(), bias.size() * 4);
      }
      auto add_tensor = [&](const Shape& shape, const std::vector<float>& data, const std::string& name) {
        Tensor nt;
        nt.name = name;
        nt.shape = shape;
        nt.type = DataType::kFloat32;
        nt.is_constant = true;
        nt.data.resize(data.size() * 4);
        std::memcpy(nt.data.data(), data.data(), nt.data.size());
        graph.tensors.push_back(std::move(nt));
        return static_cast<int>(graph.tensors.size()) - 1;
      };
      if (m.op == OpKind::kMul) {
        std::vector<float> weights(static_cast<size_t>(NumElements(w.shape)));
        std::memcpy(weights.data(), w.data.data(), weights.size() * 4);
        // OHWI: the output channel is the first dimension; depthwise 1HWC: the last.
        const size_t per_out = weights.size() / static_cast<size_t>(channels);
        for (size_t i = 0; i < weights.size(); ++i) {
          weights[i] *= factor[conv.op == OpKind::kConv2d ? i / per_out : i % static_cast<size_t>(channels)];
        }
        for (int c = 0; c < channels; ++c) bias[static_cast<size_t>(c)] *= factor[static_cast<size_t>(c)];
        conv.inputs[1] = add_tensor(w.shape, weights, w.name + "_scaled");
      } else {
        for (int c = 0; c < channels; ++c) bias[static_cast<size_t>(c)] += factor[static_cast<size_t>(c)];
      }
      const int bias_tensor = add_tensor({channels}, bias, TensorOf(graph, t).name + "_bias");
      if (conv.inputs.size() < 3) conv.inputs.resize(3, kNoTensor);
      conv.inputs[2] = bias_tensor;
      const Activation activation = std::get<ElementwiseAttributes>(m.attributes).activation;
      if (conv.op == OpKind::kConv2d) std::get<Conv2dAttributes>(conv.attributes).activation = activation;
      else std::get<DepthwiseConv2dAttributes>(conv.attributes).activation = activation;
      conv.outputs[0] = m.outputs[0];
      producer[m.outputs[0]] = it->second;
      removed.insert(n);
      break;
    }
  }
  view.nodes.erase(std::remove_if(view.nodes.begin(), view.nodes.end(), [&](int n) { return removed.count(n) > 0; }),
                   view.nodes.end());
}

FusionPlan PlanFusion(const PartitionView& view, bool fusion, FusionPlan plan) {
  const Graph& g = *view.graph;
  std::map<int, int> group_of;  // tensor -> index of the group that writes it
  auto resolve = [&](int t) {
    auto it = plan.aliases.find(t);
    return it == plan.aliases.end() ? t : it->second;
  };
  // Uses through an alias (a removed no-op) count as uses of its source.
  std::map<int, int> consumers;
  for (int n : view.nodes) {
    for (int t : g.nodes[static_cast<size_t>(n)].inputs) {
      if (t != kNoTensor) ++consumers[resolve(t)];
    }
  }
  std::set<int> escaping;
  for (int t : view.escaping) escaping.insert(resolve(t));
  auto single_use = [&](int t) {
    auto it = consumers.find(t);
    return it != consumers.end() && it->second == 1 && !escaping.count(t);
  };
  for (int n : view.nodes) {
    const Node& node = g.nodes[static_cast<size_t>(n)];
    if (fusion) {
      // An elementwise node on a group's output: a tail of that group.
      if (shaders::IsElementwise(node.op)) {
        bool fused = false;
        // Into the producer of which input: a lone PAD's group last, so that
        // the PAD can rather be read through from another producer's group.
        std::vector<size_t> order;
        for (size_t i = 0; i < node.inputs.size(); ++i) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
          auto is_pad = [&](size_t i) {
            auto it = group_of.find(node.inputs[i]);
            return it != group_of.end() && g.nodes[static_cast<size_t>(plan.groups[static_cast<size_t>(it->second)].head)].op == OpKind::kPad;
          };
          return !is_pad(a) && is_pad(b);
        });
        for (size_t i : order) {
          if (fused) break;
          const int t = node.inputs[i];
          if (t == kNoTensor || TensorOf(g, t).is_constant || plan.aliases.count(t)) continue;
          auto it = group_of.find(t);
          if (it == group_of.end()) continue;
          FusedGroup& group = plan.groups[static_cast<size_t>(it->second)];
          if (group.output != t || group.output_pad >= 0 || !single_use(t)) continue;
          // Within the 8 storage buffers per shader every device offers
          // (GLES 3.1 as phones report it; docs/design.md).
          if (BindingsOf(g, group) + static_cast<int>(node.inputs.size()) - 1 > kMaxFusedBindings) continue;
          if (g.nodes[static_cast<size_t>(group.head)].outputs.size() != 1) continue;
          if (!SameLayout(TensorOf(g, node.outputs[0]).shape, TensorOf(g, t).shape)) continue;
          // The other operands must exist before the group runs; one made by
          // a lone channel PAD of something that does is read through it.
          bool ready = true;
          int absorbed = -1;
          std::pair<int, int> operand_pad;
          for (size_t j = 0; j < node.inputs.size(); ++j) {
            if (j == i) continue;
            const int other = resolve(node.inputs[j]);
            if (other == t) ready = false;
            auto producer = group_of.find(other);
            if (producer == group_of.end() || producer->second < it->second) continue;
            const FusedGroup& p = plan.groups[static_cast<size_t>(producer->second)];
            std::vector<int64_t> m;
            const Node& pad = g.nodes[static_cast<size_t>(p.head)];
            const bool lone_pad = p.tails.empty() && p.input_pad < 0 && p.output_pad < 0 && single_use(other) &&
                                  PadMargins(g, pad, &m) && m.size() >= 2 && m[m.size() - 2] == 0 &&
                                  std::all_of(m.begin(), m.end() - 2, [](int64_t v) { return v == 0; });
            auto source = lone_pad ? group_of.find(pad.inputs[0]) : group_of.end();
            if (lone_pad && absorbed < 0 && !plan.aliases.count(pad.inputs[0]) &&
                (source == group_of.end() || source->second < it->second)) {
              absorbed = producer->second;
              operand_pad = {static_cast<int>(j), p.head};
              continue;
            }
            ready = false;
          }
          if (!ready) continue;
          if (absorbed >= 0) {
            group_of.erase(g.nodes[static_cast<size_t>(operand_pad.second)].outputs[0]);
            plan.groups[static_cast<size_t>(absorbed)].head = -1;
            group.operand_pads[n] = operand_pad;
          }
          group.tails.push_back({n, static_cast<int>(i)});
          group.output = node.outputs[0];
          group_of[node.outputs[0]] = it->second;
          fused = true;
        }
        if (fused) continue;
      }
      std::vector<int64_t> margins;
      if (PadMargins(g, node, &margins) && margins.size() >= 2) {
        // A PAD of channels only, at the end: the producer writes the padded tensor.
        bool channels_after_only = margins[margins.size() - 2] == 0;
        for (size_t k = 0; k + 2 < margins.size(); ++k) channels_after_only &= margins[k] == 0;
        const int t = node.inputs[0];
        auto it = group_of.find(t);
        if (channels_after_only && it != group_of.end() && !plan.aliases.count(t)) {
          FusedGroup& group = plan.groups[static_cast<size_t>(it->second)];
          if (group.output == t && group.output_pad < 0 && single_use(t) &&
              g.nodes[static_cast<size_t>(group.head)].outputs.size() == 1) {
            group.output_pad = n;
            group.output = node.outputs[0];
            group_of[node.outputs[0]] = it->second;
            continue;
          }
        }
      }
      // A convolution or pool reading a spatial PAD: read through the PAD.
      const bool windowed = node.op == OpKind::kConv2d || node.op == OpKind::kDepthwiseConv2d ||
                            node.op == OpKind::kMaxPool2d || node.op == OpKind::kAveragePool2d;
      if (windowed && TensorOf(g, node.inputs[0]).shape.size() == 4) {
        const int t = node.inputs[0];
        auto it = group_of.find(t);
        if (it != group_of.end() && single_use(t)) {
          FusedGroup& pad_group = plan.groups[static_cast<size_t>(it->second)];
          const Node& pad = g.nodes[static_cast<size_t>(pad_group.head)];
          std::vector<int64_t> m;
          if (pad_group.tails.empty() && pad_group.output_pad < 0 && pad_group.input_pad < 0 && PadMargins(g, pad, &m) &&
              m.size() == 8 && m[0] == 0 && m[1] == 0 && m[6] == 0 && m[7] == 0) {
            FusedGroup group;
            group.head = n;
            group.input_pad = pad_group.head;
            group.pad = {static_cast<int>(m[2]), static_cast<int>(m[4]), static_cast<int>(m[3]), static_cast<int>(m[5])};
            group.output = node.outputs[0];
            // The PAD's group gives way to this one (its input exists earlier still).
            pad_group = group;
            const int index = it->second;  // erase frees the node `it` points to
            group_of.erase(it);
            for (int out : node.outputs) group_of[out] = index;
            continue;
          }
        }
      }
    }
    FusedGroup group;
    group.head = n;
    group.output = node.outputs[0];
    plan.groups.push_back(group);
    for (int out : node.outputs) group_of[out] = static_cast<int>(plan.groups.size()) - 1;
  }
  return plan;
}

}  // namespace mgd
