#include "tools/mgd/modelgen.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/fp16.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/reshape/reshape.h"
#include "ops/softmax/softmax.h"
#include "quantizer/calibrate.h"
#include "quantizer/quantize_graph.h"
#include "tools/mgd/modelgen_builder.h"

namespace mgd {
namespace {

using modelgen::Builder;

// Howard et al. 2017, table 1: conv 3x3/2 32, then 13 depthwise-separable
// blocks (output channels, depthwise stride), avg pool, 1x1 conv logits.
Graph MobileNetV1(Builder& b) {
  constexpr struct { int channels, stride; } kBlocks[] = {
      {64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
      {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  const std::string p = "MobilenetV1/";
  int x = b.Input("input", {1, 224, 224, 3});
  x = b.Conv(p + "Conv2d_0", x, 32, 3, 2, Activation::kRelu6);
  int i = 1;
  for (const auto& block : kBlocks) {
    x = b.Depthwise(fmt::format("{}Conv2d_{}_depthwise", p, i), x, block.stride, Activation::kRelu6);
    x = b.Conv(fmt::format("{}Conv2d_{}_pointwise", p, i), x, block.channels, 1, 1, Activation::kRelu6);
    ++i;
  }
  x = b.GlobalAveragePool(p + "Logits/AvgPool_1a/AvgPool", x);
  x = b.Conv(p + "Logits/Conv2d_1c_1x1", x, 1001, 1, 1, Activation::kNone);
  b.Classifier(p + "Logits/SpatialSqueeze", p + "Predictions/Reshape_1", x);
  return b.Finish("MobileNet v1 1.0 224");
}

// Sandler et al. 2018, table 2: conv 3x3/2 32, then bottleneck groups
// (expansion t, output channels c, repeats n, first stride s), conv 1x1 1280,
// avg pool, 1x1 conv logits. A bottleneck: expand 1x1 + RELU6 (absent for
// t = 1), depthwise 3x3 + RELU6, linear project 1x1, and a residual ADD when
// the block keeps the shape (stride 1, same channels).
Graph MobileNetV2(Builder& b) {
  constexpr struct { int t, c, n, s; } kGroups[] = {
      {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  const std::string p = "MobilenetV2/";
  int x = b.Input("input", {1, 224, 224, 3});
  x = b.Conv(p + "Conv", x, 32, 3, 2, Activation::kRelu6);
  int block = 0;
  for (const auto& g : kGroups) {
    for (int r = 0; r < g.n; ++r, ++block) {
      const std::string scope = block == 0 ? p + "expanded_conv" : fmt::format("{}expanded_conv_{}", p, block);
      x = b.InvertedResidual({scope + "/expand", scope + "/depthwise", scope + "/project", scope + "/add"}, x, g.t, g.c,
                             r == 0 ? g.s : 1);
    }
  }
  x = b.Conv(p + "Conv_1", x, 1280, 1, 1, Activation::kRelu6);
  x = b.GlobalAveragePool(p + "Logits/AvgPool", x);
  x = b.Conv(p + "Logits/Conv2d_1c_1x1", x, 1001, 1, 1, Activation::kNone);
  b.Classifier(p + "Logits/Squeeze", p + "Predictions/Reshape_1", x);
  return b.Finish("MobileNet v2 1.0 224");
}

// EfficientNet-B0 (Tan and Le 2019, table 1) as the Lite variants change it
// (tensorflow/tpu, efficientnet/lite): no squeeze-and-excitation, RELU6 for
// swish, stem and head fixed at 32 and 1280 channels; Lite0 keeps B0's
// width, depth and 224 input. MBConv stages (expansion t, depthwise kernel
// k, first stride s, output channels c, repeats n): expand 1x1 + RELU6
// (absent for t = 1), depthwise k x k + RELU6, linear project 1x1, a
// residual ADD when the block keeps the shape. The head: 1x1 conv 1280,
// global average pooling (MEAN, as keras writes it), dense 1000, softmax.
Graph EfficientNetLite0(Builder& b) {
  constexpr struct { int t, k, s, c, n; } kStages[] = {
      {1, 3, 1, 16, 1}, {6, 3, 2, 24, 2}, {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
      {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  const std::string p = "efficientnet-lite0/model/";
  int x = b.Input("images", {1, 224, 224, 3});
  x = b.Conv(p + "stem/conv2d", x, 32, 3, 2, Activation::kRelu6);
  int block = 0;
  for (const auto& stage : kStages) {
    for (int r = 0; r < stage.n; ++r, ++block) {
      const std::string scope = fmt::format("{}blocks_{}/", p, block);
      x = b.InvertedResidual({scope + "conv2d", scope + "depthwise_conv2d", scope + "conv2d_1", scope + "add"}, x, stage.t,
                             stage.c, r == 0 ? stage.s : 1, stage.k);
    }
  }
  x = b.Conv(p + "head/conv2d", x, 1280, 1, 1, Activation::kRelu6);
  x = b.SpatialMean(p + "head/global_average_pooling2d/Mean", x);
  x = b.FullyConnected(p + "head/dense", x, 1000);
  b.SoftmaxOutput("Softmax", x);
  return b.Finish("EfficientNet-Lite0 224");
}

// A small network whose middle carries a large offset: `shift` adds 3000 to
// every value and `unshift` takes it away again. The answer survives fp32,
// but fp16 storage keeps 11 bits, so `shift`'s output holds the signal only
// to +-1 and `unshift` shows it: an fp16-hostile layer planted for `mgd
// check` to find.
Graph Fp16Trap(Builder& b) {
  constexpr float kOffset = 3000.0f;
  int x = b.Input("input", {1, 32, 32, 8});
  x = b.Conv("conv1", x, 16, 3, 1, Activation::kRelu6);
  x = b.Depthwise("depthwise", x, 1, Activation::kRelu6);
  x = b.Conv("conv2", x, 16, 1, 1, Activation::kNone);
  x = b.AddOffset("shift", x, kOffset);
  x = b.AddOffset("unshift", x, -kOffset);
  x = b.Conv("conv3", x, 8, 3, 1, Activation::kRelu6);
  x = b.Conv("head", x, 4, 1, 1, Activation::kNone);
  b.Output(x);
  return b.Finish("fp16 trap: a planted fp16-hostile layer (shift)");
}

// A head whose sum is fp16-arithmetic-hostile, as the 1x1 heads that reduce
// hundreds of channels to a few logits are on GPUs that sum in fp16:
// `spread` copies 16 channels 16 times, and `head` sums copies 0-63 with
// weight +16 and copies 64-127 with -16, partial sums of hundreds that
// cancel exactly, plus a small genuine term on copies 128-255. Every weight is exact in fp16, so fp16 storage costs the answer
// only its rounding; fp16 arithmetic rounds the partial sums to 1/4 or 1/2
// and the answer, of order 1, is lost: computing `head` in fp32 (the
// accuracy guard) repairs it.
Graph Fp16SumTrap(Builder& b) {
  constexpr int kCopies = 16, kChannels = 16, kSpread = kCopies * kChannels, kOutputs = 4;
  constexpr float kLarge = 16.0f;
  int x = b.Input("input", {1, 16, 16, 8});
  x = b.Conv("conv1", x, kChannels, 3, 1, Activation::kRelu6);
  std::vector<std::vector<float>> copy(kSpread, std::vector<float>(kChannels, 0.0f));
  for (int j = 0; j < kSpread; ++j) copy[static_cast<size_t>(j)][static_cast<size_t>(j % kChannels)] = 1.0f;
  x = b.PointwiseConv("spread", x, copy, std::vector<float>(kSpread, 0.0f));
  std::vector<std::vector<float>> head(kOutputs, std::vector<float>(kSpread, 0.0f));
  std::vector<float> biases(kOutputs);
  for (int o = 0; o < kOutputs; ++o) {
    auto& row = head[static_cast<size_t>(o)];
    for (int j = 0; j < kSpread / 2; ++j) row[static_cast<size_t>(j)] = j < kSpread / 4 ? kLarge : -kLarge;
    for (int j = kSpread / 2; j < kSpread; ++j) row[static_cast<size_t>(j)] = 0.05f * b.Uniform();
    biases[static_cast<size_t>(o)] = 0.5f * b.Uniform();
  }
  x = b.PointwiseConv("head", x, head, biases);
  b.Output(x);
  return b.Finish("fp16 sum trap: a head whose partial sums cancel (head)");
}

}  // namespace

absl::StatusOr<Graph> BuildEfficientNetLite0(uint64_t seed) {
  Builder builder(seed, false);
  Graph graph = EfficientNetLite0(builder);
  graph.description += fmt::format(" (mgd modelgen, seed {})", seed);
  return graph;
}

absl::StatusOr<Graph> BuildFp16SumTrap(uint64_t seed) {
  Builder builder(seed, false);
  Graph graph = Fp16SumTrap(builder);
  graph.description += fmt::format(" (mgd modelgen, seed {})", seed);
  return graph;
}

absl::StatusOr<Graph> BuildFp16Trap(uint64_t seed) {
  Builder builder(seed, false);
  Graph graph = Fp16Trap(builder);
  graph.description += fmt::format(" (mgd modelgen, seed {})", seed);
  return graph;
}

absl::StatusOr<Graph> BuildMobileNet(int version, uint64_t seed, bool fp16_weights) {
  if (version != 1 && version != 2) {
    return absl::InvalidArgumentError(fmt::format("MobileNet version {} is not 1 or 2", version));
  }
  Builder builder(seed, fp16_weights);
  Graph graph = version == 1 ? MobileNetV1(builder) : MobileNetV2(builder);
  graph.description += fmt::format(" (mgd modelgen, seed {}, {} weights)", seed, fp16_weights ? "fp16" : "fp32");
  return graph;
}

absl::StatusOr<Graph> QuantizedMobileNet(const Graph& graph, uint64_t seed) {
  auto calibration = quantizer::Calibrate(graph, quantizer::RandomSamples(graph, 8, seed, -1.0f, 1.0f));
  if (!calibration.ok()) return calibration.status();
  absl::StatusOr<Graph> quantized = quantizer::QuantizeGraph(*calibration, {});
  if (quantized.ok()) quantized->description += ", int8 (random calibration)";
  return quantized;
}

}  // namespace mgd
