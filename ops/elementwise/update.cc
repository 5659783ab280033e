// The elementwise ops on the GPU, each as an update of `value`.
#include <fmt/format.h>

#include <limits>

#include "layout/weights.h"
#include "ops/elementwise/elementwise.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<std::string> UnaryExpression(const NodeContext& ctx, const std::string& v, ShaderParams& params,
                                            const std::string& prefix) {
  switch (ctx.node->op) {
    case OpKind::kRelu: return glsl::Clamp(v, 0.0f, std::numeric_limits<float>::infinity());
    case OpKind::kRelu6: return glsl::Clamp(v, 0.0f, 6.0f);
    case OpKind::kReluN1To1: return glsl::Clamp(v, -1.0f, 1.0f);
    case OpKind::kLogistic: return fmt::format("vec4(1.0) / (vec4(1.0) + exp(-{}))", v);
    case OpKind::kTanh: return glsl::Tanh(v);
    case OpKind::kHardSwish: return fmt::format("clamp({0} * (1.0 / 6.0) + vec4(0.5), vec4(0.0), vec4(1.0)) * {0}", v);
    case OpKind::kExp: return fmt::format("exp({})", v);
    case OpKind::kRsqrt: return fmt::format("inversesqrt({})", v);
    case OpKind::kElu: return fmt::format("mix({0}, exp({0}) - vec4(1.0), lessThan({0}, vec4(0.0)))", v);
    case OpKind::kAbs: return fmt::format("abs({})", v);
    case OpKind::kNeg: return fmt::format("(-{})", v);
    case OpKind::kSquare: return fmt::format("({0} * {0})", v);
    case OpKind::kSqrt: return fmt::format("sqrt({})", v);
    case OpKind::kLog: return fmt::format("log({})", v);
    case OpKind::kSin: return fmt::format("sin({})", v);
    case OpKind::kCos: return fmt::format("cos({})", v);
    case OpKind::kFloor: return fmt::format("floor({})", v);
    case OpKind::kCeil: return fmt::format("ceil({})", v);
    case OpKind::kSign: return fmt::format("sign({})", v);
    // From a float32 or bool activation (0.0/1.0) to float32 or bool; an
    // integer input is CastReadAsGivenShader's (cast.cc).
    case OpKind::kCast:
      if (ctx.output(0).type == DataType::kBool) return fmt::format("vec4(notEqual({}, vec4(0.0)))", v);
      if (ctx.output(0).type == DataType::kFloat32) return v;
      return absl::UnimplementedError(fmt::format("CAST to {} stays on the CPU", DataTypeName(ctx.output(0).type)));
    case OpKind::kLeakyRelu: {
      const float alpha = AttributesOf<LeakyReluAttributes>(ctx.node->attributes).alpha;
      return fmt::format("mix({0}, {0} * {1}, lessThan({0}, vec4(0.0)))", v, params.Float(prefix + "alpha", alpha));
    }
    default: return absl::UnimplementedError("not a unary op");
  }
}

// GELU of a into g as TFLite's forms: 0.5 a erfc(-a / sqrt(2)), with erfc
// from Numerical Recipes' Chebyshev fit (erfcc: fractional error below
// 1.2e-7 everywhere), or with tanh when approximate.
std::string GeluSteps(bool approximate) {
  if (approximate) {
    return fmt::format("    vec4 g = 0.5 * a * (vec4(1.0) + {});\n",
                       glsl::Tanh("(0.7978845608 * (a + 0.044715 * a * a * a))"));
  }
  return "    vec4 gelu_u = a * -0.70710678, gelu_z = abs(gelu_u);\n"
         "    vec4 gelu_t = vec4(1.0) / (vec4(1.0) + 0.5 * gelu_z);\n"
         "    vec4 gelu_r = gelu_t * exp(-gelu_z * gelu_z - vec4(1.26551223) + gelu_t * (1.00002368 + gelu_t * (0.37409196 +\n"
         "        gelu_t * (0.09678418 + gelu_t * (-0.18628806 + gelu_t * (0.27886807 + gelu_t * (-1.13520398 +\n"
         "        gelu_t * (1.48851587 + gelu_t * (-0.82215223 + gelu_t * 0.17087277)))))))));\n"
         "    vec4 g = 0.5 * a * mix(gelu_r, vec4(2.0) - gelu_r, lessThan(gelu_u, vec4(0.0)));\n";
}

// POW of a and c into p, as C's pow: GLSL's pow is undefined for a <= 0,
// so it takes |a|, a negative base keeps its sign for odd integer exponents
// and gives NaN for others, a zero base gives 0, 1 or Inf, and c = 0 gives 1.
std::string PowSteps() {
  const std::string inf = glsl::Float(std::numeric_limits<float>::infinity());
  const std::string nan = glsl::Float(std::numeric_limits<float>::quiet_NaN());
  return fmt::format(
      "    vec4 p = pow(abs(a), c);\n"
      "    vec4 negative = vec4(lessThan(a, vec4(0.0)));\n"
      "    p = mix(p, -p, bvec4(negative * vec4(equal(c - 2.0 * floor(c * 0.5), vec4(1.0)))));\n"
      "    p = mix(p, vec4({nan}), bvec4(negative * vec4(notEqual(c, floor(c)))));\n"
      "    p = mix(p, mix(vec4(0.0), vec4({inf}), lessThan(c, vec4(0.0))), equal(a, vec4(0.0)));\n"
      "    p = mix(p, vec4(1.0), equal(c, vec4(0.0)));\n",
      fmt::arg("nan", nan), fmt::arg("inf", inf));
}

// How one operand of a binary op is read at the output's (b, s, y, x).
struct Operand {
  std::string setup;  // declarations before use
  std::string value;  // a vec4 expression
  bool activation = false;
};

// Small constants (a scalar, one value per channel) are inlined; any other
// operand is read from a buffer with numpy broadcasting: a size-1 dimension
// repeats, a single channel fills all four lanes.
absl::StatusOr<Operand> ReadOperand(const NodeContext& ctx, size_t input, const layout::Bhwc& out,
                                    const std::string& buffer, const std::string& const_name, ShaderParams& params) {
  const Tensor& t = ctx.input(input);
  // numpy aligns trailing dimensions: lift the operand to the output's rank.
  Shape lifted = t.shape;
  while (lifted.size() < ctx.output(0).shape.size()) lifted.insert(lifted.begin(), 1);
  auto shape = ToBhwc(lifted);
  if (!shape.ok()) return shape.status();
  if (t.is_constant) {
    // A bool constant (a mask) is 0.0/1.0, as bool activations are.
    if (!IsActivationType(t.type)) {
      return absl::UnimplementedError(fmt::format("{} constants stay on the CPU", DataTypeName(t.type)));
    }
    const std::vector<float> values = ConstantFloats(t);
    if (values.size() == 1) return Operand{"", fmt::format("vec4({})", params.Float(const_name, values[0])), false};
    // A per-channel vector is inlined when small (a shader with one cannot
    // share its program with others, but most fold into convolutions first);
    // a larger one is read from a buffer like any operand.
    if (static_cast<int>(values.size()) == out.channels && shape->channels == out.channels && out.channels <= 64) {
      return Operand{glsl::ConstVec4Array(const_name, layout::PadToSlices(values.data(), out.channels)),
                     const_name + "[s]", false};
    }
  }
  if (static_cast<int>(input) == ctx.channel_padded_operand && !t.is_constant) {
    auto own = ToBhwc(t.shape);
    if (!own.ok() || own->batch != out.batch || own->height != out.height || own->width != out.width ||
        own->channels > out.channels) {
      return absl::UnimplementedError("a channel-padded operand must match the output but for channels");
    }
    return Operand{"",
                   fmt::format("(s < {} ? {} : vec4(0.0))", params.Int(buffer + "_s", own->slices()),
                               glsl::Read(params, buffer, *own, "b", "s", "y", "x")),
                   true};
  }
  // The buffer holds the operand in the PHWC4 layout of its own shape.
  if (auto own = ToBhwc(t.shape); !own.ok() || !(*own == *shape)) {
    return absl::UnimplementedError(fmt::format("broadcast of {} to {} is not supported on the GPU",
                                                ShapeToString(t.shape), ShapeToString(ctx.output(0).shape)));
  }
  auto fits = [](int d, int o) { return d == o || d == 1; };
  if (!fits(shape->batch, out.batch) || !fits(shape->height, out.height) || !fits(shape->width, out.width) ||
      !fits(shape->channels, out.channels)) {
    return absl::UnimplementedError(fmt::format("broadcast of {} to {} is not supported on the GPU",
                                                ShapeToString(t.shape), ShapeToString(ctx.output(0).shape)));
  }
  auto coord = [](int d, int o, const char* name) { return d == o ? std::string(name) : std::string("0"); };
  std::string read = glsl::Read(params, buffer, *shape, coord(shape->batch, out.batch, "b"),
                                coord(shape->channels, out.channels, "s"), coord(shape->height, out.height, "y"),
                                coord(shape->width, out.width, "x"));
  if (shape->channels != out.channels) read = fmt::format("vec4({}.x)", read);
  return Operand{"", read, true};
}

}  // namespace

absl::StatusOr<shaders::ElementwiseUpdate> ElementwiseUpdateOf(const shaders::NodeContext& ctx, int fused_input,
                                                               const std::string& prefix) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  auto out = ToBhwc(ctx.output(0).shape);
  if (!out.ok()) return out.status();
  ElementwiseUpdate update;
  std::vector<Operand> operands;
  const size_t arity = ctx.node->inputs.size();  // 1 to 3 (SELECT_V2): the validator checked it
  for (size_t i = 0; i < arity; ++i) {
    if (static_cast<int>(i) == fused_input) {
      operands.push_back({"", "value", false});
      continue;
    }
    const Tensor& t = ctx.input(i);
    if (!t.is_constant && !IsActivationType(t.type)) {
      return absl::UnimplementedError(fmt::format("{} operand {} is no activation", DataTypeName(t.type), t.name));
    }
    auto op = ReadOperand(ctx, i, *out, fmt::format("{}in{}", prefix, update.activation_inputs.size()),
                          fmt::format("{}k{}", prefix, i), update.params);
    if (!op.ok()) return op.status();
    if (op->activation) update.activation_inputs.push_back(static_cast<int>(i));
    operands.push_back(*op);
  }
  if (fused_input < 0 && update.activation_inputs.empty()) {
    return absl::UnimplementedError("all operands are constants (folded on the CPU)");
  }
  if (ctx.node->op == OpKind::kPrelu && ctx.input(0).is_constant) {
    return absl::UnimplementedError("PRELU of a constant");
  }
  std::string expr, steps;  // steps: statements before `value = expr`
  if (ctx.node->op == OpKind::kGelu) {
    steps = GeluSteps(AttributesOf<GeluAttributes>(ctx.node->attributes).approximate);
    expr = "g";
  } else if (arity == 1) {
    auto e = UnaryExpression(ctx, "a", update.params, prefix);
    if (!e.ok()) return e.status();
    expr = *e;
  } else {
    switch (ctx.node->op) {
      case OpKind::kAdd: expr = "a + c"; break;
      case OpKind::kSub: expr = "a - c"; break;
      case OpKind::kMul: expr = "a * c"; break;
      case OpKind::kDiv: expr = "a / c"; break;
      case OpKind::kMaximum: expr = glsl::MaxKeepingNan("a", "c"); break;
      case OpKind::kMinimum: expr = glsl::MinKeepingNan("a", "c"); break;
      case OpKind::kSquaredDifference: expr = "(a - c) * (a - c)"; break;
      case OpKind::kPrelu: expr = "mix(a, a * c, lessThan(a, vec4(0.0)))"; break;
      case OpKind::kPow: steps = PowSteps(); expr = "p"; break;
      case OpKind::kFloorDiv: expr = "floor(a / c)"; break;
      // a - c * floor(a / c): the remainder takes the divisor's sign, as
      // TFLite's does (within a rounding of the quotient).
      case OpKind::kFloorMod: expr = "mod(a, c)"; break;
      // Comparisons give bools as 0.0/1.0; in an fp16 run they compare the
      // fp16-rounded operands (docs/numerics.md).
      case OpKind::kEqual: expr = "vec4(equal(a, c))"; break;
      case OpKind::kNotEqual: expr = "vec4(notEqual(a, c))"; break;
      case OpKind::kLess: expr = "vec4(lessThan(a, c))"; break;
      case OpKind::kLessEqual: expr = "vec4(lessThanEqual(a, c))"; break;
      case OpKind::kGreater: expr = "vec4(greaterThan(a, c))"; break;
      case OpKind::kGreaterEqual: expr = "vec4(greaterThanEqual(a, c))"; break;
      // The condition a picks c where nonzero, else e: a selection, exact.
      case OpKind::kSelectV2: expr = "mix(e, c, notEqual(a, vec4(0.0)))"; break;
      default: return absl::UnimplementedError("not a binary op");
    }
  }
  // A block with the operands as locals a and c, so that each is read once.
  update.code = "  {\n";
  for (const Operand& o : operands) update.code += o.setup;
  update.code += fmt::format("    vec4 a = {};\n", operands[0].value);
  if (arity >= 2) update.code += fmt::format("    vec4 c = {};\n", operands[1].value);
  if (arity == 3) update.code += fmt::format("    vec4 e = {};\n", operands[2].value);
  update.code += steps;
  update.code += fmt::format("    value = {};\n", expr);
  update.code += glsl::Activation(AttributesOf<ElementwiseAttributes>(ctx.node->attributes).activation, "value");
  update.code += "  }\n";
  return update;
}

absl::StatusOr<shaders::GeneratedShader> ElementwiseShader(const shaders::NodeContext& ctx) {
  using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return out.status();
  auto update = ElementwiseUpdateOf(ctx, -1, "");
  if (!update.ok()) return update.status();
  GeneratedShader g = StartShader(ctx, *out, update->activation_inputs);
  g.code.body += "  vec4 value = vec4(0.0);\n" + update->code;
  g.code.params.Append(update->params);
  return g;
}

}  // namespace mgd::ops
