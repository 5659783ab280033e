// PAD with zeros and MIRROR_PAD (the input's mirror image): TFLite's
// paddings as a constant [rank, 2] tensor. PAD of an int8 or uint8 tensor
// pads with its zero point, the quantized 0.
#include <fmt/format.h>

#include <algorithm>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/movement/movement.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

// The paddings are [rank, 2]: before and after each dimension.
absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kInt32, DataType::kInt64}));
  MGD_RETURN_IF_ERROR(c.Constant(1));
  MGD_RETURN_IF_ERROR(c.InputRank(1, 2));
  if (c.node().op == OpKind::kMirrorPad) return c.FloatWithConstantIndices();
  MGD_RETURN_IF_ERROR(quantized::FloatOr8Bit(c));
  return quantized::KeepsQuantization(c);
}

absl::Status CheckPaddings(const KernelContext& ctx, const TensorRef& x, const TensorRef& p) {
  if (p.dim(0) == x.rank() && p.dim(1) == 2) return absl::OkStatus();
  return ctx.Error(fmt::format("paddings have shape {}, expected [{},2]", ShapeToString(p.shape), x.rank()));
}

// PadOptions is an empty table; it is written for TFLite's sake.
void Encode(const Node&, EncodeContext& file) { file.Set(tflite::CreatePadOptions(file.builder)); }

class PadKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& p = ctx.in(1);
    MGD_RETURN_IF_ERROR(CheckPaddings(ctx, x, p));
    before_.clear();
    Shape expected = x.shape;
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t lo = IndexValue(p, 2 * d), hi = IndexValue(p, 2 * d + 1);
      if (lo < 0 || hi < 0 || lo > (1 << 24) || hi > (1 << 24)) {
        return ctx.Error(fmt::format("paddings [{}, {}] of dimension {} are out of range", lo, hi, d));
      }
      before_.push_back(static_cast<int>(lo));
      expected[static_cast<size_t>(d)] += static_cast<int32_t>(lo + hi);
    }
    fill_ = 0;
    if (quantized::Is8Bit(x.type)) {
      MGD_ASSIGN_OR_RETURN(const quantized::Params q, quantized::PerTensor(ctx, x));
      fill_ = static_cast<uint8_t>(q.zero_point);  // int8's two's complement byte too
    }
    return ctx.ExpectOutputShape(0, expected);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    std::memset(y.data, fill_, y.bytes);
    if (x.elements() == 0) return absl::OkStatus();
    // Copy the input into the window of the output it lands in, in bytes.
    const size_t bytes = ElementSize(x.type);
    const auto ys = Strides(y.shape);
    int64_t offset = 0;
    for (int d = 0; d < x.rank(); ++d) offset += before_[static_cast<size_t>(d)] * ys[static_cast<size_t>(d)];
    const uint8_t* xd = x.data;
    uint8_t* yd = y.data + static_cast<size_t>(offset) * bytes;
    // Scatter: iterate over the input, writing with the output's strides.
    const size_t rank = x.shape.size();
    if (rank == 0) {
      std::memcpy(yd, xd, bytes);
      return absl::OkStatus();
    }
    std::vector<int> index(rank, 0);
    int64_t dst = 0;
    const int inner = x.shape[rank - 1];
    for (int64_t i = 0; i < x.elements(); i += inner) {
      std::memcpy(yd + static_cast<size_t>(dst) * bytes, xd + static_cast<size_t>(i) * bytes,
                  static_cast<size_t>(inner) * bytes);
      for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
        const size_t ud = static_cast<size_t>(d);
        if (++index[ud] < x.shape[ud]) {
          dst += ys[ud];
          break;
        }
        dst -= ys[ud] * (x.shape[ud] - 1);
        index[ud] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int> before_;
  uint8_t fill_ = 0;  // the padding's byte: 0, or an 8-bit tensor's zero point
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

absl::StatusOr<GeneratedShader> Pad(const NodeContext& ctx) {
  if (!ctx.input(1).is_constant) return absl::UnimplementedError("paddings must be constant for the GPU");
  if (ctx.node->inputs.size() > 2) return absl::UnimplementedError("PAD with a constant value");
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const std::vector<int64_t> p = ConstantInts(ctx.input(1));
  const int rank = static_cast<int>(ctx.input(0).shape.size());
  int64_t before[4] = {0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) before[BhwcAxis(d, rank)] = p[2 * static_cast<size_t>(d)];
  GeneratedShader g = StartShader(ctx, *out, {0});
  ShaderParams& params = g.code.params;
  g.code.body += fmt::format(
      "  int ib = b - {}, iy = y - {}, ix = x - {};\n"
      "  bool inside = ib >= 0 && ib < {} && iy >= 0 && iy < {} && ix >= 0 && ix < {};\n",
      params.Int("before_b", before[0]), params.Int("before_y", before[1]), params.Int("before_x", before[2]),
      params.Int("in0_b", in->batch), params.Int("in0_h", in->height), params.Int("in0_w", in->width));
  if (before[3] % 4 == 0) {
    // Whole slices move; lanes past the input's channels are zero already.
    g.code.body += fmt::format(
        "  int is = s - {};\n"
        "  vec4 value = (inside && is >= 0 && is < {}) ? vec4({}) : vec4(0.0);\n",
        params.Int("before_s", before[3] / 4), params.Int("in0_s", in->slices()),
        glsl::Read(params, "in0", *in, "ib", "is", "iy", "ix"));
  } else {
    g.code.body += fmt::format(
        "  vec4 value = vec4(0.0);\n"
        "  MGD_LOOP for (int k = 0; k < 4; ++k) {{\n"
        "    int ic = s * 4 + k - {};\n"
        "    if (inside && ic >= 0 && ic < {}) value[k] = {}[ic % 4];\n"
        "  }}\n",
        params.Int("before_c", before[3]), params.Int("in0_c", in->channels),
        glsl::Read(params, "in0", *in, "ib", "ic / 4", "iy", "ix"));
  }
  return g;
}

absl::StatusOr<Attributes> DecodeMirror(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::MirrorPadOptions>();
  if (!options.ok()) return options.status();
  return MirrorPadAttributes{*options && (*options)->mode() == tflite::MirrorPadMode_SYMMETRIC};
}

void EncodeMirror(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateMirrorPadOptions(file.builder, AttributesOf<MirrorPadAttributes>(node.attributes).symmetric
                                                            ? tflite::MirrorPadMode_SYMMETRIC
                                                            : tflite::MirrorPadMode_REFLECT));
}

// TFLite's mirror_pad.cc: REFLECT (offset 1) mirrors about the edge element,
// SYMMETRIC (offset 0) about the edge itself. Margins are at most n - offset,
// so one reflection reaches every element.
int MirrorSource(int p, int before, int n, int offset) {
  if (p < before) return before + offset - 1 - p;
  p -= before;
  return p < n ? p : 2 * n - 1 - offset - p;
}

class MirrorPadKernel : public PerAxisKernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    const TensorRef& p = ctx.in(1);
    MGD_RETURN_IF_ERROR(CheckPaddings(ctx, x, p));
    const bool symmetric = AttributesOf<MirrorPadAttributes>(ctx.node->attributes).symmetric;
    const int offset = symmetric ? 0 : 1;
    Shape expected;
    source_.assign(x.shape.size(), {});
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t lo = IndexValue(p, 2 * d), hi = IndexValue(p, 2 * d + 1);
      const int n = x.dim(d);
      if (lo < 0 || hi < 0 || lo > n - offset || hi > n - offset) {
        return ctx.Error(fmt::format("paddings [{}, {}] of dimension {} ({} elements) are out of range for {} (at most {})",
                                     lo, hi, d, n, symmetric ? "SYMMETRIC" : "REFLECT", n - offset));
      }
      expected.push_back(static_cast<int>(n + lo + hi));
      for (int i = 0; i < expected.back(); ++i) {
        source_[static_cast<size_t>(d)].push_back(MirrorSource(i, static_cast<int>(lo), n, offset));
      }
    }
    return ctx.ExpectOutputShape(0, expected);
  }
};

absl::StatusOr<GeneratedShader> MirrorPad(const NodeContext& ctx) {
  if (!ctx.input(1).is_constant) return absl::UnimplementedError("paddings must be constant for the GPU");
  auto in = InputBhwc(ctx, 0);
  if (!in.ok()) return in.status();
  const std::vector<int64_t> p = ConstantInts(ctx.input(1));
  const int rank = static_cast<int>(ctx.input(0).shape.size());
  int64_t before[4] = {0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) before[BhwcAxis(d, rank)] = p[2 * static_cast<size_t>(d)];
  const int extent[4] = {in->batch, in->height, in->width, in->channels};
  const int offset = AttributesOf<MirrorPadAttributes>(ctx.node->attributes).symmetric ? 0 : 1;
  // MirrorSource in GLSL.
  return PerAxisGather(ctx, [&](int d, const std::string& v, ShaderParams& params) {
    const std::string lo = params.Int(fmt::format("before{}", d), before[d]);
    const std::string n = params.Int(fmt::format("in0_extent{}", d), extent[d]);
    return fmt::format("({0} < {1} ? {1} + {3} - 1 - {0} : ({0} - {1} < {2} ? {0} - {1} : 2 * {2} - 1 - {3} - ({0} - {1})))",
                       v, lo, n, offset);
  });
}

bool NoMargins(const Graph& graph, const Node& node) {
  const std::vector<int64_t> m = PadMargins(graph, node);
  return !m.empty() && std::all_of(m.begin(), m.end(), [](int64_t v) { return v == 0; });
}

}  // namespace

std::vector<OpDefinition> PadOps() {
  return {{.op = OpKind::kPad,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<PadKernel>,
           .is_identity = NoMargins,
           .gpu = {Pad},
           .quantize = {.output = QuantizeRule::Output::kInput, .moves_values = AlwaysMovesValues}},
          {.op = OpKind::kMirrorPad,
           .decode = DecodeMirror,
           .encode = EncodeMirror,
           .validate = Validate,
           .cpu_kernel = MakeKernel<MirrorPadKernel>,
           .gpu = {MirrorPad}}};
}

}  // namespace mgd::ops
