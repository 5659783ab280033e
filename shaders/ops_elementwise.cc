// Unary activations, binary arithmetic with the broadcast forms mobile models
// use, and PRELU. Padding lanes are forced back to 0 where an op would make
// them non-zero (LOGISTIC(0) = 0.5, RSQRT(0) = inf), since later shaders read
// whole vec4s.
#include <fmt/format.h>

#include <cstring>

#include "shaders/ops.h"

namespace mgd::shaders {
namespace {

constexpr std::array<uint32_t, 3> kWorkgroup{8, 8, 1};

// Zeroes the lanes of the last slice that lie past the channel count.
std::string MaskPadding(const layout::Bhwc& out, const std::string& v) {
  const int live = out.channels % 4;
  if (live == 0) return "";
  return fmt::format("  if (s == {}) {{ {} = vec4({}); }}\n", out.slices() - 1, v,
                     live == 1 ? v + ".x, 0.0, 0.0, 0.0" : live == 2 ? v + ".xy, 0.0, 0.0" : v + ".xyz, 0.0");
}

GeneratedShader Skeleton(const NodeContext& ctx, const layout::Bhwc& out, std::vector<int> activation_inputs) {
  GeneratedShader g;
  g.code.name = fmt::format("node{}_{}", ctx.node_index, OpName(ctx.node->op));
  g.code.workgroup = kWorkgroup;
  for (size_t i = 0; i < activation_inputs.size(); ++i) {
    g.code.buffers.push_back({fmt::format("in{}", i), Vec4Type(ctx.fp16), BufferAccess::kRead});
  }
  g.code.buffers.push_back({"out0", Vec4Type(ctx.fp16), BufferAccess::kWrite});
  g.code.uses_fp16 = ctx.fp16;
  g.activation_inputs = std::move(activation_inputs);
  g.groups = GridFor(out, kWorkgroup);
  return g;
}

std::string Store(const NodeContext& ctx, const std::string& v) {
  return fmt::format("  out0[out_index] = {}({});\n", Vec4Type(ctx.fp16), v);
}

absl::StatusOr<std::string> UnaryExpression(const NodeContext& ctx) {
  switch (ctx.node->op) {
    case OpKind::kRelu: return "max(v, vec4(0.0))";
    case OpKind::kRelu6: return "clamp(v, vec4(0.0), vec4(6.0))";
    case OpKind::kReluN1To1: return "clamp(v, vec4(-1.0), vec4(1.0))";
    case OpKind::kLogistic: return "vec4(1.0) / (vec4(1.0) + exp(-v))";
    case OpKind::kTanh: return "tanh(v)";
    case OpKind::kHardSwish: return "clamp(v * (1.0 / 6.0) + vec4(0.5), vec4(0.0), vec4(1.0)) * v";
    case OpKind::kExp: return "exp(v)";
    case OpKind::kRsqrt: return "inversesqrt(v)";
    case OpKind::kElu: return "mix(v, exp(v) - vec4(1.0), lessThan(v, vec4(0.0)))";
    case OpKind::kLeakyRelu: {
      const float alpha = std::get<LeakyReluAttributes>(ctx.node->attributes).alpha;
      return fmt::format("mix(v, v * {}, lessThan(v, vec4(0.0)))", glsl::Float(alpha));
    }
    default: return absl::UnimplementedError("not a unary op");
  }
}

absl::StatusOr<GeneratedShader> Unary(const NodeContext& ctx) {
  auto out = ToBhwc(ctx.output(0).shape);
  if (!out.ok()) return out.status();
  auto expr = UnaryExpression(ctx);
  if (!expr.ok()) return expr.status();
  GeneratedShader g = Skeleton(ctx, *out, {0});
  g.code.body = glsl::OutputPrologue(*out) + "  vec4 v = vec4(in0[out_index]);\n" + "  v = " + *expr + ";\n" +
                MaskPadding(*out, "v") + Store(ctx, "v");
  return g;
}

// How one operand of a binary op is read.
struct Operand {
  std::string setup;  // declarations before use
  std::string value;  // a vec4 expression
  bool activation = false;
};

absl::StatusOr<Operand> ReadOperand(const NodeContext& ctx, size_t input, const layout::Bhwc& out, int buffer,
                                    const std::string& name) {
  const Tensor& t = ctx.input(input);
  const int64_t n = NumElements(t.shape);
  if (t.is_constant) {
    if (t.type != DataType::kFloat32) return absl::UnimplementedError("non-float constants are not supported");
    std::vector<float> values(static_cast<size_t>(n));
    std::memcpy(values.data(), t.data.data(), values.size() * 4);
    if (n == 1) return Operand{"", fmt::format("vec4({})", glsl::Float(values[0])), false};
    if (n == out.channels && !t.shape.empty() && t.shape.back() == out.channels) {
      std::vector<float> padded(static_cast<size_t>(out.slices()) * 4, 0.0f);
      std::copy(values.begin(), values.end(), padded.begin());
      return Operand{glsl::ConstVec4Array(name, padded), name + "[s]", false};
    }
    return absl::UnimplementedError(fmt::format("constant operand of shape {} does not broadcast per channel",
                                                ShapeToString(t.shape)));
  }
  auto shape = ToBhwc(t.shape);
  if (!shape.ok()) return shape.status();
  const std::string in = fmt::format("in{}", buffer);
  if (*shape == out) return Operand{"", fmt::format("vec4({}[out_index])", in), true};
  if (shape->height == 1 && shape->width == 1 && shape->channels == out.channels && shape->batch == 1) {
    return Operand{"", fmt::format("vec4({}[s])", in), true};  // per-channel vector
  }
  return absl::UnimplementedError(fmt::format("broadcast of {} to {} is not supported on the GPU",
                                              ShapeToString(t.shape), ShapeToString(ctx.output(0).shape)));
}

absl::StatusOr<GeneratedShader> Binary(const NodeContext& ctx) {
  auto out = ToBhwc(ctx.output(0).shape);
  if (!out.ok()) return out.status();
  std::vector<int> activations;
  std::vector<Operand> operands;
  for (size_t i = 0; i < 2; ++i) {
    auto op = ReadOperand(ctx, i, *out, static_cast<int>(activations.size()), fmt::format("k{}", i));
    if (!op.ok()) return op.status();
    if (op->activation) activations.push_back(static_cast<int>(i));
    operands.push_back(*op);
  }
  if (activations.empty()) return absl::UnimplementedError("both operands are constants (folded on the CPU)");
  const std::string& a = operands[0].value;
  const std::string& b = operands[1].value;
  std::string expr;
  Activation activation = Activation::kNone;
  if (const auto* e = std::get_if<ElementwiseAttributes>(&ctx.node->attributes)) activation = e->activation;
  switch (ctx.node->op) {
    case OpKind::kAdd: expr = a + " + " + b; break;
    case OpKind::kSub: expr = a + " - " + b; break;
    case OpKind::kMul: expr = a + " * " + b; break;
    case OpKind::kDiv: expr = a + " / " + b; break;
    case OpKind::kMaximum: expr = "max(" + a + ", " + b + ")"; break;
    case OpKind::kMinimum: expr = "min(" + a + ", " + b + ")"; break;
    case OpKind::kSquaredDifference: expr = "(" + a + " - " + b + ") * (" + a + " - " + b + ")"; break;
    case OpKind::kPrelu: expr = "mix(" + a + ", " + a + " * " + b + ", lessThan(" + a + ", vec4(0.0)))"; break;
    default: return absl::UnimplementedError("not a binary op");
  }
  if (ctx.node->op == OpKind::kPrelu && activations != std::vector<int>{0}) {
    return absl::UnimplementedError("PRELU alpha must be a constant");
  }
  GeneratedShader g = Skeleton(ctx, *out, activations);
  g.code.body = glsl::OutputPrologue(*out) + operands[0].setup + operands[1].setup + "  vec4 v = " + expr + ";\n" +
                glsl::Activation(activation, "v") + MaskPadding(*out, "v") + Store(ctx, "v");
  return g;
}

}  // namespace

void AddElementwiseGenerators(std::map<OpKind, Generator>& g) {
  for (OpKind op : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                    OpKind::kHardSwish, OpKind::kExp, OpKind::kRsqrt, OpKind::kElu, OpKind::kLeakyRelu}) {
    g[op] = Unary;
  }
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMaximum, OpKind::kMinimum,
                    OpKind::kSquaredDifference, OpKind::kPrelu}) {
    g[op] = Binary;
  }
}

}  // namespace mgd::shaders
