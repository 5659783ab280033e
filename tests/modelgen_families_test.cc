// mgd modelgen's families of issue 24 (BERT-Tiny, ViT-Tiny, MobileViT-XXS,
// EfficientNet-Lite0, a YOLOv8n-style detector, an LSTM keyword spotter):
// their layer structure, and their outputs against LiteRT's on the same
// model (tests/data/modelgen/NAME_seed1: LiteRT's generated input, token ids
// for BERT-Tiny, and its output, made with ../shared/tools/litert-reference)
// on the CPU and, fully delegated, on both GPU APIs in both precisions,
// within docs/design.md section 5's whole-model bounds. LiteRT.js lacks
// variable tensors: the LSTM's reference is LiteRT's run of its unrolled twin.
#include <fstream>
#include <iterator>

#include "model/reader.h"
#include "model/writer.h"
#include "tests/delegate/delegate_fixture.h"
#include "tools/mgd/modelgen.h"

namespace mgd {
namespace {

using testing::CountOps;

TEST(ModelgenFamiliesTest, BertTinyHasThePublishedLayers) {
  auto graph = BuildBertTiny(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Tensor& ids = graph->tensors[static_cast<size_t>(graph->inputs.at(0))];
  EXPECT_EQ(ids.type, DataType::kInt32);
  EXPECT_EQ(ids.shape, (Shape{1, 128}));
  EXPECT_EQ(CountOps(*graph, OpKind::kGather), 1);
  // Per layer: query, key, value, output, intermediate, output.
  EXPECT_EQ(CountOps(*graph, OpKind::kFullyConnected), 12);
  EXPECT_EQ(CountOps(*graph, OpKind::kBatchMatmul), 4);
  EXPECT_EQ(CountOps(*graph, OpKind::kSoftmax), 2);
  EXPECT_EQ(CountOps(*graph, OpKind::kGelu), 2);
  EXPECT_EQ(CountOps(*graph, OpKind::kRsqrt), 5);  // layer norms: embeddings, 2 per layer
  const Tensor& out = graph->tensors[static_cast<size_t>(graph->outputs.at(0))];
  EXPECT_EQ(out.shape, (Shape{1, 128, 128}));
}

TEST(ModelgenFamiliesTest, EfficientNetLite0HasThePublishedLayers) {
  auto graph = BuildEfficientNetLite0(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // The stem, 16 blocks (15 expand, 16 project), the head.
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 33);
  EXPECT_EQ(CountOps(*graph, OpKind::kDepthwiseConv2d), 16);
  EXPECT_EQ(CountOps(*graph, OpKind::kAdd), 9);  // the blocks that keep their shape
  EXPECT_EQ(CountOps(*graph, OpKind::kMean), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kFullyConnected), 1);
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 1000}));
}

TEST(ModelgenFamiliesTest, YoloNanoHasThePublishedLayers) {
  auto graph = BuildYoloNano(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // 8 C2f blocks of 1 or 2 bottlenecks, the SPPF's three pools, two
  // upsamplings, each Conv's SiLU as LOGISTIC and MUL, the head's decoding.
  EXPECT_EQ(CountOps(*graph, OpKind::kSplit), 8 + 1);  // and the box sides
  EXPECT_EQ(CountOps(*graph, OpKind::kSplitV), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kMaxPool2d), 3);
  EXPECT_EQ(CountOps(*graph, OpKind::kResizeNearestNeighbor), 2);
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 63);
  EXPECT_EQ(CountOps(*graph, OpKind::kLogistic), 63 - 6 + 1);  // all but the head's 1x1 convs; the class scores
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 84, 2100}));
}

TEST(ModelgenFamiliesTest, MobileVitXxsHasThePublishedLayers) {
  auto graph = BuildMobileVitXxs(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(*graph, OpKind::kDepthwiseConv2d), 7);  // the inverted residuals
  EXPECT_EQ(CountOps(*graph, OpKind::kBatchMatmul), 2 * (2 + 4 + 3));  // the transformer layers
  EXPECT_EQ(CountOps(*graph, OpKind::kRsqrt), 2 * (2 + 4 + 3) + 3);  // two norms per layer, one per block
  EXPECT_EQ(CountOps(*graph, OpKind::kTranspose), 3 * 4 + 9 * 4);  // unfold and fold; heads
  EXPECT_EQ(CountOps(*graph, OpKind::kConcatenation), 3);
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 1000}));
}

TEST(ModelgenFamiliesTest, VitTinyHasThePublishedLayers) {
  auto graph = BuildVitTiny(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 1);  // the 16x16 patches
  EXPECT_EQ(CountOps(*graph, OpKind::kBatchMatmul), 24);
  EXPECT_EQ(CountOps(*graph, OpKind::kGelu), 12);
  EXPECT_EQ(CountOps(*graph, OpKind::kRsqrt), 25);  // two norms per layer and the encoder's
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 1000}));
}

TEST(ModelgenFamiliesTest, LstmKwsHasThePublishedLayers) {
  auto graph = BuildLstmKws(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(*graph, OpKind::kUnidirectionalSequenceLstm), 2);
  EXPECT_EQ(CountOps(*graph, OpKind::kStridedSlice), 1);  // the last frame
  int variables = 0;
  for (const Tensor& t : graph->tensors) variables += t.is_variable;
  EXPECT_EQ(variables, 4);  // each layer's output and cell state
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->inputs.at(0))].shape, (Shape{1, 49, 10}));
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 12}));
  // The unrolled twin: one step of plain ops per frame, no state.
  auto unrolled = BuildLstmKwsUnrolled(1);
  ASSERT_TRUE(unrolled.ok()) << unrolled.status();
  EXPECT_EQ(CountOps(*unrolled, OpKind::kUnidirectionalSequenceLstm), 0);
  EXPECT_EQ(CountOps(*unrolled, OpKind::kFullyConnected), 2 * 49 * 8 + 1);  // per frame two per gate
  for (const Tensor& t : unrolled->tensors) EXPECT_FALSE(t.is_variable) << t.name;
}

struct Model {
  std::string name;
  absl::StatusOr<Graph> (*build)(uint64_t seed);
  std::string input;  // LiteRT's input file
};

const Model kBertTiny{"bert_tiny", BuildBertTiny, "input_0.int32"};
const Model kVitTiny{"vit_tiny", BuildVitTiny, "input_0.f32"};
const Model kEfficientNetLite0{"efficientnet_lite0", BuildEfficientNetLite0, "input_0.f32"};
const Model kYoloNano{"yolo_nano", BuildYoloNano, "input_0.f32"};
const Model kMobileVitXxs{"mobilevit_xxs", BuildMobileVitXxs, "input_0.f32"};
const Model kLstmKws{"lstm_kws", BuildLstmKws, "input_0.f32"};

struct Reference {
  Graph graph;
  std::vector<uint8_t> input;
  std::vector<float> expected;
};

// Through the writer and the reader, as `mgd modelgen` then `mgd run` would.
Reference Load(const Model& m) {
  Reference r;
  auto built = m.build(1);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return r;
  auto bytes = WriteModel(*built);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  auto graph = ReadModel(bytes->data(), bytes->size(), m.name);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return r;
  r.graph = std::move(*graph);
  const std::string dir = testing::DataPath("modelgen/" + m.name + "_seed1/");
  std::ifstream f(dir + m.input, std::ios::binary);
  r.input.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  r.expected = testing::ReadF32(dir + "output_0.f32");
  return r;
}

void ExpectWithinModelBounds(const std::vector<float>& actual, const std::vector<float>& expected, bool fp16) {
  ASSERT_EQ(actual.size(), expected.size());
  const double rms = testing::RelativeRms(actual, expected);
  EXPECT_LE(rms, fp16 ? 1e-2 : 1e-5);
  if (!fp16) {
    const long bad = testing::FirstOutOfBounds(actual, expected, 1e-3, 1e-3);
    EXPECT_EQ(bad, -1) << "element " << bad;
  }
}

void ExpectCpuMatchesLiteRt(const Model& m) {
  const Reference r = Load(m);
  const auto outputs = testing::RunWithBytes(r.graph, {r.input}, nullptr);
  ASSERT_EQ(outputs.size(), 1u);
  ExpectWithinModelBounds(outputs[0], r.expected, false);
}

TEST(ModelgenFamiliesTest, BertTinyOnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kBertTiny); }
TEST(ModelgenFamiliesTest, VitTinyOnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kVitTiny); }
TEST(ModelgenFamiliesTest, EfficientNetLite0OnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kEfficientNetLite0); }
TEST(ModelgenFamiliesTest, YoloNanoOnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kYoloNano); }
TEST(ModelgenFamiliesTest, MobileVitXxsOnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kMobileVitXxs); }
TEST(ModelgenFamiliesTest, LstmKwsOnTheCpuMatchesLiteRt) { ExpectCpuMatchesLiteRt(kLstmKws); }

class ModelgenFamiliesGpuTest : public testing::DelegateTest {
 protected:
  // Every node on the GPU (RunWithBytes checks), token ids read as given.
  void ExpectFullyDelegatedMatchesLiteRt(const Model& m) {
    const Reference r = Load(m);
    const auto outputs = testing::RunWithBytes(r.graph, {r.input}, delegate_.get());
    ASSERT_EQ(outputs.size(), 1u);
    ExpectWithinModelBounds(outputs[0], r.expected, GetParam().fp16);
  }
};

TEST_P(ModelgenFamiliesGpuTest, BertTiny) { ExpectFullyDelegatedMatchesLiteRt(kBertTiny); }
TEST_P(ModelgenFamiliesGpuTest, VitTiny) { ExpectFullyDelegatedMatchesLiteRt(kVitTiny); }
TEST_P(ModelgenFamiliesGpuTest, EfficientNetLite0) { ExpectFullyDelegatedMatchesLiteRt(kEfficientNetLite0); }
TEST_P(ModelgenFamiliesGpuTest, YoloNano) { ExpectFullyDelegatedMatchesLiteRt(kYoloNano); }
TEST_P(ModelgenFamiliesGpuTest, MobileVitXxs) { ExpectFullyDelegatedMatchesLiteRt(kMobileVitXxs); }
TEST_P(ModelgenFamiliesGpuTest, LstmKws) { ExpectFullyDelegatedMatchesLiteRt(kLstmKws); }

INSTANTIATE_TEST_SUITE_P(Backends, ModelgenFamiliesGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
