// mgd modelgen's MobileNets: the published layer structure, deterministic
// bytes per seed, and outputs that match LiteRT's on the same model within
// the fp32 whole-model bounds of docs/design.md section 5. The expected outputs in
// tests/data/modelgen were made with ../shared/tools/litert-reference on the
// models this code generates; the .tflite files are regenerated here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/writer.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"
#include "tools/mgd/modelgen.h"

namespace mgd {
namespace {

using testing::CountOps;

std::vector<uint8_t> ModelBytes(int version, uint64_t seed, bool fp16) {
  auto graph = BuildMobileNet(version, seed, fp16);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  auto bytes = WriteModel(*graph);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

TEST(ModelgenTest, MobileNetV1HasThePublishedLayers) {
  auto graph = BuildMobileNet(1, 1, false);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // conv 3x3 + 13 pointwise + logits; 13 depthwise.
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 15);
  EXPECT_EQ(CountOps(*graph, OpKind::kDepthwiseConv2d), 13);
  EXPECT_EQ(CountOps(*graph, OpKind::kAdd), 0);
  EXPECT_EQ(CountOps(*graph, OpKind::kAveragePool2d), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kReshape), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kSoftmax), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kDequantize), 0);
}

TEST(ModelgenTest, MobileNetV2HasThePublishedLayers) {
  auto graph = BuildMobileNet(2, 1, false);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // conv 3x3 + 16 expands (the first bottleneck has t = 1) + 17 projects +
  // conv 1280 + logits; 17 depthwise; residuals in the n - 1 repeats of each
  // group: 0 + 1 + 2 + 3 + 2 + 2 + 0.
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 36);
  EXPECT_EQ(CountOps(*graph, OpKind::kDepthwiseConv2d), 17);
  EXPECT_EQ(CountOps(*graph, OpKind::kAdd), 10);
  EXPECT_EQ(CountOps(*graph, OpKind::kAveragePool2d), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kSoftmax), 1);
}

TEST(ModelgenTest, InputAndOutputShapes) {
  for (int version : {1, 2}) {
    auto graph = BuildMobileNet(version, 1, false);
    ASSERT_TRUE(graph.ok()) << graph.status();
    ASSERT_EQ(graph->inputs.size(), 1u);
    ASSERT_EQ(graph->outputs.size(), 1u);
    EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->inputs[0])].shape, (Shape{1, 224, 224, 3}));
    EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs[0])].shape, (Shape{1, 1001}));
  }
}

TEST(ModelgenTest, Fp16WeightsAreFloat16ConstantsBehindDequantize) {
  auto graph = BuildMobileNet(2, 1, true);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // One DEQUANTIZE per weight and per bias of every conv.
  const int convs = CountOps(*graph, OpKind::kConv2d) + CountOps(*graph, OpKind::kDepthwiseConv2d);
  EXPECT_EQ(CountOps(*graph, OpKind::kDequantize), 2 * convs);
  for (const Node& node : graph->nodes) {
    if (node.op != OpKind::kDequantize) continue;
    const Tensor& in = graph->tensors[static_cast<size_t>(node.inputs[0])];
    const Tensor& out = graph->tensors[static_cast<size_t>(node.outputs[0])];
    EXPECT_TRUE(in.is_constant) << in.name;
    EXPECT_EQ(in.type, DataType::kFloat16) << in.name;
    EXPECT_EQ(out.type, DataType::kFloat32) << out.name;
    EXPECT_FALSE(out.is_constant) << out.name;
  }
  // No float32 weights left, and no metadata.
  for (const Tensor& t : graph->tensors) EXPECT_FALSE(t.is_constant && t.type == DataType::kFloat32) << t.name;
  EXPECT_TRUE(graph->metadata.empty());
}

TEST(ModelgenTest, SameSeedGivesIdenticalBytes) {
  for (int version : {1, 2}) {
    for (bool fp16 : {false, true}) {
      const std::vector<uint8_t> a = ModelBytes(version, 7, fp16);
      ASSERT_FALSE(a.empty());
      EXPECT_TRUE(a == ModelBytes(version, 7, fp16)) << "v" << version << (fp16 ? " fp16" : "");
    }
  }
}

TEST(ModelgenTest, DifferentSeedsGiveDifferentWeights) {
  for (int version : {1, 2}) {
    const std::vector<uint8_t> a = ModelBytes(version, 1, false);
    const std::vector<uint8_t> b = ModelBytes(version, 2, false);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a.size(), b.size());  // same structure
    EXPECT_FALSE(a == b);
  }
}

TEST(ModelgenTest, UnknownVersionIsAnError) {
  EXPECT_FALSE(BuildMobileNet(3, 1, false).ok());
}

struct Case {
  int version;
  bool fp16;
  std::string data;  // folder under tests/data/modelgen
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.data; }

class ModelgenAccuracyTest : public ::testing::TestWithParam<Case> {};

// Through the writer and the reader (as `mgd modelgen` then `mgd run` would),
// then on the CPU reference kernels against LiteRT's output.
TEST_P(ModelgenAccuracyTest, MatchesLiteRtWithinFp32Bounds) {
  const Case& c = GetParam();
  auto built = BuildMobileNet(c.version, 1, c.fp16);
  ASSERT_TRUE(built.ok()) << built.status();
  auto bytes = WriteModel(*built);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto graph = ReadModel(bytes->data(), bytes->size(), c.data);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto interpreter = Interpreter::Create(std::move(*graph), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();

  const std::string dir = testing::DataPath("modelgen/" + c.data + "/");
  const std::vector<float> input = testing::ReadF32(dir + "input_0.f32");
  TensorRef& in = (*interpreter)->input(0);
  ASSERT_EQ(input.size() * sizeof(float), in.bytes);
  std::memcpy(in.data, input.data(), in.bytes);
  ASSERT_TRUE((*interpreter)->Invoke().ok());

  const std::vector<float> expected = testing::ReadF32(dir + "output_0.f32");
  const TensorRef& out = (*interpreter)->output(0);
  ASSERT_EQ(static_cast<size_t>(out.elements()), expected.size());
  const std::vector<float> actual(out.as<float>(), out.as<float>() + out.elements());
  EXPECT_LE(testing::RelativeRms(actual, expected), 1e-5);
  const long bad = testing::FirstOutOfBounds(actual, expected, 1e-3, 1e-3);
  EXPECT_EQ(bad, -1) << "element " << bad;
}

INSTANTIATE_TEST_SUITE_P(Models, ModelgenAccuracyTest,
                         ::testing::Values(Case{2, false, "mobilenet_v2_seed1"},
                                           Case{1, true, "mobilenet_v1_fp16_seed1"}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.data; });

}  // namespace
}  // namespace mgd
