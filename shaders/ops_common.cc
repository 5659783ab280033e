#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <limits>

#include "model/constants.h"
#include "shaders/ops.h"

namespace mgd::shaders {

absl::StatusOr<layout::Bhwc> InputBhwc(const NodeContext& ctx, size_t i) { return ToBhwc(ctx.input(i).shape); }
absl::StatusOr<layout::Bhwc> OutputBhwc(const NodeContext& ctx, size_t i) { return ToBhwc(ctx.output(i).shape); }

int BhwcAxis(int axis, int rank) {
  if (axis < 0) axis += rank;
  switch (rank) {
    case 1: return 3;
    case 2: return axis == 0 ? 0 : 3;
    case 3: return axis == 0 ? 0 : axis == 1 ? 2 : 3;
    default: return axis;
  }
}

std::string CustomName(const Node& node) {
  if (const auto* c = std::get_if<CustomAttributes>(&node.attributes)) return c->name;
  return "";
}

GeneratedShader StartShader(const NodeContext& ctx, const layout::Bhwc& out, std::vector<int> activation_inputs) {
  constexpr std::array<uint32_t, 3> kWorkgroup{8, 8, 1};
  GeneratedShader g;
  const std::string custom = CustomName(*ctx.node);
  g.code.name = fmt::format("node{}_{}", ctx.node_index, custom.empty() ? OpName(ctx.node->op) : custom);
  g.code.workgroup = kWorkgroup;
  for (size_t i = 0; i < activation_inputs.size(); ++i) {
    g.code.buffers.push_back({fmt::format("in{}", i), "", BufferAccess::kRead, true});
  }
  g.code.buffers.push_back({"out0", "", BufferAccess::kWrite, true});
  g.code.half_storage = ctx.precision.half_storage();
  g.code.mediump = ctx.precision.half_arithmetic();
  g.activation_inputs = std::move(activation_inputs);
  g.groups = GridFor(out, kWorkgroup);
  g.output = out;
  return g;
}

bool IsGraphInput(const NodeContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const int t = ctx.node->inputs[i];
  return std::find(ctx.graph->inputs.begin(), ctx.graph->inputs.end(), t) != ctx.graph->inputs.end();
}

void AddRawInput(GeneratedShader& g, int position, const std::string& name, const std::string& element_type) {
  // Before the outputs: after the activation inputs and earlier raw ones.
  const size_t before = g.activation_inputs.size() + g.raw_inputs.size();
  g.code.buffers.insert(g.code.buffers.begin() + static_cast<long>(before), {name, element_type, BufferAccess::kRead, false});
  g.raw_inputs.push_back(position);
}

absl::Status AddIndexInput(const NodeContext& ctx, GeneratedShader& g, int position, const std::string& name) {
  const Tensor& t = ctx.input(static_cast<size_t>(position));
  if (!t.is_constant) {
    if (t.type != DataType::kInt32) return absl::UnimplementedError(fmt::format("{} computed at run time must be int32", name));
    AddRawInput(g, position, name, "int");
    return absl::OkStatus();
  }
  std::vector<float> values;
  for (int64_t v : ConstantInts(t)) values.push_back(static_cast<float>(std::clamp<int64_t>(v, -1, int64_t{1} << 24)));
  g.code.buffers.push_back({name, "float", BufferAccess::kRead, false});
  g.constants.push_back(std::move(values));
  return absl::OkStatus();
}

bool ReadThroughGate(ShaderCode& code, const std::string& in, const layout::Bhwc& shape) {
  auto buffer = std::find_if(code.buffers.begin(), code.buffers.end(),
                             [&](const BufferDecl& b) { return b.activation && b.name == in; });
  if (buffer == code.buffers.end() || code.shared.find(in) != std::string::npos ||
      code.body.find(in + "[") != std::string::npos) {
    return false;
  }
  const std::string ungated = in + "_ungated", gate = in + "_gate";
  buffer->name = ungated;
  code.buffers.push_back({gate, "", BufferAccess::kRead, true});
  const std::string plane = code.params.Int(in + "_plane", int64_t{shape.height} * shape.width);
  code.body.insert(0, fmt::format("#define {0}_at(i) ({1}_at(i) * {2}_at((i) / {3}))\n", in, ungated, gate, plane));
  return true;
}

namespace glsl {

std::string OutputPrologue(ShaderParams& params, const layout::Bhwc& o, bool linear) {
  const std::string batch_and_slice = BatchAndSlice(params, o);
  const std::string w = params.Int("out_w", o.width), h = params.Int("out_h", o.height);
  if (linear) {
    return fmt::format(
        "  int i = int(gl_GlobalInvocationID.x);\n"
        "  if (i >= {N}) return;\n"
        "  int x = i % {W}, y = (i / {W}) % {H}, z = i / ({W} * {H});\n"
        "{bs}"
        "  int out_index = i;\n",
        fmt::arg("N", params.Int("out_n", static_cast<int64_t>(o.width) * o.height * o.batch * o.slices())),
        fmt::arg("W", w), fmt::arg("H", h), fmt::arg("bs", batch_and_slice));
  }
  return fmt::format(
      "  int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);\n"
      "  if (x >= {W} || y >= {H} || z >= {Z}) return;\n"
      "{bs}"
      "  int out_index = (z * {H} + y) * {W} + x;\n",
      fmt::arg("W", w), fmt::arg("H", h), fmt::arg("Z", params.Int("out_z", o.batch * o.slices())),
      fmt::arg("bs", batch_and_slice));
}

std::string BlockPrologue(ShaderParams& params, const layout::Bhwc& o, OutputBlock block) {
  const int slice_blocks = (o.slices() + block.slices - 1) / block.slices;
  const std::string batch_and_slice =
      o.batch == 1 ? fmt::format("  int b = 0, s = z * {};\n", block.slices)
                   : fmt::format("  int b = z / {0}, s = (z - b * {0}) * {1};\n",
                                 params.Int("out_slice_blocks", slice_blocks), block.slices);
  const std::string z = params.Int("out_block_z", static_cast<int64_t>(o.batch) * slice_blocks);
  if (block.flat) {
    return fmt::format(
        "  int row_block = int(gl_GlobalInvocationID.x), z = int(gl_GlobalInvocationID.z);\n"
        "  int x = (row_block % {XB}) * {bx}, y = row_block / {XB};\n"
        "  if (y >= {H} || z >= {Z}) return;\n"
        "{bs}",
        fmt::arg("bx", block.x), fmt::arg("XB", params.Int("out_x_blocks", BlockedExtent(o, {block.x, block.slices})[0])),
        fmt::arg("H", params.Int("out_h", o.height)), fmt::arg("Z", z), fmt::arg("bs", batch_and_slice));
  }
  return fmt::format(
      "  int x = int(gl_GlobalInvocationID.x) * {bx}, y = int(gl_GlobalInvocationID.y), z = "
      "int(gl_GlobalInvocationID.z);\n"
      "  if (x >= {W} || y >= {H} || z >= {Z}) return;\n"
      "{bs}",
      fmt::arg("bx", block.x), fmt::arg("W", params.Int("out_w", o.width)), fmt::arg("H", params.Int("out_h", o.height)),
      fmt::arg("Z", z), fmt::arg("bs", batch_and_slice));
}

std::string ForEachBlockOutput(ShaderParams& params, const layout::Bhwc& o, OutputBlock block,
                               const std::string& per_output) {
  const std::string w = params.Int("out_w", o.width), h = params.Int("out_h", o.height),
                    slices = params.Int("out_s", o.slices());
  std::string code;
  for (int j = 0; j < block.slices; ++j) {
    for (int i = 0; i < block.x; ++i) {
      // The block's first output is inside (the prologue returned otherwise).
      std::string inside;
      if (i > 0) inside = fmt::format("ex < {}", w);
      if (j > 0) inside += fmt::format("{}es < {}", inside.empty() ? "" : " && ", slices);
      code += fmt::format(
          "  {{\n"
          "    int ex = x + {i}, es = s + {j};\n"
          "    if ({inside}) {{\n"
          "      int x = ex, s = es;\n"
          "      int out_index = ((b * {S} + s) * {H} + y) * {W} + x;\n"
          "      vec4 value = value{k};\n"
          "{per_output}"
          "    }}\n"
          "  }}\n",
          fmt::arg("i", i), fmt::arg("j", j), fmt::arg("inside", inside.empty() ? "true" : inside),
          fmt::arg("S", slices), fmt::arg("H", h), fmt::arg("W", w), fmt::arg("k", j * block.x + i),
          fmt::arg("per_output", per_output));
    }
  }
  return code;
}

std::string BatchAndSlice(ShaderParams& params, const layout::Bhwc& o) {
  // One image (nearly every model) needs no division, so a shader shared
  // between sizes divides by no parameter either.
  if (o.batch == 1) return "  int b = 0, s = z;\n";
  return fmt::format("  int b = z / {S}, s = z - b * {S};\n", fmt::arg("S", params.Int("out_s", o.slices())));
}

std::string ForEachLane(ShaderParams& params, const layout::Bhwc& out, const std::string& lane, bool flat_position) {
  const std::string channels = params.Int("out_c", out.channels);
  const std::string position =
      flat_position ? fmt::format("    int position = ((b * {} + y) * {} + x) * {} + c;\n", params.Int("out_h", out.height),
                                  params.Int("out_w", out.width), channels)
                    : "";
  return fmt::format(
      "  vec4 value = vec4(0.0);\n"
      "  MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
      "    int c = s * 4 + k;\n"
      "    if (c >= {}) break;\n"
      "{}{}"
      "  }}\n",
      channels, position, lane);
}

std::string Index(ShaderParams& params, const std::string& tensor, const layout::Bhwc& t, const std::string& b,
                  const std::string& slice, const std::string& yy, const std::string& xx) {
  return fmt::format("((({} * {} + {}) * {} + {}) * {} + {})", b, params.Int(tensor + "_s", t.slices()), slice,
                     params.Int(tensor + "_h", t.height), yy, params.Int(tensor + "_w", t.width), xx);
}

std::string Read(ShaderParams& params, const std::string& buffer, const layout::Bhwc& shape, const std::string& b,
                 const std::string& slice, const std::string& yy, const std::string& xx) {
  return fmt::format("{}_at({})", buffer, Index(params, buffer, shape, b, slice, yy, xx));
}

std::string ReadOrZero(ShaderParams& params, const std::string& buffer, const layout::Bhwc& shape, const std::string& b,
                       const std::string& slice, const std::string& yy, const std::string& xx) {
  return fmt::format("(({y} >= 0 && {x} >= 0 && {y} < {h} && {x} < {w}) ? {read} : vec4(0.0))", fmt::arg("y", yy),
                     fmt::arg("x", xx), fmt::arg("h", params.Int(buffer + "_h", shape.height)),
                     fmt::arg("w", params.Int(buffer + "_w", shape.width)),
                     fmt::arg("read", Read(params, buffer, shape, b, slice, yy, xx)));
}

std::string TransposedWindowLoops(ShaderParams& params, const layout::Bhwc& in, int kh, int kw, int stride_h,
                                  int stride_w, int pad_h, int pad_w, const std::string& inner) {
  return fmt::format(
      "  MGD_LOOP for (int ky = {kh} - 1; ky >= 0; --ky) {{\n"
      "    int ty = y + {ph} - ky;\n"
      "    if (ty < 0 || ty % {sh} != 0 || ty / {sh} >= {ih}) continue;\n"
      "    int iy = ty / {sh};\n"
      "    MGD_LOOP for (int kx = {kw} - 1; kx >= 0; --kx) {{\n"
      "      int tx = x + {pw} - kx;\n"
      "      if (tx < 0 || tx % {sw} != 0 || tx / {sw} >= {iw}) continue;\n"
      "      int ix = tx / {sw};\n"
      "{inner}"
      "    }}\n"
      "  }}\n",
      fmt::arg("kh", params.Int("filter_h", kh)), fmt::arg("kw", params.Int("filter_w", kw)),
      fmt::arg("ph", params.Int("pad_h", pad_h)), fmt::arg("pw", params.Int("pad_w", pad_w)),
      fmt::arg("sh", params.Int("stride_h", stride_h)), fmt::arg("sw", params.Int("stride_w", stride_w)),
      fmt::arg("ih", params.Int("in0_h", in.height)), fmt::arg("iw", params.Int("in0_w", in.width)),
      fmt::arg("inner", inner));
}

std::string Clamp(const std::string& v, float lo, float hi) {
  // isnan, not a select on comparisons: Mesa's GL compiler turns those into
  // max and min, which lose the NaN.
  const std::string clamped = std::isinf(hi) ? fmt::format("max({}, vec4({}))", v, Float(lo))
                                             : fmt::format("clamp({}, vec4({}), vec4({}))", v, Float(lo), Float(hi));
  return fmt::format("mix({}, {}, isnan({}))", clamped, v, v);
}

std::string Activation(mgd::Activation a, const std::string& v) {
  const float inf = std::numeric_limits<float>::infinity();
  switch (a) {
    case mgd::Activation::kNone: return "";
    case mgd::Activation::kRelu: return fmt::format("  {} = {};\n", v, Clamp(v, 0.0f, inf));
    case mgd::Activation::kRelu6: return fmt::format("  {} = {};\n", v, Clamp(v, 0.0f, 6.0f));
    case mgd::Activation::kReluN1To1: return fmt::format("  {} = {};\n", v, Clamp(v, -1.0f, 1.0f));
    case mgd::Activation::kTanh: return fmt::format("  {} = {};\n", v, Tanh(v));
    case mgd::Activation::kSignBit: return "";
  }
  return "";
}

std::string MaxKeepingNan(const std::string& a, const std::string& b) {
  return fmt::format("mix(mix(max({0}, {1}), {1}, isnan({1})), {0}, isnan({0}))", a, b);
}

std::string MinKeepingNan(const std::string& a, const std::string& b) {
  return fmt::format("mix(mix(min({0}, {1}), {1}, isnan({1})), {0}, isnan({0}))", a, b);
}

std::string Tanh(const std::string& v) {
  // tanh(10) rounds to 1 in fp32; some drivers' tanh of +-Inf is NaN and of
  // NaN a number.
  return fmt::format("mix(tanh(clamp({0}, -10.0, 10.0)), {0}, isnan({0}))", v);
}

std::string ConstVec4Array(const std::string& name, const std::vector<float>& padded) {
  std::string s = fmt::format("  const vec4 {}[{}] = vec4[](", name, padded.size() / 4);
  for (size_t i = 0; i < padded.size(); i += 4) {
    s += fmt::format("{}vec4({}, {}, {}, {})", i ? ", " : "", Float(padded[i]), Float(padded[i + 1]),
                     Float(padded[i + 2]), Float(padded[i + 3]));
  }
  return s + ");\n";
}

std::string MaskPadding(ShaderParams& params, int channels, const std::string& v) {
  const int live = channels % 4;
  if (live == 0) return "";
  const std::string last = params.Int("last_s", (channels + 3) / 4 - 1);
  return fmt::format("  if (s == {}) {{ {} = vec4({}); }}\n", last, v,
                     live == 1 ? v + ".x, 0.0, 0.0, 0.0" : live == 2 ? v + ".xy, 0.0, 0.0" : v + ".xyz, 0.0");
}

std::string AccumulatorPrecision(const NodeContext& ctx) { return ctx.precision.full_sums() ? "highp " : ""; }

}  // namespace glsl

}  // namespace mgd::shaders
