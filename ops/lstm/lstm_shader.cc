// LSTM on the GPU: the whole sequence in one dispatch. A time step depends
// on the one before, so one workgroup walks the sequence of one batch row,
// its invocations sharing the cell's units; the input frame, the state and
// the units' outputs live in shared memory between barriers. The state comes
// from the variable tensors and goes back to them at the end, in place
// (GeneratedShader::updated_inputs), so it carries over to the next invoke.
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "ops/lstm/lstm.h"
#include "ops/lstm/lstm_inputs.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// What one workgroup's shared memory holds at most, in floats: 12 KiB of the
// 16 KiB every GLES 3.1 and Vulkan device has.
constexpr int kSharedFloats = 3072;

const float* ConstantData(const NodeContext& ctx, size_t i) {
  return ctx.has_input(i) ? reinterpret_cast<const float*>(ctx.input(i).data.data()) : nullptr;
}

// The four gates' weights from input `first` ([cell, k] matrices, gate g at
// first + g, absent ones zero) as vec4s (i, f, c, o) ordered [k][cell]: the
// invocations of neighbouring units read neighbouring vec4s.
std::vector<float> GateMatrices(const NodeContext& ctx, size_t first, int cells, int k) {
  std::vector<float> packed(static_cast<size_t>(k) * cells * 4, 0.0f);
  for (size_t gate = 0; gate < 4; ++gate) {
    const float* w = ConstantData(ctx, first + gate);
    if (w == nullptr) continue;
    for (int j = 0; j < cells; ++j) {
      for (int q = 0; q < k; ++q) packed[(static_cast<size_t>(q) * cells + j) * 4 + gate] = w[int64_t{j} * k + q];
    }
  }
  return packed;
}

// Per unit a vec4 (i, f, c, o) of inputs `first` + gate ([cell] vectors),
// absent ones zero.
std::vector<float> GateVectors(const NodeContext& ctx, size_t first, int cells) {
  std::vector<float> packed(static_cast<size_t>(cells) * 4, 0.0f);
  for (size_t gate = 0; gate < 4; ++gate) {
    const float* v = ConstantData(ctx, first + gate);
    for (int j = 0; v != nullptr && j < cells; ++j) packed[static_cast<size_t>(j) * 4 + gate] = v[j];
  }
  return packed;
}

// The cell's activation of variable `v` as an expression, through the
// shader kit's NaN-keeping clamp and driver-safe tanh.
std::string ActivationCode(Activation a, const std::string& v) {
  switch (a) {
    case Activation::kRelu: return glsl::Clamp(v, 0.0f, std::numeric_limits<float>::infinity());
    case Activation::kRelu6: return glsl::Clamp(v, 0.0f, 6.0f);
    case Activation::kTanh: return glsl::Tanh(v);
    default: return v;
  }
}

std::string Clip(float clip, const std::string& v, ShaderParams& params, const char* name) {
  if (clip <= 0.0f) return v;
  const std::string c = params.Float(name, clip);
  return fmt::format("clamp({}, -{}, {})", v, c, c);
}

}  // namespace

absl::StatusOr<GeneratedShader> LstmShader(const NodeContext& ctx) {
  const auto& attr = AttributesOf<LstmAttributes>(ctx.node->attributes);
  const bool sequence = ctx.node->op == OpKind::kUnidirectionalSequenceLstm;
  if (ctx.has_input(kForgetLayerNorm)) {
    return absl::UnimplementedError("an LSTM with layer-normalized gates runs on the CPU");
  }
  const Shape& xs = ctx.input(kInput).shape;
  const int batch = sequence && attr.time_major ? xs[1] : xs[0];
  const int time = sequence ? xs[attr.time_major ? 0 : 1] : 1;
  const int inputs = xs.back();
  const int cells = ctx.input(kInputToOutputWeights).shape[0];
  const int outputs = ctx.input(kRecurrentToOutputWeights).shape[1];
  for (size_t i : {kOutputState, kCellState}) {
    if (ctx.input(i).shape.size() != 2) {
      return absl::UnimplementedError(fmt::format("the state input {} is not [batch, size]", i));
    }
  }
  if (batch == 0 || time == 0 || inputs == 0 || cells == 0 || outputs == 0) {
    return absl::UnimplementedError("an empty LSTM runs on the CPU");
  }
  const int in_slices = (inputs + 3) / 4, out_slices = (outputs + 3) / 4, cell_slices = (cells + 3) / 4;
  const bool projection = ctx.has_input(kProjectionWeights);
  const bool peephole = ctx.has_input(kCellToForgetWeights);
  const bool cifg = !ctx.has_input(kInputToInputWeights);
  if (4 * (in_slices + out_slices + cell_slices) + cells > kSharedFloats) {
    return absl::UnimplementedError(fmt::format(
        "an LSTM of {} inputs, {} units and {} outputs needs more shared memory than a workgroup has", inputs, cells,
        outputs));
  }
  auto in = InputBhwc(ctx, kInput);
  auto out = OutputBhwc(ctx, 0);
  auto h_state = InputBhwc(ctx, kOutputState);
  auto c_state = InputBhwc(ctx, kCellState);
  if (!in.ok() || !out.ok() || !h_state.ok() || !c_state.ok()) return absl::UnimplementedError("LSTM shapes");

  GeneratedShader g = StartShader(ctx, *out, {static_cast<int>(kInput)});
  g.linkable = false;
  const int threads = cells <= 64 ? 64 : 128;
  g.code.workgroup = {static_cast<uint32_t>(threads), 1, 1};
  g.groups = {1, 1, static_cast<uint32_t>(batch)};
  // The state after the outputs, read and written in place.
  g.code.buffers.push_back({"h_state", "", BufferAccess::kReadWrite, true});
  g.code.buffers.push_back({"c_state", "", BufferAccess::kReadWrite, true});
  g.updated_inputs = {static_cast<int>(kOutputState), static_cast<int>(kCellState)};
  g.code.buffers.push_back({"wx", "vec4", BufferAccess::kRead, false});
  g.code.buffers.push_back({"wh", "vec4", BufferAccess::kRead, false});
  g.code.buffers.push_back({"bias", "vec4", BufferAccess::kRead, false});
  if (peephole) g.code.buffers.push_back({"peephole", "vec4", BufferAccess::kRead, false});
  if (projection) {
    g.code.buffers.push_back({"projection", "float", BufferAccess::kRead, false});
    g.code.buffers.push_back({"projection_bias", "float", BufferAccess::kRead, false});
  }
  if (!ctx.support_only) {
    g.constants.push_back(GateMatrices(ctx, kInputToInputWeights, cells, inputs));
    g.constants.push_back(GateMatrices(ctx, kRecurrentToInputWeights, cells, outputs));
    g.constants.push_back(GateVectors(ctx, kInputGateBias, cells));
    if (peephole) {
      std::vector<float> p = GateVectors(ctx, kCellToInputWeights, cells);  // (i, f, o, -)
      for (int j = 0; j < cells; ++j) std::swap(p[static_cast<size_t>(j) * 4 + 2], p[static_cast<size_t>(j) * 4 + 3]);
      g.constants.push_back(std::move(p));  // (i, f, -, o)
    }
    if (projection) {
      const float* w = ConstantData(ctx, kProjectionWeights);  // [outputs, cells] -> [cells][outputs]
      std::vector<float> t(static_cast<size_t>(cells) * outputs);
      for (int o = 0; o < outputs; ++o) {
        for (int j = 0; j < cells; ++j) t[static_cast<size_t>(j) * outputs + o] = w[int64_t{o} * cells + j];
      }
      g.constants.push_back(std::move(t));
      const float* b = ConstantData(ctx, kProjectionBias);
      g.constants.push_back(b != nullptr ? std::vector<float>(b, b + outputs) : std::vector<float>(outputs, 0.0f));
    }
  }

  ShaderParams& params = g.code.params;
  const std::string T = params.Int("threads", threads), N = params.Int("cells", cells);
  const std::string NIN = params.Int("inputs", inputs), NOUT = params.Int("outputs", outputs);
  const std::string XS = params.Int("in_slices", in_slices), HS = params.Int("out_slices", out_slices);
  const std::string CS = params.Int("cell_slices", cell_slices);
  // Where frame `step` of batch row `b` lies in the input and output.
  auto frame = [&](const std::string& buffer, const layout::Bhwc& shape, const std::string& slice, bool read) {
    const std::string bb = !sequence ? "b" : attr.time_major ? "step" : "b";
    const std::string xx = !sequence ? "0" : attr.time_major ? "b" : "step";
    return read ? glsl::Read(params, buffer, shape, bb, slice, "0", xx) : glsl::Index(params, buffer, shape, bb, slice, "0", xx);
  };
  const std::string sigmoid_f = "1.0 / (1.0 + exp(-sum.y))";
  std::string cell_update = fmt::format(
      "      highp float f = {f};\n"
      "      highp float i = {i};\n"
      "      highp float c = {clip_c};\n"
      "      sh_c[j] = c;\n"
      "      highp float o = 1.0 / (1.0 + exp(-(sum.w{peep_o})));\n"
      "      sh_m[j] = o * {act_c};\n",
      fmt::arg("f", sigmoid_f), fmt::arg("i", cifg ? "1.0 - f" : "1.0 / (1.0 + exp(-sum.x))"),
      fmt::arg("clip_c", Clip(attr.cell_clip, fmt::format("f * sh_c[j] + i * {}", ActivationCode(attr.activation, "sum.z")),
                              params, "cell_clip")),
      fmt::arg("peep_o", peephole ? " + peephole_at(j).w * c" : ""), fmt::arg("act_c", ActivationCode(attr.activation, "c")));
  const std::string new_h =
      projection ? fmt::format(
                       "    MGD_LOOP for (int k = t; k < {NOUT}; k += {T}) {{\n"
                       "      highp float sum = projection_bias[k];\n"
                       "      MGD_LOOP for (int j = 0; j < {N}; ++j) sum += projection[j * {NOUT} + k] * sh_m[j];\n"
                       "      sh_h[k] = {clip};\n"
                       "    }}\n",
                       fmt::arg("NOUT", NOUT), fmt::arg("T", T), fmt::arg("N", N),
                       fmt::arg("clip", Clip(attr.proj_clip, "sum", params, "proj_clip")))
                 : fmt::format("    MGD_LOOP for (int k = t; k < {N}; k += {T}) sh_h[k] = sh_m[k];\n", fmt::arg("N", N),
                               fmt::arg("T", T));
  g.code.body = fmt::format(
      "  int t = int(gl_LocalInvocationID.x), b = int(gl_WorkGroupID.z);\n"
      // The state as the variable tensors hold it; the padding lanes zero.
      "  MGD_LOOP for (int q = t; q < {HS}; q += {T}) {{\n"
      "    vec4 v = {read_h};\n"
      "    MGD_LOOP for (int k = 0; k < 4; ++k) sh_h[q * 4 + k] = q * 4 + k < {NOUT} ? v[k] : 0.0;\n"
      "  }}\n"
      "  MGD_LOOP for (int q = t; q < {CS}; q += {T}) {{\n"
      "    vec4 v = {read_c};\n"
      "    MGD_LOOP for (int k = 0; k < 4; ++k) sh_c[q * 4 + k] = q * 4 + k < {N} ? v[k] : 0.0;\n"
      "  }}\n"
      "  MGD_LOOP for (int step = 0; step < {TIME}; ++step) {{\n"
      "    MGD_LOOP for (int q = t; q < {XS}; q += {T}) {{\n"
      "      vec4 v = {read_x};\n"
      "      MGD_LOOP for (int k = 0; k < 4; ++k) sh_x[q * 4 + k] = v[k];\n"
      "    }}\n"
      "    memoryBarrierShared(); barrier();\n"
      // Each invocation's units: the four gates' sums (i, f, c, o) from the
      // frame and the previous output, then the unit's cell and output.
      "    MGD_LOOP for (int j = t; j < {N}; j += {T}) {{\n"
      "      highp vec4 sum = bias_at(j);\n"
      "      MGD_LOOP for (int p = 0; p < {NIN}; ++p) sum += wx_at(p * {N} + j) * sh_x[p];\n"
      "      MGD_LOOP for (int k = 0; k < {NOUT}; ++k) sum += wh_at(k * {N} + j) * sh_h[k];\n"
      "{peep_if}"
      "{cell_update}"
      "    }}\n"
      "    memoryBarrierShared(); barrier();\n"
      "{new_h}"
      "    memoryBarrierShared(); barrier();\n"
      "    MGD_LOOP for (int q = t; q < {HS}; q += {T}) {{\n"
      "      out0_set({out_index}, vec4(sh_h[q * 4], sh_h[q * 4 + 1], sh_h[q * 4 + 2], sh_h[q * 4 + 3]));\n"
      "    }}\n"
      "  }}\n"
      "  MGD_LOOP for (int q = t; q < {HS}; q += {T}) {{\n"
      "    h_state_set({h_index}, vec4(sh_h[q * 4], sh_h[q * 4 + 1], sh_h[q * 4 + 2], sh_h[q * 4 + 3]));\n"
      "  }}\n"
      "  MGD_LOOP for (int q = t; q < {CS}; q += {T}) {{\n"
      "    c_state_set({c_index}, vec4(sh_c[q * 4], sh_c[q * 4 + 1], sh_c[q * 4 + 2], sh_c[q * 4 + 3]));\n"
      "  }}\n",
      fmt::arg("T", T), fmt::arg("N", N), fmt::arg("NIN", NIN), fmt::arg("NOUT", NOUT), fmt::arg("XS", XS),
      fmt::arg("HS", HS), fmt::arg("CS", CS), fmt::arg("TIME", params.Int("time", time)),
      fmt::arg("read_h", glsl::Read(params, "h_state", *h_state, "b", "q", "0", "0")),
      fmt::arg("read_c", glsl::Read(params, "c_state", *c_state, "b", "q", "0", "0")),
      fmt::arg("read_x", frame("in0", *in, "q", true)),
      fmt::arg("peep_if", peephole ? "      sum.xy += peephole_at(j).xy * sh_c[j];\n" : ""),
      fmt::arg("cell_update", cell_update), fmt::arg("new_h", new_h), fmt::arg("out_index", frame("out0", *out, "q", false)),
      fmt::arg("h_index", glsl::Index(params, "h_state", *h_state, "b", "q", "0", "0")),
      fmt::arg("c_index", glsl::Index(params, "c_state", *c_state, "b", "q", "0", "0")));
  g.code.shared = fmt::format(
      "shared highp float sh_x[{}];\nshared highp float sh_h[{}];\nshared highp float sh_c[{}];\n"
      "shared highp float sh_m[{}];\n",
      4 * in_slices, 4 * out_slices, 4 * cell_slices, cells);
  return g;
}

}  // namespace mgd::ops
