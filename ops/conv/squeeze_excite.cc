// A squeeze-and-excitation gate in one workgroup: a 1x1 CONV_2D over one
// pixel (the expansion) computing the 1x1 CONV_2D that makes its input (the
// squeeze, ctx.producer) and, when there is one, the global average pool
// that makes the squeeze's (ctx.source). The workgroup's invocations first
// share the pool's input and add their partial sums as a tree in shared
// memory (as the split pool does, ops/pool/pool.cc), then compute the
// squeezed slices, then the expanded ones, each step reading the last from
// shared memory. With fp16 storage the pooled and squeezed values are
// rounded to fp16 there, as they would be in buffers: fused and unfused give
// the same numbers but for the pool's order of sums.
#include <fmt/format.h>

#include <algorithm>

#include "model/constants.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_shader.h"
#include "ops/pool/pool.h"
#include "shaders/ops.h"

namespace mgd::ops {

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

namespace {

// The most input vec4s one workgroup pools: with 128 invocations, 128 loads
// each, one after another. A larger input is pooled by the pool's own shader
// over a workgroup per slice, and only the two convolutions share one. On
// the H100 (selfie_segmentation, docs/perf.md) pooling inside the gate up to
// 16384 vec4s against up to 2048: GL 0.59 against 0.63 ms of GPU time (its
// dispatches cost more), Vulkan 0.349 against 0.341.
constexpr int64_t kMaxPooledVec4s = 16384;

// A 1x1 CONV_2D over one pixel with constant filter and bias: its input and
// output, or an error.
absl::StatusOr<ConvShapes> OnePixelConv(const NodeContext& ctx) {
  if (ctx.node->op != OpKind::kConv2d) return absl::UnimplementedError("not a CONV_2D");
  auto shapes = ConstantConvShapes(ctx);
  if (!shapes.ok()) return shapes.status();
  const layout::Bhwc in = shapes->in, out = shapes->out;
  const Shape& w = ctx.input(1).shape;
  if (in.height != 1 || in.width != 1 || out.height != 1 || out.width != 1 || w.size() != 4 || w[1] != 1 ||
      w[2] != 1 || w[3] != in.channels || in.batch != out.batch) {
    return absl::UnimplementedError("not a 1x1 convolution over one pixel");
  }
  return *shapes;
}

// The most channels either convolution sums per output. With as many output
// slices as invocations each invocation sums its output alone, about 8
// cycles a channel, so that a longer sum (a classifier's 1024-channel head
// after its pool) takes longer than the dispatches it saves and is better
// split as the plain convolution does.
constexpr int kMaxSumLength = 512;

// A 1x1 convolution over one pixel from `inputs` slices to `outputs` split
// across the workgroup: `lanes` invocations per output slice, each summing
// `chunk` input slices in order; lane 0 adds them in lane order. One
// invocation per output summed its whole chain of weight loads one after
// another (on the H100 a 96 -> 24 -> 96 gate took 9-11 us).
struct SplitSum {
  int lanes, chunk;
};
SplitSum SplitOf(int outputs, int inputs, int invocations) {
  const int lanes = std::max(1, std::min(inputs, invocations / std::max(1, outputs)));
  const int chunk = (inputs + lanes - 1) / lanes;
  return {(inputs + chunk - 1) / chunk, chunk};
}

// Lane l's partial sum of output slice `o` (+ `first`) into partial[l]: the
// bias in lane 0, then its chunk of `from`'s slices times the filter at
// `filter` (O4I4, `inputs` slices per output slice).
std::string PartialSum(const std::string& acc, const SplitSum& split, const std::string& outputs,
                       const std::string& first, const std::string& bias, const std::string& filter,
                       const std::string& from, const std::string& inputs) {
  return fmt::format(
      "  {{\n"
      "    int o = l / {K}, k = l - o * {K}, os = {first} + o;\n"
      "    if (os < {O}) {{\n"
      "      {acc} = k == 0 ? weights_at({bias} + os) : vec4(0.0);\n"
      "      MGD_LOOP for (int is = k * {C}; is < min({I}, k * {C} + {C}); ++is) {{\n"
      "        vec4 v = {from}[is];\n"
      "        int w = {filter} + (os * {I} + is) * 4;\n"
      "{mac}"
      "      }}\n"
      "      partial[l] = acc;\n"
      "    }}\n"
      "  }}\n"
      "  memoryBarrierShared(); barrier();\n",
      fmt::arg("K", split.lanes), fmt::arg("first", first),
      fmt::arg("O", outputs), fmt::arg("acc", acc), fmt::arg("bias", bias), fmt::arg("C", split.chunk),
      fmt::arg("I", inputs), fmt::arg("from", from), fmt::arg("filter", filter),
      fmt::arg("mac", MultiplyAccumulate("w", "v")));
}

// Output slice l's sum from its lanes' partial sums, in lane order.
std::string Combine(const std::string& acc, const SplitSum& split) {
  return fmt::format(
      "    {acc} = partial[l * {K}];\n"
      "    MGD_LOOP for (int k = 1; k < {K}; ++k) acc += partial[l * {K} + k];\n",
      fmt::arg("acc", acc), fmt::arg("K", split.lanes));
}

}  // namespace

absl::StatusOr<GeneratedShader> SqueezeExcite(const NodeContext& ctx) {
  // The pool is the source, or the producer of a gate without a squeeze.
  const bool squeezes = ctx.producer != nullptr && ctx.producer->op == OpKind::kConv2d;
  const Node* pool = squeezes ? ctx.source : ctx.producer;
  if (ctx.producer == nullptr || (!squeezes && ctx.source != nullptr)) {
    return absl::UnimplementedError("only a pool and a 1x1 convolution are computed inside a squeeze-and-excitation gate");
  }
  if (!ctx.workgroup_reduction) return absl::UnimplementedError("its workgroups share memory");
  // The squeeze's context reads what the pool makes, the expansion's what
  // the squeeze makes.
  Node expand = *ctx.node, squeeze = squeezes ? *ctx.producer : Node{};
  expand.inputs[0] = ctx.producer->outputs[0];
  NodeContext ex = ctx, sq = ctx;
  ex.node = &expand;
  sq.node = &squeeze;
  sq.node_index = ctx.producer_index;
  auto ex_shapes = OnePixelConv(ex);
  if (!ex_shapes.ok()) return ex_shapes.status();
  auto in = InputBhwc(ctx, 0);
  if (!in.ok()) return in.status();
  layout::Bhwc pooled = ex_shapes->in, squeezed = ex_shapes->in;
  if (squeezes) {
    auto sq_shapes = OnePixelConv(sq);
    if (!sq_shapes.ok()) return sq_shapes.status();
    pooled = sq_shapes->in;
    if (!(sq_shapes->out == squeezed)) return absl::UnimplementedError("the expansion reads another tensor");
  }
  const layout::Bhwc out = ex_shapes->out;
  if (pooled.channels > kMaxSumLength || squeezed.channels > kMaxSumLength) {
    return absl::UnimplementedError("sums too long for one invocation each");
  }
  std::optional<Activation> pool_activation;
  if (pool != nullptr) {
    pool_activation = GlobalAverage(*ctx.graph, *pool);
    if (!pool_activation) return absl::UnimplementedError("no global average pool before the gate");
    if (static_cast<int64_t>(in->height) * in->width * in->slices() > kMaxPooledVec4s) {
      return absl::UnimplementedError("too large an input for one workgroup to pool");
    }
  } else if (!(*in == pooled)) {
    return absl::UnimplementedError("the squeeze reads another tensor");
  }
  const int in_slices = pooled.slices(), mid_slices = squeezed.slices(), out_slices = out.slices();
  // The workgroup the table asks for (more invocations pool with more loads
  // in flight: on the H100 512 against 128 took selfie's ten gates from 90
  // to 62 us, docs/perf.md), halved until its partial sums fit in shared
  // memory.
  auto shared_bytes = [&](int n) { return (std::max(in_slices, n) + in_slices + (squeezes ? mid_slices : 0)) * 16; };
  const int invocations = WithinSharedMemory(ctx.gate_invocations, shared_bytes);
  if (shared_bytes(invocations) > kSharedBytes) return absl::UnimplementedError("the gate's channels exceed shared memory");
  // Per pooled slice, the most invocations (a power of two) that all slices
  // at once can have; one each past `invocations` / 2 slices.
  int lanes = 1;
  while (lanes * 2 * in_slices <= invocations) lanes *= 2;
  const int partials = std::max(in_slices, invocations);
  if (out.batch > 65535) return absl::UnimplementedError("too many images");

  GeneratedShader g = StartConvShader(ctx, out, 0);
  g.code.name = fmt::format("node{}_SQUEEZE_EXCITE", ctx.source != nullptr ? ctx.source_index : ctx.producer_index);
  int64_t sq_bias = 0, ex_weights = 0, ex_bias = 0;
  g.constants = {PackUnlessSupportOnly(ctx, [&] {
    std::vector<float> weights;
    if (squeezes) {
      weights = PackedConvWeights(sq.input(1), squeezed.channels, 1, 1, pooled.channels);
      sq_bias = AppendVec4s(weights, PaddedBias(sq, 2, squeezed.channels));
    }
    ex_weights = AppendVec4s(weights, PackedConvWeights(ex.input(1), out.channels, 1, 1, squeezed.channels));
    ex_bias = AppendVec4s(weights, PaddedBias(ex, 2, out.channels));
    return weights;
  })};
  // Output slices per workgroup; each workgroup pools and squeezes again.
  const int per_group = std::min(out_slices, invocations);
  g.code.workgroup = {static_cast<uint32_t>(invocations), 1, 1};
  g.groups = {static_cast<uint32_t>((out_slices + per_group - 1) / per_group), 1, static_cast<uint32_t>(out.batch)};
  g.code.shared = fmt::format("shared highp vec4 pooled[{}];\n", in_slices);
  if (squeezes) g.code.shared += fmt::format("shared highp vec4 squeezed[{}];\n", mid_slices);
  g.code.shared += fmt::format("shared highp vec4 partial[{}];\n", partials);
  ShaderParams& params = g.code.params;
  const bool half = ctx.precision.half_storage();
  // What a buffer of the model's storage would hold.
  auto stored = [&](const std::string& v) {
    return half ? fmt::format("vec4(unpackHalf2x16(packHalf2x16({0}.xy)), unpackHalf2x16(packHalf2x16({0}.zw)))", v)
                : v;
  };
  const std::string S = params.Int("pooled_s", in_slices), T = std::to_string(invocations);
  g.prologue = "  int l = int(gl_LocalInvocationID.x), b = int(gl_WorkGroupID.z);\n";
  if (pool != nullptr) {
    // Slice ps's partial sums lie at [ps * L, ps * L + L): invocation l
    // takes pixels l % L, + L, ... of slices l / L, + T / L, ... (a slice's
    // pixels are one plane of PHWC4).
    const std::string L = std::to_string(lanes), R = std::to_string(invocations / lanes);
    g.prologue += fmt::format(
        "  int g = l % {L};\n"
        "  MGD_LOOP for (int ps = l / {L}; ps < {S}; ps += {R}) {{\n"
        "    int plane = {plane};\n"
        "    highp vec4 sum = vec4(0.0);\n"
        "    MGD_LOOP for (int q = g; q < {P}; q += {L}) sum += vec4(in0_at(plane + q));\n"
        "    partial[ps * {L} + g] = sum;\n"
        "  }}\n"
        "  MGD_LOOP for (int k = {L} / 2; k > 0; k /= 2) {{\n"
        "    memoryBarrierShared(); barrier();\n"
        "    if (g < k) {{\n"
        "      MGD_LOOP for (int ps = l / {L}; ps < {S}; ps += {R}) partial[ps * {L} + g] += partial[ps * {L} + g + k];\n"
        "    }}\n"
        "  }}\n"
        "  memoryBarrierShared(); barrier();\n"
        "  MGD_LOOP for (int ps = l; ps < {S}; ps += {T}) {{\n"
        "    highp vec4 acc = partial[ps * {L}] / float({P});\n"
        "{activation}"
        "    pooled[ps] = {store};\n"
        "  }}\n",
        fmt::arg("L", L), fmt::arg("R", R), fmt::arg("S", S), fmt::arg("T", T),
        fmt::arg("P", params.Int("pool_pixels", in->height * in->width)),
        fmt::arg("plane", glsl::Index(params, "in0", *in, "b", "ps", "0", "0")),
        fmt::arg("activation", glsl::Activation(*pool_activation, "acc")), fmt::arg("store", stored("acc")));
  } else {
    g.prologue += fmt::format("  MGD_LOOP for (int ps = l; ps < {S}; ps += {T}) pooled[ps] = vec4({read});\n",
                              fmt::arg("S", S), fmt::arg("T", T),
                              fmt::arg("read", glsl::Read(params, "in0", *in, "b", "ps", "0", "0")));
  }
  const std::string acc = glsl::AccumulatorPrecision(ctx) + "vec4 acc";
  const std::string M = squeezes ? params.Int("squeezed_s", mid_slices) : S;
  g.prologue += "  memoryBarrierShared(); barrier();\n";
  if (squeezes) {
    const SplitSum split = SplitOf(mid_slices, in_slices, invocations);
    g.prologue += PartialSum(acc, split, M, "0", params.Int("squeeze_bias_at", sq_bias), "0", "pooled", S) +
                  fmt::format("  if (l < {M}) {{\n"
                              "{combine}"
                              "{activation}"
                              "    squeezed[l] = {store};\n"
                              "  }}\n"
                              "  memoryBarrierShared(); barrier();\n",
                              fmt::arg("M", M), fmt::arg("combine", Combine(acc, split)),
                              fmt::arg("activation", glsl::Activation(
                                                         AttributesOf<Conv2dAttributes>(squeeze.attributes).activation, "acc")),
                              fmt::arg("store", stored("vec4(acc)")));
  }
  const SplitSum split = SplitOf(per_group, squeezes ? mid_slices : in_slices, invocations);
  const std::string OS = params.Int("out_s", out_slices), first = "int(gl_WorkGroupID.x) * " + std::to_string(per_group);
  g.prologue += PartialSum(acc, split, OS, first, params.Int("bias_at", ex_bias), params.Int("expand_at", ex_weights),
                           squeezes ? "squeezed" : "pooled", M) +
                fmt::format("  int x = 0, y = 0, s = {first} + l;\n"
                            "  if (l >= {N} || s >= {OS}) return;\n"
                            "  int z = b * {OS} + s, out_index = z;\n",
                            fmt::arg("first", first), fmt::arg("N", per_group), fmt::arg("OS", OS));
  const auto& exa = AttributesOf<Conv2dAttributes>(expand.attributes);
  g.code.body = Combine(acc, split);
  g.code.body = Finish(g.code.body, exa.activation);
  return g;
}

}  // namespace mgd::ops
