// DEPTHWISE_CONV_2D: filters [1, kh, kw, channels * multiplier], output
// channel c reading input channel c / multiplier; int8 and uint8 in
// conv_quantized.cc.
#include <fmt/format.h>

#include "layout/weights.h"
#include "model/constants.h"
#include "ops/conv/conv_quantized.h"
#include "ops/conv/conv_shader.h"
#include "ops/conv/conv_window.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::DepthwiseConv2DOptions>();
  if (!options.ok()) return options.status();
  DepthwiseConv2dAttributes a;
  if (const tflite::DepthwiseConv2DOptions* o = *options) {
    DecodeWindowOptions(*o, a);
    a.depth_multiplier = o->depth_multiplier();
  }
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<DepthwiseConv2dAttributes>(node.attributes);
  file.Set(tflite::CreateDepthwiseConv2DOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h,
                                                a.depth_multiplier, ToTfl(a.activation), a.dilation_w, a.dilation_h));
}

class DepthwiseConv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<DepthwiseConv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(3);
    if (w.dim(0) != 1) return ctx.Error(fmt::format("filter shape {} must start with 1", ShapeToString(w.shape)));
    if (ci <= 0 || co % ci != 0) {
      return ctx.Error(fmt::format("filter has {} channels, not a multiple of the input's {}", co, ci));
    }
    multiplier_ = co / ci;
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    auto pads = PrepareWindow(ctx, a_, co);
    if (!pads.ok()) return pads.status();
    pads_ = *pads;
    quantized_.reset();
    if (x.type != DataType::kFloat32) {
      QuantizedWindow window = WindowOf(a_, pads_);
      window.depthwise = true;
      window.multiplier = multiplier_;
      MGD_ASSIGN_OR_RETURN(quantized_, PrepareQuantizedConv(ctx, window));
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (quantized_ != nullptr) return quantized_->Invoke(ctx);
    const TensorRef& w = ctx.in(1);
    const int kw = w.dim(2), co = w.dim(3);
    const float* wd = w.as<float>();
    RunWindowed(ctx, a_, pads_, /*kx_outer=*/true, [&](float* acc, const float* xp, int ky, int kx) {
      const float* wp = wd + static_cast<size_t>((ky * kw + kx) * co);
      if (multiplier_ == 1) {
        for (int o = 0; o < co; ++o) acc[o] += xp[o] * wp[o];
      } else {
        for (int o = 0; o < co; ++o) acc[o] += xp[o / multiplier_] * wp[o];
      }
    });
    return absl::OkStatus();
  }

 private:
  DepthwiseConv2dAttributes a_;
  int multiplier_ = 1;
  WindowPads pads_;
  std::unique_ptr<Kernel> quantized_;  // int8 and uint8 (conv_quantized.cc)
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> DepthwiseConv2d(const NodeContext& ctx) {
  const auto& a = AttributesOf<DepthwiseConv2dAttributes>(ctx.node->attributes);
  auto shapes = ConstantConvShapes(ctx);
  if (!shapes.ok()) return shapes.status();
  const layout::Bhwc in = shapes->in, out = shapes->out;
  const Shape& ws = ctx.input(1).shape;
  const int multiplier = out.channels / std::max(1, in.channels);
  const ConvGeometry geometry = Geometry(ctx, in, a, ws[1], ws[2]);
  GeneratedShader g = StartConvShader(ctx, out, 0);
  g.constants = {PackUnlessSupportOnly(ctx, [&] {
    const std::vector<float> weights = ConstantFloats(ctx.input(1));
    return layout::ToDepthwiseWeights4(weights.data(), ws[1], ws[2], out.channels).values;
  })};
  const std::string bias = BiasInit(ctx, g, 2, out.channels);
  g.code.body += Finish(bias + DepthwiseSum(g.code.params, in, geometry, multiplier, "s"), a.activation);
  return g;
}

}  // namespace

std::string DepthwiseSum(ShaderParams& params, const layout::Bhwc& in, const ConvGeometry& geometry, int multiplier,
                         const std::string& slice) {
  std::string prelude, read, inner;
  if (multiplier == 1) {
    read = "vec4(" + glsl::Read(params, "in0", in, "b", slice, "iy", "ix") + ")";
  } else {
    // Output channel c reads input channel c / multiplier: gather per lane.
    read = "v";
    prelude = fmt::format("  ivec4 ic = min((ivec4({} * 4) + ivec4(0, 1, 2, 3)) / {}, ivec4({}));\n", slice,
                          params.Int("multiplier", multiplier), params.Int("in0_last_c", in.channels - 1));
    inner += "      vec4 v;\n";
    for (int k = 0; k < 4; ++k) {
      inner += fmt::format("      v[{}] = {}[ic[{}] % 4];\n", k,
                           glsl::Read(params, "in0", in, "b", fmt::format("ic[{}] / 4", k), "iy", "ix"), k);
    }
  }
  inner += fmt::format("      acc += {} * weights_at(({} * {} + ky) * {} + kx);\n", read, slice,
                       params.Int("filter_h", geometry.kh), params.Int("filter_w", geometry.kw));
  return prelude + WindowLoops(params, in, geometry, inner, TapOrder::kColumnsOuter);
}

std::vector<OpDefinition> DepthwiseConv2dOps() {
  return {{.op = OpKind::kDepthwiseConv2d,
           .decode = Decode,
           .encode = Encode,
           .validate = ValidateWindowed<DepthwiseConv2dAttributes>,
           .cpu_kernel = MakeKernel<DepthwiseConv2dKernel>,
           .gpu = {DepthwiseConv2d},
           .quantize = {.output = QuantizeRule::Output::kCalibrated, .filter = 1, .filter_axis = 3, .bias = 2}}};
}

}  // namespace mgd::ops
