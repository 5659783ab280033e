// The reader on real models, the writer round trip, and clear errors for
// malformed models.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>

#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/writer.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

using ::testing::HasSubstr;
using testing::GraphBuilder;

const char* const kModels[] = {"face_detection_short_range", "face_landmark", "hand_landmark_lite",
                               "palm_detection_lite", "pose_landmark_lite", "selfie_segmentation"};

std::string ModelPath(const std::string& name) { return testing::DataPath("models/" + name + ".tflite"); }

// Every error must be a single line naming what is wrong.
void ExpectOneLine(const absl::Status& s) { EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos) << s; }

TEST(ReaderTest, ReadsEveryTestModel) {
  for (const char* name : kModels) {
    auto graph = ReadModelFile(ModelPath(name));
    ASSERT_TRUE(graph.ok()) << graph.status();
    EXPECT_EQ(graph->inputs.size(), 1u) << name;
    EXPECT_GT(graph->nodes.size(), 100u) << name;
    EXPECT_FALSE(graph->outputs.empty());
  }
}

TEST(ReaderTest, ReadsFaceDetectionDetails) {
  auto graph = ReadModelFile(ModelPath("face_detection_short_range"));
  ASSERT_TRUE(graph.ok());
  const Tensor& input = graph->tensors[static_cast<size_t>(graph->inputs[0])];
  EXPECT_EQ(input.name, "input");
  EXPECT_EQ(input.shape, (Shape{1, 128, 128, 3}));
  EXPECT_EQ(graph->tensors[static_cast<size_t>(graph->outputs[0])].name, "regressors");
  int dequantize = 0, conv = 0;
  for (const Node& n : graph->nodes) {
    dequantize += n.op == OpKind::kDequantize;
    if (n.op == OpKind::kConv2d) {
      ++conv;
      const auto* a = FindAttributes<ops::Conv2dAttributes>(n.attributes);
      ASSERT_NE(a, nullptr);
      EXPECT_GE(a->stride_w, 1);
    }
  }
  EXPECT_GT(dequantize, 0);  // fp16 weights behind DEQUANTIZE
  EXPECT_GT(conv, 0);
}

TEST(ReaderTest, ReadsCustomOpAndMetadata) {
  auto graph = ReadModelFile(ModelPath("selfie_segmentation"));
  ASSERT_TRUE(graph.ok());
  bool found = false;
  for (const Node& n : graph->nodes) {
    if (const auto* c = std::get_if<CustomAttributes>(&n.attributes)) {
      EXPECT_EQ(c->name, "Convolution2DTransposeBias");
      EXPECT_EQ(c->options, (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0}));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(WriterTest, RoundTripKeepsTheGraph) {
  for (const char* name : kModels) {
    auto graph = ReadModelFile(ModelPath(name));
    ASSERT_TRUE(graph.ok());
    auto bytes = WriteModel(*graph);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto again = ReadModel(bytes->data(), bytes->size(), "roundtrip");
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_EQ(again->tensors.size(), graph->tensors.size());
    ASSERT_EQ(again->nodes.size(), graph->nodes.size());
    for (size_t i = 0; i < graph->tensors.size(); ++i) {
      EXPECT_EQ(again->tensors[i].name, graph->tensors[i].name);
      EXPECT_EQ(again->tensors[i].shape, graph->tensors[i].shape);
      EXPECT_EQ(again->tensors[i].data, graph->tensors[i].data);
      EXPECT_EQ(again->tensors[i].sparsity.has_value(), graph->tensors[i].sparsity.has_value());
    }
    for (size_t i = 0; i < graph->nodes.size(); ++i) {
      EXPECT_EQ(again->nodes[i].op, graph->nodes[i].op);
      EXPECT_EQ(again->nodes[i].inputs, graph->nodes[i].inputs);
      EXPECT_EQ(again->nodes[i].attributes.index(), graph->nodes[i].attributes.index());
    }
    EXPECT_EQ(again->metadata, graph->metadata);
  }
}

// Files of several MiB are read in kReadChunkBytes chunks on all cores, each chunk
// handed to the callback once it is in memory; small files, in one piece.
TEST(ReadFileBytesTest, ReadsLargeFilesInChunksAndSmallOnesWhole) {
  const std::string path = ::testing::TempDir() + "/mgd_read_chunks.bin";
  for (size_t size : {size_t{0}, size_t{1000}, (size_t{9} << 20) + 123, size_t{6} << 20}) {
    SCOPED_TRACE(size);
    std::vector<uint8_t> written(size);
    std::mt19937 rng(static_cast<unsigned>(size));
    for (uint8_t& b : written) b = static_cast<uint8_t>(rng());
    ASSERT_TRUE(WriteFileAtomically(path, written.data(), written.size()).ok());
    std::mutex mutex;
    std::map<size_t, std::pair<const uint8_t*, size_t>> chunks;
    auto read = ReadFileBytes(path, UINT64_MAX, [&](size_t i, const uint8_t* data, size_t n) {
      std::lock_guard<std::mutex> lock(mutex);
      EXPECT_TRUE(chunks.emplace(i, std::make_pair(data, n)).second) << "chunk " << i << " twice";
    });
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(std::equal(read->begin(), read->end(), written.begin(), written.end()));
    const size_t expected_chunks = std::max<size_t>(1, (size + kReadChunkBytes - 1) / kReadChunkBytes);
    ASSERT_EQ(chunks.size(), expected_chunks);
    for (const auto& [i, chunk] : chunks) {
      EXPECT_EQ(chunk.first, read->data() + i * kReadChunkBytes) << "chunk " << i;
      EXPECT_EQ(chunk.second, std::min(kReadChunkBytes, size - i * kReadChunkBytes)) << "chunk " << i;
    }
  }
  EXPECT_THAT(std::string(ReadFileBytes(path, 10).status().message()), HasSubstr("more than the 10 expected"));
  EXPECT_THAT(std::string(ReadFileBytes(::testing::TempDir()).status().message()), HasSubstr("not a regular file"));
  EXPECT_THAT(std::string(ReadFileBytes(path + ".missing").status().message()), HasSubstr("cannot open"));
}

TEST(ReaderErrorTest, TruncatedFileIsMalformed) {
  auto bytes = ReadFileBytes(ModelPath("face_detection_short_range"));
  ASSERT_TRUE(bytes.ok());
  for (size_t size : {size_t{4}, size_t{64}, bytes->size() / 2, bytes->size() - 1}) {
    auto graph = ReadModel(bytes->data(), size, "face.tflite");
    ASSERT_FALSE(graph.ok()) << size;
    EXPECT_THAT(std::string(graph.status().message()), HasSubstr("face.tflite"));
    ExpectOneLine(graph.status());
  }
}

TEST(ReaderErrorTest, RandomBytesAreNotAModel) {
  std::mt19937 rng(7);
  std::vector<uint8_t> bytes(5000);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  auto graph = ReadModel(bytes.data(), bytes.size(), "noise.bin");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(std::string(graph.status().message()), HasSubstr("not a TFLite model"));
  // The same with a valid identifier still must not pass the verifier.
  std::memcpy(bytes.data() + 4, "TFL3", 4);
  graph = ReadModel(bytes.data(), bytes.size(), "noise.bin");
  ASSERT_FALSE(graph.ok());
  ExpectOneLine(graph.status());
}

TEST(ReaderErrorTest, MissingFileNamesThePath) {
  auto graph = ReadModelFile("/nonexistent/model.tflite");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(std::string(graph.status().message()), HasSubstr("/nonexistent/model.tflite"));
}

// Writes a hand-built graph and reads it back, returning the read error.
absl::Status ReadBack(const Graph& graph) {
  auto bytes = WriteModel(graph);
  if (!bytes.ok()) return bytes.status();
  auto read = ReadModel(bytes->data(), bytes->size(), "bad.tflite");
  return read.ok() ? absl::OkStatus() : read.status();
}

Graph TwoAdds() {
  GraphBuilder b;
  const int x = b.Input({1, 4});
  const int y = b.Tensor({1, 4});
  const int z = b.Tensor({1, 4});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, x}, {y});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {y, x}, {z});
  b.Output(z);
  return b.Build();
}

TEST(ReaderErrorTest, ValidGraphReadsBack) { EXPECT_TRUE(ReadBack(TwoAdds()).ok()); }

TEST(ReaderErrorTest, OutOfRangeTensorIndexNamesNodeAndField) {
  Graph g = TwoAdds();
  g.nodes[1].inputs[1] = 99;
  const absl::Status s = ReadBack(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("bad.tflite: node 1 (ADD): field inputs"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("99"));
}

TEST(ReaderErrorTest, WrongBufferSizeNamesTheTensor) {
  GraphBuilder b;
  const int x = b.Input({1, 4});
  const int c = b.Constant({1, 4}, {1, 2, 3}, "bias");  // 3 values for 4 elements
  const int y = b.Tensor({1, 4});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, c}, {y});
  b.Output(y);
  const absl::Status s = ReadBack(b.Build());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("tensor 1 'bias': field buffer: holds 12 bytes"));
}

TEST(ReaderErrorTest, CyclicGraphIsRejected) {
  GraphBuilder b;
  const int x = b.Input({1, 4});
  const int y = b.Tensor({1, 4});
  const int z = b.Tensor({1, 4});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, z}, {y});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {y, x}, {z});
  b.Output(z);
  const absl::Status s = ReadBack(b.Build());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("cycle"));
}

TEST(ReaderErrorTest, UnknownBuiltinOpIsNamed) {
  Graph g = TwoAdds();
  g.nodes[0].op = static_cast<OpKind>(27);  // SVDF
  g.nodes[0].attributes = std::monostate{};
  const absl::Status s = ReadBack(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 0: operator SVDF (27) is not supported"));
}

TEST(ReaderErrorTest, BadOptionValueNamesTheField) {
  GraphBuilder b;
  const int x = b.Input({1, 4, 4, 1});
  const int y = b.Tensor({1, 2, 2, 1});
  ops::PoolAttributes a;
  a.filter_w = a.filter_h = 2;
  a.stride_w = 0;
  b.Op(OpKind::kMaxPool2d, a, {x}, {y});
  b.Output(y);
  const absl::Status s = ReadBack(b.Build());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 0 (MAX_POOL_2D): field stride_w: 0 must be at least 1"));
}

TEST(ReaderErrorTest, WrongInputCountAndType) {
  Graph g = TwoAdds();
  g.nodes[0].inputs = {0};
  absl::Status s = ReadBack(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 0 (ADD): has 1 inputs, expected 2"));

  g = TwoAdds();
  g.tensors[0].type = DataType::kInt32;
  s = ReadBack(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("has type int32, expected float32"));
}

TEST(ReaderErrorTest, TwoProducersOfOneTensor) {
  Graph g = TwoAdds();
  g.nodes[1].outputs = {1};
  const absl::Status s = ReadBack(g);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("is already written by node 0"));
}

TEST(InterpreterErrorTest, InconsistentShapeNamesNodeAndTensor) {
  Graph g = TwoAdds();
  g.tensors[2].shape = {1, 5};
  auto interpreter = Interpreter::Create(g, InterpreterOptions{});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(std::string(interpreter.status().message()),
              HasSubstr("node 1 (ADD): output 0 (tensor 2 't2') has shape [1,5], but the inputs give [1,4]"));
}

TEST(InterpreterErrorTest, UnresolvedCustomOpIsAnErrorAtLoad) {
  GraphBuilder b;
  const int x = b.Input({1, 4});
  const int y = b.Tensor({1, 4});
  b.Op(OpKind::kCustom, CustomAttributes{"MyMissingOp", {}}, {x}, {y});
  b.Output(y);
  auto bytes = WriteModel(b.Build());
  ASSERT_TRUE(bytes.ok());
  auto graph = ReadModel(bytes->data(), bytes->size(), "custom.tflite");
  ASSERT_TRUE(graph.ok()) << graph.status();  // known to the reader, resolved by the interpreter
  auto interpreter = Interpreter::Create(std::move(*graph), InterpreterOptions{});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(std::string(interpreter.status().message()),
              HasSubstr("node 0 (custom MyMissingOp): custom op 'MyMissingOp' (version 1) is not registered"));
}

}  // namespace
}  // namespace mgd
