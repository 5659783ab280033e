#include "delegate/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "delegate/fusion.h"
#include "layout/phwc4.h"
#include "model/fp16.h"
#include "ops/concatenation/store_through.h"
#include "passes/passes.h"
#include "shaders/generator.h"
#include "shaders/layout_conversion.h"
#include "shaders/ops.h"
#include "shaders/parameters.h"

namespace mgd {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class Builder {
 public:
  // `graph` as the passes left it; `model_graph` as the model has it.
  Builder(const Graph& graph, const Graph& model_graph, const CompileOptions& options, const FusionPlan& plan)
      : graph_(graph), model_graph_(model_graph), options_(options), plan_(plan) {}

  int Resolve(int t) const {
    auto it = plan_.aliases.find(t);
    return it == plan_.aliases.end() ? t : it->second;
  }

  // The PHWC4 buffer of tensor `t` (a constant one is converted now, a
  // partition input by a conversion dispatch the first time one is read so).
  absl::StatusOr<int> Activation(int tensor) {
    const int t = Resolve(tensor);
    if (auto it = activation_.find(t); it != activation_.end()) return it->second;
    if (auto it = unconverted_.find(t); it != unconverted_.end()) {
      const int user = it->second;
      unconverted_.erase(it);
      auto inside = Activation(t);  // a plain activation now
      if (!inside.ok()) return inside.status();
      const layout::Bhwc shape = model_.buffers[static_cast<size_t>(*inside)].shape;
      if (absl::Status s = Conversion(graph_.tensors[static_cast<size_t>(t)].type, shape, user, *inside, true); !s.ok()) {
        return s;
      }
      return inside;
    }
    const Tensor& info = graph_.tensors[static_cast<size_t>(t)];
    auto shape = shaders::ToBhwc(info.shape);
    if (!shape.ok()) return shape.status();
    CompiledBuffer b;
    b.tensor = t;
    b.shape = *shape;
    b.bytes = static_cast<size_t>(shape->batch) * shape->slices() * shape->height * shape->width *
              shaders::Vec4Bytes(options_.precision.half_storage());
    if (info.is_constant) {
      if (!shaders::IsActivationType(info.type)) {
        return absl::UnimplementedError(fmt::format("{} constant", DataTypeName(info.type)));
      }
      const std::vector<float> values = ConstantFloats(info);  // a bool one as 0.0/1.0, as bools are held
      std::vector<uint8_t> bytes(b.bytes);
      if (options_.precision.half_storage()) {
        layout::BhwcToPhwc4Half(values.data(), *shape, reinterpret_cast<uint16_t*>(bytes.data()));
      } else {
        layout::BhwcToPhwc4(values.data(), *shape, reinterpret_cast<float*>(bytes.data()));
      }
      b.role = BufferRole::kConstant;
      b.constant = AddConstant(std::move(bytes));
    }
    model_.buffers.push_back(b);
    activation_[t] = static_cast<int>(model_.buffers.size()) - 1;
    return activation_[t];
  }

  // A constant buffer of `element_type` (shaders::BufferDecl): vec4s as
  // fp16 with `half_storage`; i8vec4s as bytes, their values integers in
  // [-128, 127].
  int Constant(const std::vector<float>& values, const std::string& element_type, bool half_storage) {
    const bool half = half_storage && element_type == "vec4";
    const bool int8 = element_type == shaders::kInt8Vec4;
    std::vector<uint8_t> bytes(values.size() * (int8 ? 1 : half ? 2 : 4));
    if (int8) {
      for (size_t i = 0; i < values.size(); ++i) bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(values[i]));
    } else if (half) {
      FloatsToHalves(values.data(), reinterpret_cast<uint16_t*>(bytes.data()), values.size());
    } else {
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    CompiledBuffer b;
    b.role = BufferRole::kConstant;
    b.bytes = bytes.size();
    b.constant = AddConstant(std::move(bytes));
    model_.buffers.push_back(b);
    return static_cast<int>(model_.buffers.size()) - 1;
  }

  // A user-side BHWC buffer for partition input/output `t` and its
  // conversion: float32 and bool tensors are PHWC4 activations inside (a
  // bool as 0.0/1.0); other inputs have none, their readers taking them as
  // given (an image's bytes, token ids).
  absl::Status Edge(int t, bool inbound) {
    const Tensor& tensor = graph_.tensors[static_cast<size_t>(t)];
    auto shape = shaders::ToBhwc(tensor.shape);
    if (!shape.ok()) return shape.status();
    const bool as_given = inbound && !shaders::IsActivationType(tensor.type);
    if (!inbound && !shaders::IsActivationType(tensor.type)) {
      return absl::InternalError(fmt::format("partition output {} is {}", tensor.name, DataTypeName(tensor.type)));
    }
    CompiledBuffer user;
    user.role = inbound ? BufferRole::kUserInput : BufferRole::kUserOutput;
    user.tensor = t;
    user.shape = *shape;
    user.bytes = static_cast<size_t>(shape->elements()) * ElementSize(tensor.type);
    model_.buffers.push_back(user);
    const int user_index = static_cast<int>(model_.buffers.size()) - 1;
    (inbound ? model_.inputs : model_.outputs).push_back(user_index);
    if (inbound) {
      user_input_[t] = user_index;
      // Converted when an op reads it as an activation (Activation): inputs
      // read only as given (raw_inputs) need no conversion dispatch.
      if (!as_given) unconverted_[Resolve(t)] = user_index;
      return absl::OkStatus();
    }
    auto inside = Activation(t);
    if (!inside.ok()) return inside.status();
    return Conversion(tensor.type, *shape, user_index, *inside, false);
  }

  // The dispatch between user buffer `user_index` (of a float32 or bool
  // tensor) and activation `inside`.
  absl::Status Conversion(DataType type, const layout::Bhwc& shape, int user_index, int inside, bool inbound) {
    const bool half = options_.precision.half_storage(), bools = type == DataType::kBool;
    const shaders::ConversionShader conversion =
        inbound ? (bools ? shaders::BoolBhwcToPhwc4Shader(shape, half) : shaders::BhwcToPhwc4Shader(shape, half))
                : (bools ? shaders::Phwc4ToBoolBhwcShader(shape, half) : shaders::Phwc4ToBhwcShader(shape, half));
    CompiledDispatch d;
    d.code = conversion.code;
    d.groups = conversion.groups;
    if (inbound) d.grid = shaders::BlockedExtent(shape);  // the outbound one runs over BHWC elements in 1-D
    d.key = {inbound ? (bools ? "BOOL_TO_PHWC4" : "BHWC_TO_PHWC4") : (bools ? "PHWC4_TO_BOOL" : "PHWC4_TO_BHWC"),
             Extent(shape), Extent(shape), {}, half};
    d.bindings = {{inbound ? user_index : inside, false}, {inbound ? inside : user_index, true}};
    Add(std::move(d));
    return absl::OkStatus();
  }

  absl::Status Group(const FusedGroup& group) {
    Node head = graph_.nodes[static_cast<size_t>(group.head)];
    const Precision precision = PrecisionOf(group);
    shaders::NodeContext ctx{&graph_, group.head, &head, precision, {}};
    // The shader's input 0 is what the first node of the group reads: the
    // source's or the producer's input when there is one, past a fused PAD.
    Node producer, source;
    if (group.producer >= 0) {
      producer = graph_.nodes[static_cast<size_t>(group.producer)];
      ctx.producer = &producer;
      ctx.producer_index = group.producer;
    }
    if (group.source >= 0) {
      source = graph_.nodes[static_cast<size_t>(group.source)];
      ctx.source = &source;
      ctx.source_index = group.source;
    }
    Node& reader = group.source >= 0 ? source : group.producer >= 0 ? producer : head;
    if (group.input_pad >= 0) {
      reader.inputs[0] = graph_.nodes[static_cast<size_t>(group.input_pad)].inputs[0];
      ctx.pad = group.pad;
    }
    if (group.producer >= 0) head.inputs[0] = reader.inputs[0];
    if (group.input_gate >= 0) {
      head.inputs[0] = graph_.nodes[static_cast<size_t>(group.input_gate)].inputs[static_cast<size_t>(1 - group.gate_operand)];
    }
    ctx.workgroup_reduction = group.output_pad < 0;
    ctx.split_conv_outputs = options_.split_conv_outputs;
    ctx.split_fused_sums = options_.split_fused_sums;
    ctx.conv_block = options_.conv_block;
    ctx.gate_invocations = options_.gate_invocations;
    ctx.int8_filters = options_.int8_filters;
    ctx.int8_dot = options_.int8_dot;
    auto shader = shaders::GenerateShader(ctx);
    if (!shader.ok() && group.producer >= 0) {
      // The planner asked without the table's blocks and split sums; with
      // these the consumer's generator declined its producer: a dispatch
      // each.
      FusedGroup made_first;
      made_first.head = group.source >= 0 ? group.source : group.producer;
      made_first.input_pad = group.input_pad;
      made_first.pad = group.pad;
      made_first.output = graph_.nodes[static_cast<size_t>(made_first.head)].outputs[0];
      if (absl::Status s = Group(made_first); !s.ok()) return s;
      if (group.source >= 0) {
        FusedGroup made_next;
        made_next.head = group.producer;
        made_next.output = producer.outputs[0];
        if (absl::Status s = Group(made_next); !s.ok()) return s;
      }
      FusedGroup then = group;
      then.producer = then.source = then.input_pad = -1;
      then.pad = {};
      return Group(then);
    }
    if (shader.ok() && group.input_gate >= 0) {
      auto in = shaders::ToBhwc(graph_.tensors[static_cast<size_t>(head.inputs[0])].shape);
      if (!in.ok() || !shaders::ReadThroughGate(shader->code, "in0", *in)) {
        shader = absl::UnimplementedError("reads its input other than through in0_at");
      }
    }
    if (!shader.ok() && group.input_gate >= 0) return GateApart(group);
    if (!shader.ok()) return Error(group.head, shader.status());
    if (!shader->linkable && !group.stores_through.empty()) {
      return Error(group.head, absl::InternalError("stores its output itself: its store cannot move"));
    }
    if (!shader->linkable && (!group.tails.empty() || group.output_pad >= 0)) return OneByOne(group);
    CompiledDispatch d;
    d.nodes = group.nodes();
    d.code = shader->code;
    d.groups = shader->groups;
    for (int position : shader->activation_inputs) {
      auto b = Activation(head.inputs[static_cast<size_t>(position)]);
      if (!b.ok()) return Error(group.head, b.status());
      d.bindings.push_back({*b, false});
    }
    for (int position : shader->raw_inputs) {
      const int t = head.inputs[static_cast<size_t>(position)];
      auto it = user_input_.find(t);
      if (it == user_input_.end()) {
        return Error(group.head, absl::UnimplementedError(fmt::format(
                                     "reads {} as it was given, but it is not an input of the partition",
                                     graph_.tensors[static_cast<size_t>(t)].name)));
      }
      d.bindings.push_back({it->second, false});
    }
    const std::vector<int> outputs = shader->linkable ? std::vector<int>{group.output} : head.outputs;
    for (int t : outputs) {
      auto b = Activation(t);
      if (!b.ok()) return Error(group.head, b.status());
      d.bindings.push_back({*b, true});
    }
    for (int position : shader->updated_inputs) {
      auto b = Activation(head.inputs[static_cast<size_t>(position)]);
      if (!b.ok()) return Error(group.head, b.status());
      d.bindings.push_back({*b, true});
    }
    // The k-th constant is the k-th buffer that is not an activation; vec4
    // constants (weights) are stored as fp16 when activations are, i8vec4s
    // as bytes (shaders/dialect.cc reads them back through NAME_at).
    std::vector<const shaders::BufferDecl*> constant_decls;
    size_t raw = shader->raw_inputs.size();  // the first buffers that are no activation
    for (const shaders::BufferDecl& b : d.code.buffers) {
      if (b.activation) continue;
      if (raw > 0) {
        --raw;
        continue;
      }
      constant_decls.push_back(&b);
    }
    for (size_t k = 0; k < shader->constants.size(); ++k) {
      const std::string type = k < constant_decls.size() ? constant_decls[k]->element_type : "";
      d.bindings.push_back({Constant(shader->constants[k], type, d.code.half_storage), false});
    }
    if (group.input_gate >= 0) {  // the last buffer ReadThroughGate declared
      const Node& mul = graph_.nodes[static_cast<size_t>(group.input_gate)];
      auto b = Activation(mul.inputs[static_cast<size_t>(group.gate_operand)]);
      if (!b.ok()) return Error(group.input_gate, b.status());
      d.bindings.push_back({*b, false});
    }
    if (shader->linkable) {
      auto body = LinkedBody(group, *shader, precision, d);
      if (!body.ok()) return body.status();
      d.code.body = *body;
    }
    if (d.nodes.size() > 1) d.code.name += fmt::format("_fused{}", d.nodes.size());
    if (precision != options_.precision) d.code.name += "_fp32";  // the accuracy guard
    auto final_shape =
        shaders::ToBhwc(graph_.tensors[static_cast<size_t>(shader->linkable ? group.value_tensor() : head.outputs[0])].shape);
    if (!final_shape.ok()) return Error(group.head, final_shape.status());
    // Any workgroup covers the standard 3-D grid over the output; shaders
    // that share memory within a workgroup keep theirs, and so do those whose
    // grid runs over something else (SPLIT's runs over its input).
    if (d.code.shared.empty() && (shader->linkable || shader->output == *final_shape) &&
        d.groups == shaders::GridFor(*final_shape, d.code.workgroup, shader->block)) {
      d.grid = shaders::BlockedExtent(*final_shape, shader->block);
    }
    d.key = Key(head, *final_shape);
    Add(std::move(d));
    return absl::OkStatus();
  }

  CompiledModel Finish() { return std::move(model_); }

  // A group whose head declined to read through the gate of its input (its
  // generator with these options reads the input outside in0_at): the MUL
  // runs first, a dispatch of its own.
  absl::Status GateApart(const FusedGroup& group) {
    FusedGroup mul;
    mul.head = group.input_gate;
    mul.output = graph_.nodes[static_cast<size_t>(mul.head)].outputs[0];
    if (absl::Status s = Group(mul); !s.ok()) return s;
    FusedGroup then = group;
    then.input_gate = then.gate_operand = -1;
    return Group(then);
  }

  // A group whose head, with these options, stores its outputs itself (an
  // LSTM; a SOFTMAX reducing in a workgroup) takes no tails or PAD on its
  // store, which the planner cannot know in advance: its nodes run one by
  // one, each of them a group of its own.
  absl::Status OneByOne(const FusedGroup& group) {
    auto alone = [&](int n) {
      FusedGroup g;
      g.head = n;
      g.output = graph_.nodes[static_cast<size_t>(n)].outputs[0];
      return Group(g);
    };
    FusedGroup head = group;
    head.tails.clear();
    head.operand_pads.clear();
    head.output_pad = -1;
    head.output = graph_.nodes[static_cast<size_t>(group.head)].outputs[0];
    if (absl::Status s = Group(head); !s.ok()) return s;
    for (const auto& [n, position] : group.tails) {
      if (auto it = group.operand_pads.find(n); it != group.operand_pads.end()) {
        if (absl::Status s = alone(it->second.second); !s.ok()) return s;
      }
      if (absl::Status s = alone(n); !s.ok()) return s;
    }
    return group.output_pad >= 0 ? alone(group.output_pad) : absl::OkStatus();
  }

 private:
  static std::array<int, 3> Extent(const layout::Bhwc& s) { return {s.width, s.height, s.batch * s.slices()}; }

  // The head's op, its first activation input, the group's output and the
  // head's first constant input (the weights of a convolution).
  tuning::DispatchKey Key(const Node& head, const layout::Bhwc& out) const {
    tuning::DispatchKey key;
    const std::string custom = shaders::CustomName(head);
    key.op = custom.empty() ? OpName(head.op) : custom;
    key.out = Extent(out);
    key.fp16 = options_.precision.half_storage();
    bool have_input = false;
    for (int t : head.inputs) {
      if (t == kNoTensor) continue;
      const Tensor& tensor = graph_.tensors[static_cast<size_t>(t)];
      if (tensor.is_constant) {
        if (key.weights.empty()) key.weights.assign(tensor.shape.begin(), tensor.shape.end());
      } else if (!have_input) {
        if (auto in = shaders::ToBhwc(tensor.shape); in.ok()) key.in = Extent(*in);
        have_input = true;
      }
    }
    return key;
  }

  // The accuracy guard: a group any of whose nodes writes a tensor named in
  // fp32_layers (as the model names it, as the passes left it, or as a node
  // the passes folded into it, a MUL or a RELU, named its output) computes
  // and sums in fp32.
  Precision PrecisionOf(const FusedGroup& group) const {
    Precision p = options_.precision;
    if (options_.fp32_layers.empty() || !p.half_arithmetic()) return p;
    auto named = [&](const Graph& g, int n) {
      for (int t : g.nodes[static_cast<size_t>(n)].outputs) {
        if (t >= 0 && std::binary_search(options_.fp32_layers.begin(), options_.fp32_layers.end(),
                                         g.tensors[static_cast<size_t>(t)].name)) {
          return true;
        }
      }
      return false;
    };
    for (int n : group.nodes()) {
      auto folded = plan_.folded.find(n);
      const bool folded_named =
          folded != plan_.folded.end() &&
          std::any_of(folded->second.begin(), folded->second.end(), [&](int f) { return named(model_graph_, f); });
      if (named(model_graph_, n) || named(graph_, n) || folded_named) {
        p.arithmetic = p.accumulation = ArithmeticType::kFloat32;
        break;
      }
    }
    return p;
  }

  absl::Status Error(int node, const absl::Status& s) const {
    return absl::InternalError(fmt::format("{}: {}", NodeLabel(graph_, node), Message(s)));
  }

  int AddConstant(std::vector<uint8_t> bytes) {
    model_.constants.push_back(std::move(bytes));
    return static_cast<int>(model_.constants.size()) - 1;
  }

  void Add(CompiledDispatch d) {
    d.code.dont_unroll = options_.dont_unroll;
    const int step = static_cast<int>(model_.dispatches.size());
    for (const CompiledBinding& b : d.bindings) {
      CompiledBuffer& buffer = model_.buffers[static_cast<size_t>(b.buffer)];
      if (buffer.first_use < 0) buffer.first_use = step;
      buffer.last_use = step;
    }
    model_.dispatches.push_back(std::move(d));
  }

  // Prologue over the group's final output (what it computes, when its
  // store moves through a RESHAPE or into a CONCATENATION), the head's
  // body, the tails, the padding mask and the store.
  absl::StatusOr<std::string> LinkedBody(const FusedGroup& group, const shaders::GeneratedShader& head,
                                         const Precision& precision, CompiledDispatch& d) {
    auto final_shape = shaders::ToBhwc(graph_.tensors[static_cast<size_t>(group.value_tensor())].shape);
    if (!final_shape.ok()) return final_shape.status();
    const auto linear = options_.linear_grid && head.prologue.empty() ? shaders::LinearGridFor(*final_shape) : std::nullopt;
    shaders::ShaderParams& params = d.code.params;
    std::string body =
        head.prologue.empty() ? shaders::glsl::OutputPrologue(params, *final_shape, linear.has_value()) : head.prologue;
    const bool blocked = !head.block.single();
    if (group.output_pad >= 0) {
      // Slices past the unpadded tensor are zeros (a blocked shader cannot
      // return early for them: generators block only with
      // ctx.workgroup_reduction, which such a group turns off).
      if (blocked) return Error(group.head, absl::InternalError("a blocked shader cannot write a padded output"));
      body += fmt::format("  if (s >= {}) {{ out0_set(out_index, vec4(0.0)); return; }}\n",
                          params.Int("unpadded_s", head.output.slices()));
    }
    body += head.code.body;
    std::string per_output;
    int channels = head.output.channels;
    for (size_t k = 0; k < group.tails.size(); ++k) {
      const auto [n, position] = group.tails[k];
      Node node = graph_.nodes[static_cast<size_t>(n)];
      shaders::NodeContext ctx{&graph_, n, &node, precision, {}};
      if (auto it = group.operand_pads.find(n); it != group.operand_pads.end()) {
        const auto [operand, pad] = it->second;
        node.inputs[static_cast<size_t>(operand)] = graph_.nodes[static_cast<size_t>(pad)].inputs[0];
        ctx.channel_padded_operand = operand;
      }
      const std::string prefix = fmt::format("t{}_", k);
      auto update = shaders::GenerateElementwiseUpdate(ctx, position, prefix);
      if (!update.ok()) return Error(n, update.status());
      for (size_t j = 0; j < update->activation_inputs.size(); ++j) {
        d.code.buffers.push_back({fmt::format("{}in{}", prefix, j), "", shaders::BufferAccess::kRead, true});
        auto b = Activation(node.inputs[static_cast<size_t>(update->activation_inputs[j])]);
        if (!b.ok()) return Error(n, b.status());
        d.bindings.push_back({*b, false});
      }
      per_output += update->code;
      params.Append(update->params);
      channels = shaders::ToBhwc(graph_.tensors[static_cast<size_t>(node.outputs[0])].shape)->channels;
    }
    if (group.stores_through.empty()) {
      per_output += shaders::glsl::MaskPadding(params, channels, "value");
      per_output += "  out0_set(out_index, value);\n";
    } else {
      auto store = ops::StoreThroughOf(graph_, group.computed, group.stores_through);
      if (!store.ok()) return Error(group.stores_through.back(), store.status());
      per_output += ops::StoreThroughCode(params, *store);
    }
    body += blocked ? shaders::glsl::ForEachBlockOutput(params, *final_shape, head.block, per_output) : per_output;
    if (linear) {
      d.code.workgroup = shaders::kLinearWorkgroup;
      d.groups = *linear;
    } else if (group.output_pad >= 0) {
      d.groups = shaders::GridFor(*final_shape, d.code.workgroup);
    }
    return body;
  }

  const Graph& graph_;
  const Graph& model_graph_;
  const CompileOptions& options_;
  const FusionPlan& plan_;
  CompiledModel model_;
  std::map<int, int> activation_;  // tensor -> buffer
  std::map<int, int> user_input_;  // partition input tensor -> its user buffer
  std::map<int, int> unconverted_;  // float and bool partition inputs no op has read as activations yet
};

}  // namespace

absl::StatusOr<CompiledModel> CompilePartition(const Graph& graph, const Partition& partition,
                                               const CompileOptions& options) {
  Graph own = graph;  // the passes change constants and nodes
  Subgraph subgraph{&own, partition.nodes, {partition.outputs.begin(), partition.outputs.end()}, {}, {}};
  if (options.fusion) {
    PassOptions passes;
    passes.same_storage = shaders::SameBhwc;
    RunGraphPasses(subgraph, passes);
  }
  const FusionPlan plan = PlanFusion(subgraph, options.fusion);
  Builder builder(own, graph, options, plan);
  for (int t : partition.inputs) {
    if (absl::Status s = builder.Edge(t, /*inbound=*/true); !s.ok()) return s;
  }
  for (const FusedGroup& group : plan.groups) {
    if (group.head < 0) continue;  // absorbed
    if (absl::Status s = builder.Group(group); !s.ok()) return s;
  }
  for (int t : partition.outputs) {
    if (absl::Status s = builder.Edge(t, /*inbound=*/false); !s.ok()) return s;
  }
  CompiledModel model = builder.Finish();
  if (absl::Status s = PlanMemory(model, options.memory); !s.ok()) return s;
  return model;
}

void SharePrograms(CompiledModel& model) {
  std::vector<shaders::ShaderCode*> shaders;
  for (CompiledDispatch& d : model.dispatches) shaders.push_back(&d.code);
  shaders::ShareParameters(shaders, shaders::kMaxParams);
}

}  // namespace mgd
