// mgd modelgen's transformers: their layer structure, and their outputs
// against LiteRT's on the same model (tests/data/modelgen/NAME_seed1:
// LiteRT's generated input, token ids for BERT-Tiny, and its output, made
// with ../shared/tools/litert-reference) on the CPU and, fully delegated, on
// both GPU APIs in both precisions, within docs/design.md section 5's
// whole-model bounds.
#include <fstream>
#include <iterator>

#include "model/reader.h"
#include "model/writer.h"
#include "tests/delegate/delegate_fixture.h"
#include "tools/mgd/modelgen.h"

namespace mgd {
namespace {

int CountOps(const Graph& graph, OpKind op) {
  int count = 0;
  for (const Node& node : graph.nodes) count += node.op == op;
  return count;
}

TEST(ModelgenTransformerTest, BertTinyHasThePublishedLayers) {
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

TEST(ModelgenTransformerTest, VitTinyHasThePublishedLayers) {
  auto graph = BuildVitTiny(1);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2d), 1);  // the 16x16 patches
  EXPECT_EQ(CountOps(*graph, OpKind::kBatchMatmul), 24);
  EXPECT_EQ(CountOps(*graph, OpKind::kGelu), 12);
  EXPECT_EQ(CountOps(*graph, OpKind::kRsqrt), 25);  // two norms per layer and the encoder's
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs.at(0))].shape, (Shape{1, 1000}));
}

struct Model {
  std::string name;
  absl::StatusOr<Graph> (*build)(uint64_t seed);
  std::string input;  // LiteRT's input file
};

const std::vector<Model>& Models() {
  static const std::vector<Model> models = {{"bert_tiny", BuildBertTiny, "input_0.int32"},
                                            {"vit_tiny", BuildVitTiny, "input_0.f32"}};
  return models;
}

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

TEST(ModelgenTransformerTest, OnTheCpuMatchLiteRt) {
  for (const Model& m : Models()) {
    SCOPED_TRACE(m.name);
    const Reference r = Load(m);
    const auto outputs = testing::RunWithBytes(r.graph, {r.input}, nullptr);
    ASSERT_EQ(outputs.size(), 1u);
    ExpectWithinModelBounds(outputs[0], r.expected, false);
  }
}

using ModelgenTransformerGpuTest = testing::DelegateTest;

// Every node on the GPU (RunWithBytes checks), token ids read as given.
TEST_P(ModelgenTransformerGpuTest, FullyDelegatedMatchLiteRt) {
  for (const Model& m : Models()) {
    SCOPED_TRACE(m.name);
    const Reference r = Load(m);
    const auto outputs = testing::RunWithBytes(r.graph, {r.input}, delegate_.get());
    ASSERT_EQ(outputs.size(), 1u);
    ExpectWithinModelBounds(outputs[0], r.expected, GetParam().fp16);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ModelgenTransformerGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
