// CONV_2D: OHWI filters, grouped when the input has a multiple of the
// filter's channels (the CPU only: the GPU takes one group); int8 and uint8
// in conv_quantized.cc.
#include <fmt/format.h>

#include "ops/conv/conv_quantized.h"
#include "ops/conv/conv_shader.h"
#include "ops/conv/conv_window.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::Conv2DOptions>();
  if (!options.ok()) return options.status();
  Conv2dAttributes a;
  if (const tflite::Conv2DOptions* o = *options) DecodeWindowOptions(*o, a);
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<Conv2dAttributes>(node.attributes);
  file.Set(tflite::CreateConv2DOptions(file.builder, ToTfl(a.padding), a.stride_w, a.stride_h, ToTfl(a.activation),
                                       a.dilation_w, a.dilation_h));
}

class Conv2dKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    a_ = AttributesOf<Conv2dAttributes>(ctx.node->attributes);
    const TensorRef& x = ctx.in(0);
    const TensorRef& w = ctx.in(1);
    const int ci = x.dim(3), co = w.dim(0), wci = w.dim(3);
    if (wci <= 0 || ci % wci != 0) {
      return ctx.Error(fmt::format("input has {} channels, not a multiple of the filter's {}", ci, wci));
    }
    groups_ = ci / wci;
    if (co % groups_ != 0) {
      return ctx.Error(fmt::format("{} output channels do not split into {} groups", co, groups_));
    }
    MGD_RETURN_IF_ERROR(CheckBias(ctx, 2, co));
    auto pads = PrepareWindow(ctx, a_, co);
    if (!pads.ok()) return pads.status();
    pads_ = *pads;
    quantized_.reset();
    if (x.type != DataType::kFloat32) {
      QuantizedWindow window = WindowOf(a_, pads_);
      window.groups = groups_;
      MGD_ASSIGN_OR_RETURN(quantized_, PrepareQuantizedConv(ctx, window));
    }
    // Constant weights are reordered at the first invoke, not here: when a
    // delegate takes the node (the usual case), that invoke never comes, and
    // reordering every filter of a model would slow each start.
    reordered_ = false;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    if (quantized_ != nullptr) return quantized_->Invoke(ctx);
    const TensorRef& w = ctx.in(1);
    if (!w.is_constant || !reordered_) ReorderWeights(w);
    reordered_ = w.is_constant;
    const int kw = w.dim(2), wci = w.dim(3), co = w.dim(0);
    const int cog = co / groups_;
    RunWindowed(ctx, a_, pads_, /*kx_outer=*/false, [&](float* acc, const float* xp, int ky, int kx) {
      const float* wp = weights_.data() + static_cast<size_t>((ky * kw + kx) * wci) * static_cast<size_t>(co);
      for (int g = 0; g < groups_; ++g) {
        float* ag = acc + g * cog;
        for (int c = 0; c < wci; ++c) {
          const float xv = xp[g * wci + c];
          const float* wr = wp + static_cast<size_t>(c) * static_cast<size_t>(co) + static_cast<size_t>(g * cog);
          for (int o = 0; o < cog; ++o) ag[o] += xv * wr[o];
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  // OHWI -> [Kh][Kw][Ci][Co] so the innermost loop runs over output channels
  // with independent accumulators (vectorizes without reassociating sums).
  void ReorderWeights(const TensorRef& w) {
    const int co = w.dim(0), kh = w.dim(1), kw = w.dim(2), ci = w.dim(3);
    weights_.resize(static_cast<size_t>(w.elements()));
    const float* src = w.as<float>();
    for (int o = 0; o < co; ++o)
      for (int y = 0; y < kh; ++y)
        for (int x = 0; x < kw; ++x)
          for (int c = 0; c < ci; ++c)
            weights_[static_cast<size_t>(((y * kw + x) * ci + c) * co + o)] = src[((o * kh + y) * kw + x) * ci + c];
  }

  Conv2dAttributes a_;
  int groups_ = 1;
  WindowPads pads_;
  std::vector<float> weights_;
  bool reordered_ = false;  // weights_ holds the constant weights
  std::unique_ptr<Kernel> quantized_;  // int8 and uint8 (conv_quantized.cc)
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generators' vocabulary

absl::StatusOr<GeneratedShader> Conv2d(const NodeContext& ctx) {
  const auto& a = AttributesOf<Conv2dAttributes>(ctx.node->attributes);
  auto shapes = ConstantConvShapes(ctx);
  if (!shapes.ok()) return shapes.status();
  const layout::Bhwc in = shapes->in, out = shapes->out;
  const Shape& w = ctx.input(1).shape;
  if (w.size() != 4) return absl::UnimplementedError("unexpected filter rank");
  if (w[3] != in.channels) return absl::UnimplementedError("grouped convolution is not supported on the GPU");
  return Conv(ctx, Geometry(ctx, in, a, w[1], w[2]), a.activation, in, out);
}

}  // namespace

std::vector<OpDefinition> Conv2dOps() {
  return {{.op = OpKind::kConv2d,
           .decode = Decode,
           .encode = Encode,
           .validate = ValidateWindowed<Conv2dAttributes>,
           .cpu_kernel = MakeKernel<Conv2dKernel>,
           .gpu = {Conv2d},
           .gpu_with_producer = {DepthwisePointwise, SqueezeExcite},
           .quantize = {.output = QuantizeRule::Output::kCalibrated, .filter = 1, .filter_axis = 0, .bias = 2}}};
}

}  // namespace mgd::ops
