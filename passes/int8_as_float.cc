#include "passes/int8_as_float.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "model/status_macros.h"
#include "model/validator.h"
#include "ops/op_definition.h"
#include "ops/quantize/quantize.h"
#include "ops/registry.h"
#include "ops/reshape/reshape.h"

namespace mgd {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

// A quantized constant's real values: (q - zero point) x scale, per channel
// along the quantized dimension where it has several.
std::vector<float> Dequantized(const Tensor& t) {
  const Quantization& q = *t.quantization;
  const int64_t n = NumElements(t.shape);
  const auto channels = static_cast<int64_t>(q.scale.size());
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(q.quantized_dimension) + 1; channels > 1 && d < t.shape.size(); ++d) inner *= t.shape[d];
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t raw = 0;
    switch (t.type) {
      case DataType::kInt8: raw = reinterpret_cast<const int8_t*>(t.data.data())[i]; break;
      case DataType::kUInt8: raw = t.data.data()[i]; break;
      default: raw = reinterpret_cast<const int32_t*>(t.data.data())[i]; break;
    }
    const auto c = static_cast<size_t>(channels > 1 ? (i / inner) % channels : 0);
    v[static_cast<size_t>(i)] = static_cast<float>(raw - q.zero_point[c]) * q.scale[c];
  }
  return v;
}

// The grid of 8-bit activation `t` as int8 parameters: a uint8 tensor's
// values q - zero point are (q - 128) - (zero point - 128).
Quantization Int8Grid(const Tensor& t) {
  Quantization grid = *t.quantization;
  if (t.type == DataType::kUInt8) grid.zero_point[0] -= 128;
  return grid;
}

// The FAKE_QUANT that rounds onto an 8-bit tensor's grid: its ends are the
// type's lowest and highest values.
ops::FakeQuantAttributes GridOf(const Tensor& t) {
  const float s = t.quantization->scale[0];
  const auto zp = static_cast<float>(t.quantization->zero_point[0]);
  const float lo = t.type == DataType::kInt8 ? -128.0f : 0.0f;
  return {(lo - zp) * s, (lo + 255.0f - zp) * s, 8, false};
}

class Rewriter {
 public:
  explicit Rewriter(const Graph& g) : in_(g), out_(g), real_(g.tensors.size(), kNoTensor) { out_.nodes.clear(); }

  absl::StatusOr<Graph> Run() {
    MGD_RETURN_IF_ERROR(Retype());
    for (int t : in_.inputs) {
      if (real_[static_cast<size_t>(t)] == kNoTensor) continue;
      Emit(OpKind::kDequantize, {}, t, real_[static_cast<size_t>(t)]);
    }
    for (const Node& node : in_.nodes) Rewrite(node);
    for (int t : in_.outputs) {
      const Tensor& original = in_.tensors[static_cast<size_t>(t)];
      if (Is8Bit(original.type) && !original.is_constant) Emit(OpKind::kQuantize, {}, real_[static_cast<size_t>(t)], t);
    }
    if (absl::Status s = ValidateGraph(out_); !s.ok()) {
      return absl::InternalError(fmt::format("the int8 graph as float is not valid: {}", std::string(s.message())));
    }
    return std::move(out_);
  }

 private:
  bool Io(int t) const {
    return std::find(in_.inputs.begin(), in_.inputs.end(), t) != in_.inputs.end() ||
           std::find(in_.outputs.begin(), in_.outputs.end(), t) != in_.outputs.end();
  }

  int NewFloat(int like, const std::string& suffix) {
    Tensor t;
    t.name = in_.tensors[static_cast<size_t>(like)].name + suffix;
    t.shape = in_.tensors[static_cast<size_t>(like)].shape;
    out_.tensors.push_back(std::move(t));
    return static_cast<int>(out_.tensors.size()) - 1;
  }

  // 8-bit activations become float (the graph's inputs and outputs get a
  // float twin); quantized constants that nodes compute with become float
  // constants. A constant behind DEQUANTIZE stays: the interpreter folds it.
  absl::Status Retype() {
    std::vector<bool> dequantized_at_load(in_.tensors.size(), false);
    for (const Node& n : in_.nodes) {
      if (n.op == OpKind::kDequantize && n.inputs[0] != kNoTensor) dequantized_at_load[static_cast<size_t>(n.inputs[0])] = true;
    }
    for (size_t t = 0; t < in_.tensors.size(); ++t) {
      const Tensor& original = in_.tensors[t];
      Tensor& tensor = out_.tensors[t];
      if (!original.quantization.has_value() || original.quantization->scale.empty()) continue;
      if (original.is_constant) {
        if ((Is8Bit(original.type) || original.type == DataType::kInt32) && !dequantized_at_load[t]) {
          const std::vector<float> v = Dequantized(original);
          tensor.data.assign(reinterpret_cast<const uint8_t*>(v.data()),
                             reinterpret_cast<const uint8_t*>(v.data()) + v.size() * sizeof(float));
          tensor.type = DataType::kFloat32;
          // An 8-bit constant keeps its parameters, which float tensors
          // otherwise ignore: they show a GPU that its values lie on an
          // 8-bit grid, which it may store them on
          // (shaders::NodeContext::int8_filters).
          if (!Is8Bit(original.type)) tensor.quantization.reset();
        }
        continue;
      }
      if (!Is8Bit(original.type)) continue;
      if (original.quantization->scale.size() != 1) {
        return absl::UnimplementedError(fmt::format("{} has per-channel parameters; an activation has one scale",
                                                    TensorLabel(in_, static_cast<int>(t))));
      }
      if (Io(static_cast<int>(t))) {
        real_[t] = NewFloat(static_cast<int>(t), "_real");
      } else {
        tensor.type = DataType::kFloat32;
        real_[t] = static_cast<int>(t);
      }
      // Every node that writes the float tensor rounds onto the grid or
      // moves values that lie on it (Rewrite), so it keeps the grid, as an
      // int8 one: a GPU may then sum it in integers (Int8Grid).
      out_.tensors[static_cast<size_t>(real_[t])].quantization = Int8Grid(original);
    }
    return absl::OkStatus();
  }

  void Emit(OpKind op, Attributes attributes, int from, int to) {
    Node n;
    n.op = op;
    n.attributes = std::move(attributes);
    n.inputs = {from};
    n.outputs = {to};
    out_.nodes.push_back(std::move(n));
  }

  void Rewrite(const Node& node) {
    Node n = node;
    for (int& t : n.inputs) {
      if (t != kNoTensor && real_[static_cast<size_t>(t)] != kNoTensor) t = real_[static_cast<size_t>(t)];
    }
    const int out = node.outputs.empty() ? kNoTensor : node.outputs[0];
    const bool int8_out = out != kNoTensor && real_[static_cast<size_t>(out)] != kNoTensor;
    if (!int8_out) {
      // DEQUANTIZE of an activation: the values are real already.
      if (node.op == OpKind::kDequantize && !in_.tensors[static_cast<size_t>(node.inputs[0])].is_constant) {
        Emit(OpKind::kReshape, ops::ReshapeAttributes{in_.tensors[static_cast<size_t>(out)].shape}, n.inputs[0], out);
        return;
      }
      out_.nodes.push_back(std::move(n));
      return;
    }
    const int target = real_[static_cast<size_t>(out)];
    const ops::FakeQuantAttributes grid = GridOf(in_.tensors[static_cast<size_t>(out)]);
    if (node.op == OpKind::kQuantize) {
      Emit(OpKind::kFakeQuant, grid, n.inputs[0], target);
      return;
    }
    // An op that only relabels its input's shape keeps its values on the
    // grid, and so does one that moves values between grids alike; any
    // other is rounded onto it.
    const ops::OpDefinition* definition = ops::FindBuiltin(node.op);
    if (definition != nullptr && (definition->is_identity == ops::AlwaysIdentity || StaysOnTheGrid(*definition, node))) {
      n.outputs[0] = target;
      out_.nodes.push_back(std::move(n));
      return;
    }
    const int unrounded = NewFloat(out, "_unrounded");
    n.outputs[0] = unrounded;
    out_.nodes.push_back(std::move(n));
    Emit(OpKind::kFakeQuant, grid, unrounded, target);
  }

  // Whether the node only moves values (QuantizeRule::moves_values) from
  // 8-bit activations of its output's parameters.
  bool StaysOnTheGrid(const ops::OpDefinition& definition, const Node& node) const {
    if (definition.quantize.moves_values == nullptr || !definition.quantize.moves_values(node)) return false;
    const Quantization& out = *in_.tensors[static_cast<size_t>(node.outputs[0])].quantization;
    for (int t : node.inputs) {
      if (t == kNoTensor) continue;
      const Tensor& input = in_.tensors[static_cast<size_t>(t)];
      if (input.is_constant && !Is8Bit(input.type)) continue;  // PAD's paddings, an axis
      if (!Is8Bit(input.type) || input.is_constant || !input.quantization.has_value() ||
          input.quantization->scale.size() != 1 || input.quantization->scale[0] != out.scale[0] ||
          input.quantization->zero_point[0] != out.zero_point[0]) {
        return false;
      }
    }
    return true;
  }

  const Graph& in_;
  Graph out_;
  std::vector<int> real_;  // per original tensor: the float tensor of an 8-bit activation's real values
};

}  // namespace

Graph WithHybridFiltersDequantized(Graph graph) {
  std::vector<int> dequantized(graph.tensors.size(), kNoTensor);  // per 8-bit filter, its float copy
  for (Node& node : graph.nodes) {
    const ops::OpDefinition* definition = node.op == OpKind::kCustom ? nullptr : ops::FindBuiltin(node.op);
    if (definition == nullptr || node.outputs.empty()) continue;
    const int f = definition->quantize.filter;
    if (f < 0 || static_cast<size_t>(f) >= node.inputs.size()) continue;
    const int t = node.inputs[static_cast<size_t>(f)];
    if (t == kNoTensor || graph.tensors[static_cast<size_t>(node.outputs[0])].type != DataType::kFloat32) continue;
    const Tensor& filter = graph.tensors[static_cast<size_t>(t)];
    if (!Is8Bit(filter.type) || !filter.is_constant || !filter.quantization.has_value()) continue;
    int& copy = dequantized[static_cast<size_t>(t)];
    if (copy == kNoTensor) {
      const std::vector<float> v = Dequantized(filter);
      Tensor real;
      real.name = filter.name + "_dequantized";
      real.shape = filter.shape;
      real.quantization = filter.quantization;  // as Int8AsFloat keeps it
      real.data.assign(reinterpret_cast<const uint8_t*>(v.data()),
                       reinterpret_cast<const uint8_t*>(v.data()) + v.size() * sizeof(float));
      real.is_constant = true;
      graph.tensors.push_back(std::move(real));
      copy = static_cast<int>(graph.tensors.size()) - 1;
    }
    node.inputs[static_cast<size_t>(f)] = copy;
  }
  return graph;
}

bool HasInt8Activations(const Graph& graph) {
  for (const Node& n : graph.nodes) {
    for (int t : n.outputs) {
      if (t != kNoTensor && Is8Bit(graph.tensors[static_cast<size_t>(t)].type)) return true;
    }
  }
  return false;
}

absl::StatusOr<Graph> Int8AsFloat(const Graph& graph) { return Rewriter(graph).Run(); }

}  // namespace mgd
