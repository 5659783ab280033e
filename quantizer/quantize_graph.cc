#include "quantizer/quantize_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/validator.h"
#include "ops/registry.h"

namespace mgd::quantizer {
namespace {

using ops::QuantizeRule;

std::vector<float> FloatsOf(const Tensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

template <typename T>
void SetConstant(Tensor& t, const std::vector<T>& values) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  t.data.assign(bytes, bytes + values.size() * sizeof(T));
  t.is_constant = true;
}

int32_t Round(double v, double lo, double hi) { return static_cast<int32_t>(std::clamp(std::round(v), lo, hi)); }

bool SameParams(const Quantization& a, const Quantization& b) {
  return a.scale == b.scale && a.zero_point == b.zero_point;
}

// The graph without the tensors nothing refers to any more (the float
// originals of what went int8), indices renumbered.
Graph Compact(Graph g) {
  std::vector<bool> used(g.tensors.size(), false);
  auto use = [&](int t) {
    if (t != kNoTensor) used[static_cast<size_t>(t)] = true;
  };
  for (const Node& n : g.nodes) {
    for (int t : n.inputs) use(t);
    for (int t : n.outputs) use(t);
  }
  for (int t : g.inputs) use(t);
  for (int t : g.outputs) use(t);
  std::vector<int> index(g.tensors.size(), kNoTensor);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!used[t]) continue;
    index[t] = static_cast<int>(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  auto remap = [&](std::vector<int>& ts) {
    for (int& t : ts) t = t == kNoTensor ? kNoTensor : index[static_cast<size_t>(t)];
  };
  for (Node& n : g.nodes) {
    remap(n.inputs);
    remap(n.outputs);
  }
  remap(g.inputs);
  remap(g.outputs);
  g.tensors = std::move(kept);
  return g;
}

class Rewriter {
 public:
  Rewriter(const Calibration& c, const QuantizeOptions& options)
      : in_(c.graph),
        ranges_(c.ranges),
        options_(options),
        out_(c.graph),
        int8_of_(c.graph.tensors.size(), kNoTensor),
        float_ok_(c.graph.tensors.size(), true),
        filter_done_(c.graph.tensors.size(), false) {
    out_.nodes.clear();
  }

  absl::StatusOr<Graph> Run(QuantizeReport* report) {
    if (options_.int8_io) {
      for (int& input : out_.inputs) {
        const int t = input;
        if (!IsFloat(t) || !ranges_[static_cast<size_t>(t)].seen()) continue;
        input = NewInt8(t, ActivationParams(ranges_[static_cast<size_t>(t)]), "");
        int8_of_[static_cast<size_t>(t)] = input;
        float_ok_[static_cast<size_t>(t)] = false;
      }
    }
    for (const Node& node : in_.nodes) {
      if (options_.dynamic_range) {
        EmitWithInt8Filter(node);
      } else if (Int8Permitted(node)) {
        EmitInt8(node);
      } else {
        EmitFloat(node);
      }
    }
    for (int& output : out_.outputs) {
      const int int8 = int8_of_[static_cast<size_t>(output)];
      output = options_.int8_io && int8 != kNoTensor ? int8 : Float(output);
    }
    // A float original that is still used beside its int8 copy of the same
    // name: "_float" tells them apart.
    for (size_t t = 0; t < in_.tensors.size(); ++t) {
      const int q = int8_of_[t];
      if (q != kNoTensor && out_.tensors[static_cast<size_t>(q)].name == out_.tensors[t].name) {
        out_.tensors[t].name += "_float";
      }
    }
    Graph g = Compact(std::move(out_));
    if (absl::Status s = ValidateGraph(g); !s.ok()) {
      return absl::InternalError(fmt::format("the quantized graph is not valid: {}", std::string(s.message())));
    }
    if (report != nullptr) *report = report_;
    return g;
  }

 private:
  bool IsFloat(int t) const { return in_.tensors[static_cast<size_t>(t)].type == DataType::kFloat32; }
  bool IsConstant(int t) const { return in_.tensors[static_cast<size_t>(t)].is_constant; }
  bool Io(int t) const {
    return std::find(in_.inputs.begin(), in_.inputs.end(), t) != in_.inputs.end() ||
           std::find(in_.outputs.begin(), in_.outputs.end(), t) != in_.outputs.end();
  }
  const Quantization& ParamsOf(int t) const { return *out_.tensors[static_cast<size_t>(t)].quantization; }

  // A new int8 tensor shaped as original `t`: named as it (with "_int8"
  // where the float original stays the graph's input or output), or `name`.
  int NewInt8(int t, Quantization q, const std::string& name) {
    Tensor tensor;
    const Tensor& original = in_.tensors[static_cast<size_t>(t)];
    tensor.name = !name.empty() ? name : (Io(t) && !options_.int8_io ? original.name + "_int8" : original.name);
    tensor.shape = original.shape;
    tensor.type = DataType::kInt8;
    tensor.quantization = std::move(q);
    out_.tensors.push_back(std::move(tensor));
    return static_cast<int>(out_.tensors.size()) - 1;
  }

  void Convert(OpKind op, int from, int to) {
    Node n;
    n.op = op;
    n.inputs = {from};
    n.outputs = {to};
    out_.nodes.push_back(std::move(n));
    ++report_.conversions;
  }

  // Original `t` as a float tensor: itself, or (when only its int8 copy is
  // computed) a DEQUANTIZE of that into it.
  int Float(int t) {
    if (!float_ok_[static_cast<size_t>(t)]) {
      Convert(OpKind::kDequantize, int8_of_[static_cast<size_t>(t)], t);
      float_ok_[static_cast<size_t>(t)] = true;
    }
    return t;
  }

  // Original float `t` as int8: a constant's values per tensor, or an
  // activation through a QUANTIZE with its calibrated parameters.
  int Int8(int t) {
    int& q = int8_of_[static_cast<size_t>(t)];
    if (q != kNoTensor) return q;
    const Tensor& original = in_.tensors[static_cast<size_t>(t)];
    const Quantization params = ActivationParams(ranges_[static_cast<size_t>(t)]);
    const int made = NewInt8(t, params, "");
    if (original.is_constant) {
      std::vector<int8_t> values;
      for (float v : FloatsOf(original)) {
        values.push_back(static_cast<int8_t>(Round(v / params.scale[0] + static_cast<double>(params.zero_point[0]), -128, 127)));
      }
      SetConstant(out_.tensors[static_cast<size_t>(made)], values);
    } else {
      Convert(OpKind::kQuantize, t, made);
    }
    q = made;
    return made;
  }

  // A constant float filter as int8, symmetric (zero point 0), one scale
  // per slice along `axis` (-1: one scale).
  int QuantizeFilter(int t, int axis) {
    const Tensor& original = in_.tensors[static_cast<size_t>(t)];
    if (options_.per_tensor || axis >= static_cast<int>(original.shape.size())) axis = -1;
    const std::vector<float> w = FloatsOf(original);
    const int64_t channels = axis < 0 ? 1 : original.shape[static_cast<size_t>(axis)];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis + 1); axis >= 0 && d < original.shape.size(); ++d) inner *= original.shape[d];
    auto channel = [&](size_t i) { return axis < 0 ? size_t{0} : static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels); };
    std::vector<float> largest(static_cast<size_t>(channels), 0.0f);
    for (size_t i = 0; i < w.size(); ++i) largest[channel(i)] = std::max(largest[channel(i)], std::fabs(w[i]));
    Quantization q{{}, {}, std::max(axis, 0)};
    for (float m : largest) {
      q.scale.push_back(m > 0.0f ? m / 127.0f : 1.0f);  // an all-zero slice: any scale
      q.zero_point.push_back(0);
    }
    std::vector<int8_t> values;
    for (size_t i = 0; i < w.size(); ++i) values.push_back(static_cast<int8_t>(Round(w[i] / q.scale[channel(i)], -127, 127)));
    const int made = NewInt8(t, std::move(q), original.name);
    SetConstant(out_.tensors[static_cast<size_t>(made)], values);
    return made;
  }

  // A constant float bias as int32 of scale input x filter, per channel
  // where the filter is.
  int QuantizeBias(int t, float input_scale, const Quantization& filter) {
    const Tensor& original = in_.tensors[static_cast<size_t>(t)];
    const std::vector<float> b = FloatsOf(original);
    const bool per_channel = filter.scale.size() > 1 && filter.scale.size() == b.size();
    Quantization q{{}, {}, 0};
    for (size_t c = 0; c < (per_channel ? b.size() : 1); ++c) {
      q.scale.push_back(input_scale * filter.scale[c]);
      q.zero_point.push_back(0);
    }
    std::vector<int32_t> values;
    for (size_t c = 0; c < b.size(); ++c) {
      values.push_back(Round(b[c] / static_cast<double>(q.scale[per_channel ? c : 0]), -2147483647.0, 2147483647.0));
    }
    Tensor tensor;
    tensor.name = original.name;
    tensor.shape = original.shape;
    tensor.type = DataType::kInt32;
    tensor.quantization = std::move(q);
    SetConstant(tensor, values);
    out_.tensors.push_back(std::move(tensor));
    return static_cast<int>(out_.tensors.size()) - 1;
  }

  // Whether the node can go int8: its op has a rule, its output is one
  // float tensor with a calibrated range (where the rule reads it), its
  // filter and bias are constant floats, and its float inputs are
  // constants or calibrated activations.
  bool Int8Permitted(const Node& node) const {
    const ops::OpDefinition* definition = node.op == OpKind::kCustom ? nullptr : ops::FindBuiltin(node.op);
    if (definition == nullptr) return false;
    const QuantizeRule& rule = definition->quantize;
    if (rule.output == QuantizeRule::Output::kNone || node.outputs.size() != 1 || node.inputs.empty()) return false;
    const int out = node.outputs[0];
    if (!IsFloat(out) || (rule.output == QuantizeRule::Output::kCalibrated && !ranges_[static_cast<size_t>(out)].seen())) {
      return false;
    }
    const int first = node.inputs[0];
    if (first == kNoTensor || !IsFloat(first) || IsConstant(first)) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int t = node.inputs[i];
      if (t == kNoTensor) continue;
      const bool weight = static_cast<int>(i) == rule.filter || static_cast<int>(i) == rule.bias;
      if (weight && !(IsFloat(t) && IsConstant(t))) return false;
      if (!weight && IsFloat(t) && !ranges_[static_cast<size_t>(t)].seen()) return false;
    }
    return rule.filter < 0 || (static_cast<size_t>(rule.filter) < node.inputs.size() && node.inputs[static_cast<size_t>(rule.filter)] != kNoTensor);
  }

  void EmitInt8(const Node& node) {
    const QuantizeRule& rule = ops::FindBuiltin(node.op)->quantize;
    Node n = node;
    std::vector<size_t> data;  // the float inputs that are neither filter nor bias
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int t = n.inputs[i];
      if (t == kNoTensor || !IsFloat(t) || static_cast<int>(i) == rule.filter || static_cast<int>(i) == rule.bias) continue;
      n.inputs[i] = Int8(t);
      data.push_back(i);
    }
    if (rule.filter >= 0) {
      const auto f = static_cast<size_t>(rule.filter);
      n.inputs[f] = QuantizeFilter(node.inputs[f], rule.filter_axis);
      const auto b = static_cast<size_t>(rule.bias);
      if (rule.bias >= 0 && b < n.inputs.size() && n.inputs[b] != kNoTensor) {
        n.inputs[b] = QuantizeBias(node.inputs[b], ParamsOf(n.inputs[0]).scale[0], ParamsOf(n.inputs[f]));
      }
    }
    const int out = node.outputs[0];
    Quantization params;
    switch (rule.output) {
      case QuantizeRule::Output::kInput: params = ParamsOf(n.inputs[0]); break;
      case QuantizeRule::Output::kFixed: params = Quantization{{rule.scale}, {rule.zero_point}, 0}; break;
      default: params = ActivationParams(ranges_[static_cast<size_t>(out)]); break;
    }
    if (rule.inputs_share_output) {
      for (size_t i : data) {
        if (SameParams(ParamsOf(n.inputs[i]), params)) continue;
        const int requantized = NewInt8(node.inputs[i], params, in_.tensors[static_cast<size_t>(node.inputs[i])].name + "_requantized");
        Convert(OpKind::kQuantize, n.inputs[i], requantized);
        n.inputs[i] = requantized;
      }
    }
    const int q = NewInt8(out, std::move(params), "");
    n.outputs[0] = q;
    int8_of_[static_cast<size_t>(out)] = q;
    float_ok_[static_cast<size_t>(out)] = false;
    out_.nodes.push_back(std::move(n));
    ++report_.int8_nodes;
  }

  void EmitFloat(const Node& node) {
    Node n = node;
    for (int& t : n.inputs) {
      if (t != kNoTensor && IsFloat(t)) t = Float(t);
    }
    out_.nodes.push_back(std::move(n));
    ++report_.float_nodes;
  }

  // --dynamic-range: the node as it is, its constant filter int8 behind a
  // DEQUANTIZE into the float original.
  void EmitWithInt8Filter(const Node& node) {
    const ops::OpDefinition* definition = node.op == OpKind::kCustom ? nullptr : ops::FindBuiltin(node.op);
    const int f = definition != nullptr ? definition->quantize.filter : -1;
    if (f >= 0 && static_cast<size_t>(f) < node.inputs.size()) {
      const int t = node.inputs[static_cast<size_t>(f)];
      if (t != kNoTensor && IsFloat(t) && IsConstant(t) && !filter_done_[static_cast<size_t>(t)]) {
        const int q = QuantizeFilter(t, definition->quantize.filter_axis);
        Tensor& original = out_.tensors[static_cast<size_t>(t)];
        original.is_constant = false;
        original.data = std::vector<uint8_t>{};
        out_.tensors[static_cast<size_t>(q)].name += "_int8";
        Convert(OpKind::kDequantize, q, t);
        filter_done_[static_cast<size_t>(t)] = true;
        ++report_.int8_nodes;
      }
    }
    out_.nodes.push_back(node);
    ++report_.float_nodes;
  }

  const Graph& in_;
  const std::vector<Range>& ranges_;
  QuantizeOptions options_;
  Graph out_;
  std::vector<int> int8_of_;        // per original tensor: its int8 copy, or kNoTensor
  std::vector<bool> float_ok_;      // per original tensor: whether it holds its float value
  std::vector<bool> filter_done_;   // --dynamic-range: filters already int8
  QuantizeReport report_;
};

}  // namespace

Quantization ActivationParams(const Range& range) {
  const double lo = range.seen() ? std::min(range.min, 0.0f) : 0.0;
  const double hi = range.seen() ? std::max(range.max, 0.0f) : 0.0;
  // A tensor that is always 0: any scale holds it.
  const double scale = hi > lo ? (hi - lo) / 255.0 : 1.0 / 255.0;
  const auto s = static_cast<float>(std::max(scale, 1e-9));
  return Quantization{{s}, {Round(-128.0 - lo / static_cast<double>(s), -128, 127)}, 0};
}

absl::StatusOr<Graph> QuantizeGraph(const Calibration& calibration, const QuantizeOptions& options,
                                    QuantizeReport* report) {
  if (calibration.ranges.size() != calibration.graph.tensors.size()) {
    return absl::InvalidArgumentError("the calibration's ranges do not match its graph");
  }
  return Rewriter(calibration, options).Run(report);
}

}  // namespace mgd::quantizer
