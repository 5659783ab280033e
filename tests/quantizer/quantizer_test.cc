// The post-training quantizer (quantizer/): calibration ranges, the int8
// parameters it gives activations, filters and biases, which ops go int8
// and how the rest stay float, and that the quantized graph computes what
// the float one does within what 8 bits allow.
#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/reshape/reshape.h"
#include "ops/softmax/softmax.h"
#include "quantizer/calibrate.h"
#include "quantizer/quantize_graph.h"
#include "tests/interpreter/kernels/kernel_test.h"
#include "tests/test_util.h"

namespace mgd::quantizer {
namespace {

std::vector<float> Values(size_t n, float scale, uint32_t seed) {
  std::vector<float> v = Random(n, seed);
  for (float& x : v) x *= scale;
  return v;
}

// A small classifier as a converter sees one: CONV_2D 3x3 + RELU6,
// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX; and
// a second output through GELU (no int8 kernel in TFLite) and a
// CONCATENATION of differently ranged inputs.
Graph Classifier() {
  GraphBuilder b;
  const int x = b.Input({1, 8, 8, 3}, "image");
  const int conv = b.Tensor({1, 8, 8, 6}, DataType::kFloat32, "conv");
  ops::Conv2dAttributes ca;
  ca.activation = Activation::kRelu6;
  b.Op(OpKind::kConv2d, ca,
       {x, b.Constant({6, 3, 3, 3}, Values(162, 0.5f, 1), "conv/filter"), b.Constant({6}, Values(6, 0.2f, 2), "conv/bias")},
       {conv});
  const int dw = b.Tensor({1, 8, 8, 6}, DataType::kFloat32, "dw");
  b.Op(OpKind::kDepthwiseConv2d, ops::DepthwiseConv2dAttributes{},
       {conv, b.Constant({1, 3, 3, 6}, Values(54, 0.4f, 3), "dw/filter"), b.Constant({6}, Values(6, 0.1f, 4), "dw/bias")},
       {dw});
  const int pooled = b.Tensor({1, 1, 1, 6}, DataType::kFloat32, "pooled");
  b.Op(OpKind::kAveragePool2d, ops::PoolAttributes{Padding::kValid, 8, 8, 8, 8, Activation::kNone}, {dw}, {pooled});
  const int flat = b.Tensor({1, 6}, DataType::kFloat32, "flat");
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {pooled, b.ConstantInt({2}, {1, 6})}, {flat});
  const int logits = b.Tensor({1, 5}, DataType::kFloat32, "logits");
  b.Op(OpKind::kFullyConnected, ops::FullyConnectedAttributes{},
       {flat, b.Constant({5, 6}, Values(30, 1.0f, 5), "fc/filter"), b.Constant({5}, Values(5, 0.3f, 6), "fc/bias")},
       {logits});
  const int probabilities = b.Tensor({1, 5}, DataType::kFloat32, "probabilities");
  b.Op(OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {logits}, {probabilities});
  const int gelu = b.Tensor({1, 8, 8, 6}, DataType::kFloat32, "gelu");
  b.Op(OpKind::kGelu, ops::GeluAttributes{false}, {dw}, {gelu});
  const int joined = b.Tensor({1, 8, 8, 12}, DataType::kFloat32, "joined");
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{3, Activation::kNone}, {gelu, conv}, {joined});
  b.Output(probabilities);
  b.Output(joined);
  return b.Build();
}

Calibration Calibrated(const Graph& g) {
  auto c = Calibrate(g, RandomSamples(g, 4, 7, -1.0f, 1.0f));
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

const Tensor& Named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return g.tensors.at(0);
}

std::vector<std::vector<float>> Outputs(const Graph& g, const std::vector<float>& input) {
  auto interpreter = Interpreter::Create(g, InterpreterOptions{});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok()) return {};
  std::copy(input.begin(), input.end(), (*interpreter)->input(0).as<float>());
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  std::vector<std::vector<float>> outputs;
  for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
    const TensorRef& o = (*interpreter)->output(k);
    outputs.emplace_back(o.as<float>(), o.as<float>() + o.elements());
  }
  return outputs;
}

TEST(QuantizerTest, ActivationParametersHoldZeroAndTheRange) {
  // [-1, 1]: 2/255 per step, -1 at -128: zero point -128 + 127.5, rounded
  // half away from zero.
  Quantization q = ActivationParams({-1.0f, 1.0f});
  EXPECT_FLOAT_EQ(q.scale[0], 2.0f / 255);
  EXPECT_EQ(q.zero_point[0], -1);
  // [2, 3] is widened to [0, 3]: 0 must be exact (padding, RELU).
  q = ActivationParams({2.0f, 3.0f});
  EXPECT_FLOAT_EQ(q.scale[0], 3.0f / 255);
  EXPECT_EQ(q.zero_point[0], -128);
  q = ActivationParams({-6.0f, -1.0f});
  EXPECT_EQ(q.zero_point[0], 127);
  // Never seen, or always 0: a positive scale all the same.
  EXPECT_GT(ActivationParams({}).scale[0], 0.0f);
}

TEST(QuantizerTest, CalibrationRecordsEachTensorsRange) {
  const Graph g = Classifier();
  const Calibration c = Calibrated(g);
  for (const char* name : {"image", "conv", "dw", "pooled", "logits", "probabilities", "gelu", "joined"}) {
    SCOPED_TRACE(name);
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      if (g.tensors[t].name == name) {
        EXPECT_TRUE(c.ranges[t].seen());
      }
    }
  }
  // RELU6's output lies in [0, 6]; the random image in [-1, 1).
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].name == "conv") {
      EXPECT_GE(c.ranges[t].min, 0.0f);
      EXPECT_LE(c.ranges[t].max, 6.0f);
    }
    if (g.tensors[t].name == "image") {
      EXPECT_GE(c.ranges[t].min, -1.0f);
      EXPECT_LT(c.ranges[t].max, 1.0f);
      EXPECT_LT(c.ranges[t].min, -0.9f);
    }
  }
}

TEST(QuantizerTest, APercentileCutsOutliers) {
  GraphBuilder b;
  const int x = b.Input({1000});
  const int y = b.Tensor({1000}, DataType::kFloat32, "y");
  b.Op(OpKind::kRelu, {}, {x}, {y});
  b.Output(y);
  const Graph g = b.Build();
  // 999 values in [0, 1) and one at 100.
  std::vector<float> v = Random(1000, 3, 0.0f, 1.0f);
  v[500] = 100.0f;
  auto whole = Calibrate(g, {{v}});
  auto cut = Calibrate(g, {{v}}, {.percentile = 0.99});
  ASSERT_TRUE(whole.ok() && cut.ok());
  EXPECT_FLOAT_EQ(whole->ranges[static_cast<size_t>(y)].max, 100.0f);
  EXPECT_LT(cut->ranges[static_cast<size_t>(y)].max, 1.1f);
  EXPECT_GT(cut->ranges[static_cast<size_t>(y)].max, 0.9f);
}

TEST(QuantizerTest, FiltersPerChannelBiasesOfInputTimesFilterScale) {
  const Calibration c = Calibrated(Classifier());
  QuantizeReport report;
  auto q = QuantizeGraph(c, {}, &report);
  ASSERT_TRUE(q.ok()) << q.status();
  const Tensor& filter = Named(*q, "conv/filter");
  EXPECT_EQ(filter.type, DataType::kInt8);
  ASSERT_TRUE(filter.quantization.has_value());
  EXPECT_EQ(filter.quantization->scale.size(), 6u);  // per output channel
  EXPECT_EQ(filter.quantization->quantized_dimension, 0);
  for (int64_t z : filter.quantization->zero_point) EXPECT_EQ(z, 0);
  // Each channel's largest weight is +-127.
  const auto* w = reinterpret_cast<const int8_t*>(filter.data.data());
  for (int o = 0; o < 6; ++o) {
    int largest = 0;
    for (int i = 0; i < 27; ++i) largest = std::max(largest, std::abs(int{w[o * 27 + i]}));
    EXPECT_EQ(largest, 127) << "channel " << o;
  }
  const Tensor& dw_filter = Named(*q, "dw/filter");
  EXPECT_EQ(dw_filter.quantization->quantized_dimension, 3);
  EXPECT_EQ(dw_filter.quantization->scale.size(), 6u);
  const Tensor& fc_filter = Named(*q, "fc/filter");
  EXPECT_EQ(fc_filter.quantization->scale.size(), 1u);  // per tensor, as the converter
  const Tensor& bias = Named(*q, "conv/bias");
  EXPECT_EQ(bias.type, DataType::kInt32);
  const float input_scale = Named(*q, "image_int8").quantization->scale[0];
  for (size_t o = 0; o < 6; ++o) {
    EXPECT_FLOAT_EQ(bias.quantization->scale[o], input_scale * filter.quantization->scale[o]);
  }
  // The pool and the reshape keep their input's parameters; SOFTMAX has
  // TFLite's fixed ones.
  EXPECT_EQ(Named(*q, "pooled").quantization->scale, Named(*q, "dw").quantization->scale);
  EXPECT_EQ(Named(*q, "flat").quantization->zero_point, Named(*q, "dw").quantization->zero_point);
  EXPECT_FLOAT_EQ(Named(*q, "probabilities_int8").quantization->scale[0], 1.0f / 256);
  EXPECT_EQ(Named(*q, "probabilities_int8").quantization->zero_point[0], -128);
  // GELU stays float; everything else is int8: 6 + the concatenation.
  EXPECT_EQ(report.int8_nodes, 7);
  EXPECT_EQ(report.float_nodes, 1);
  EXPECT_EQ(testing::CountOps(*q, OpKind::kGelu), 1);
  // Where a tensor is both, the int8 one keeps the name.
  EXPECT_EQ(Named(*q, "gelu_float").type, DataType::kFloat32);
  EXPECT_EQ(Named(*q, "gelu").type, DataType::kInt8);
  EXPECT_EQ(Named(*q, "dw_float").type, DataType::kFloat32);  // the DEQUANTIZE before GELU
  // The float input quantized once; the outputs dequantized, keeping their
  // names; GELU's input dequantized and its output quantized; the
  // concatenation's inputs requantized to its own parameters (TFLite's
  // int8 kernel takes no others).
  EXPECT_EQ(Named(*q, "image").type, DataType::kFloat32);
  EXPECT_EQ(Named(*q, "probabilities").type, DataType::kFloat32);
  EXPECT_EQ(Named(*q, "joined").type, DataType::kFloat32);
  EXPECT_EQ(Named(*q, "gelu_requantized").quantization->scale, Named(*q, "joined_int8").quantization->scale);
  EXPECT_EQ(Named(*q, "conv_requantized").quantization->scale, Named(*q, "joined_int8").quantization->scale);
  EXPECT_EQ(testing::CountOps(*q, OpKind::kQuantize), 4);
  EXPECT_EQ(testing::CountOps(*q, OpKind::kDequantize), 3);
  EXPECT_EQ(report.conversions, 7);
}

TEST(QuantizerTest, TheInt8GraphComputesWhatTheFloatOneDoes) {
  const Graph g = Classifier();
  const Calibration c = Calibrated(g);
  auto q = QuantizeGraph(c, {});
  ASSERT_TRUE(q.ok()) << q.status();
  const std::vector<float> input = Random(192, 99);  // not a calibration sample
  const auto expected = Outputs(g, input), actual = Outputs(*q, input);
  ASSERT_EQ(actual.size(), 2u);
  // 8 bits through five layers: a few percent.
  EXPECT_LE(testing::RelativeRms(actual[0], expected[0]), 0.05);
  EXPECT_LE(testing::RelativeRms(actual[1], expected[1]), 0.05);
  // And not the trivial answer.
  EXPECT_GT(testing::RelativeRms(actual[0], expected[0]), 0.0);
}

TEST(QuantizerTest, Int8InputsAndOutputsKeepTheirNames) {
  auto q = QuantizeGraph(Calibrated(Classifier()), {.int8_io = true});
  ASSERT_TRUE(q.ok()) << q.status();
  const Tensor& in = q->tensors[static_cast<size_t>(q->inputs.at(0))];
  EXPECT_EQ(in.name, "image");
  EXPECT_EQ(in.type, DataType::kInt8);
  const Tensor& out = q->tensors[static_cast<size_t>(q->outputs.at(0))];
  EXPECT_EQ(out.name, "probabilities");
  EXPECT_EQ(out.type, DataType::kInt8);
  EXPECT_EQ(testing::CountOps(*q, OpKind::kQuantize), 3);  // GELU's output, the requantizations
}

TEST(QuantizerTest, DynamicRangeQuantizesTheFiltersOnly) {
  const Graph g = Classifier();
  auto q = QuantizeGraph(Calibrated(g), {.dynamic_range = true});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(testing::CountOps(*q, OpKind::kDequantize), 3);
  EXPECT_EQ(testing::CountOps(*q, OpKind::kQuantize), 0);
  EXPECT_EQ(Named(*q, "conv/filter_int8").type, DataType::kInt8);
  EXPECT_EQ(Named(*q, "conv").type, DataType::kFloat32);
  const std::vector<float> input = Random(192, 99);
  const auto expected = Outputs(g, input), actual = Outputs(*q, input);
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_LE(testing::RelativeRms(actual[0], expected[0]), 0.02);
  EXPECT_LE(testing::RelativeRms(actual[1], expected[1]), 0.02);
}

TEST(QuantizerTest, PerTensorFilters) {
  auto q = QuantizeGraph(Calibrated(Classifier()), {.per_tensor = true});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(Named(*q, "conv/filter").quantization->scale.size(), 1u);
  EXPECT_EQ(Named(*q, "conv/bias").quantization->scale.size(), 1u);
}

TEST(QuantizerTest, SamplesThatDoNotFitAreRefusedByName) {
  const Graph g = Classifier();
  auto c = Calibrate(g, {{std::vector<float>(5)}});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("calibration sample 0: input 0 'image'"));
  EXPECT_FALSE(Calibrate(g, {}).ok());
  EXPECT_FALSE(Calibrate(g, RandomSamples(g, 1, 1, -1, 1), {.percentile = 0.0}).ok());
}

}  // namespace
}  // namespace mgd::quantizer
