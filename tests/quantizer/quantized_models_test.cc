// Whole int8 models against LiteRT, and what a user sees of them: the
// MediaPipe face detector and selfie segmenter as `mgd quantize` made them
// from the test photos (tests/data/quantized/NAME_int8, with LiteRT's
// outputs on the photo; scripts/quantized-references) and `mgd modelgen
// --int8`'s MobileNets. The CPU gives LiteRT's outputs bit for bit; the
// pipelines on the int8 models find what they find on the float ones.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/reader.h"
#include "pipeline/pipeline.h"
#include "tests/delegate/delegate_fixture.h"
#include "tools/mgd/modelgen.h"

namespace mgd {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void ExpectLiteRtsOutputs(const Graph& graph, const std::string& input, const std::string& references) {
  const auto outputs = testing::RunWithBytes(graph, {ReadBytes(input)}, nullptr);
  ASSERT_EQ(outputs.size(), graph.outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::vector<float> expected = testing::ReadF32(references + "/output_" + std::to_string(k) + ".f32");
    ASSERT_EQ(outputs[k].size(), expected.size()) << "output " << k;
    size_t differ = 0;
    for (size_t i = 0; i < expected.size(); ++i) differ += outputs[k][i] != expected[i];
    EXPECT_EQ(differ, 0u) << "output " << k << ": values that are not LiteRT's";
  }
}

Graph Committed(const std::string& name) {
  auto g = ReadModelFile(testing::DataPath("quantized/" + name + "_int8/model.tflite"));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : Graph{};
}

TEST(QuantizedModelsTest, FaceDetectorOnTheCpuGivesLiteRtsOutputs) {
  ExpectLiteRtsOutputs(Committed("face_detection_short_range"),
                       testing::DataPath("reference/face_detection_short_range/image/input_0.f32"),
                       testing::DataPath("quantized/face_detection_short_range_int8"));
}

TEST(QuantizedModelsTest, SelfieSegmenterOnTheCpuGivesLiteRtsOutputs) {
  ExpectLiteRtsOutputs(Committed("selfie_segmentation"),
                       testing::DataPath("reference/selfie_segmentation/image/input_0.f32"),
                       testing::DataPath("quantized/selfie_segmentation_int8"));
}

TEST(QuantizedModelsTest, Int8MobileNetsOnTheCpuGiveLiteRtsOutputs) {
  for (int version : {1, 2}) {
    SCOPED_TRACE(version);
    auto float_graph = BuildMobileNet(version, 1, false);
    ASSERT_TRUE(float_graph.ok()) << float_graph.status();
    auto graph = QuantizedMobileNet(*float_graph, 1);
    ASSERT_TRUE(graph.ok()) << graph.status();
    int int8_convolutions = 0;
    for (const Node& n : graph->nodes) {
      const Tensor& out = graph->tensors[static_cast<size_t>(n.outputs[0])];
      int8_convolutions += (n.op == OpKind::kConv2d || n.op == OpKind::kDepthwiseConv2d) && out.type == DataType::kInt8;
    }
    EXPECT_EQ(int8_convolutions, testing::CountOps(*float_graph, OpKind::kConv2d) +
                                     testing::CountOps(*float_graph, OpKind::kDepthwiseConv2d));
    ExpectLiteRtsOutputs(*graph, testing::DataPath("modelgen/mobilenet_v2_seed1/input_0.f32"),
                         testing::DataPath("quantized/mobilenet_v" + std::to_string(version) + "_int8_seed1"));
  }
}

// The solution's models folder with `model` swapped for its int8 version.
std::string ModelsWithInt8(const std::string& model) {
  const fs::path dir = fs::temp_directory_path() / ("mgd_int8_" + model + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(testing::DataPath("models"))) {
    fs::copy_file(entry.path(), dir / entry.path().filename(), fs::copy_options::overwrite_existing);
  }
  fs::copy_file(testing::DataPath("quantized/" + model + "_int8/model.tflite"), dir / (model + ".tflite"),
                fs::copy_options::overwrite_existing);
  return dir.string();
}

pipeline::Result Process(const std::string& solution, const std::string& models, const std::string& image,
                         Delegate* delegate = nullptr) {
  std::vector<Delegate*> delegates;
  if (delegate != nullptr) delegates.push_back(delegate);
  auto p = pipeline::Pipeline::Create(solution, {models, delegates, nullptr});
  EXPECT_TRUE(p.ok()) << p.status();
  auto picture = pipeline::ReadImage(testing::DataPath("images/" + image));
  EXPECT_TRUE(picture.ok()) << picture.status();
  if (!p.ok() || !picture.ok()) return {};
  auto result = (*p)->Process(*picture);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : pipeline::Result{};
}

float BoxIou(const std::array<float, 4>& a, const std::array<float, 4>& b) {
  const float x0 = std::max(a[0], b[0]), y0 = std::max(a[1], b[1]);
  const float x1 = std::min(a[0] + a[2], b[0] + b[2]), y1 = std::min(a[1] + a[3], b[1] + b[3]);
  const float inter = std::max(0.0f, x1 - x0) * std::max(0.0f, y1 - y0);
  return inter / (a[2] * a[3] + b[2] * b[3] - inter);
}

// What the float face detector finds on the photo, on the CPU, against what
// the int8 one finds with `delegate` (none: the integer kernels).
void ExpectTheSameFace(Delegate* delegate) {
  const std::string models = ModelsWithInt8("face_detection_short_range");
  const pipeline::Result int8 = Process("face", models, "astronaut.png", delegate);
  const pipeline::Result real = Process("face", testing::DataPath("models"), "astronaut.png");
  fs::remove_all(models);
  ASSERT_EQ(real.detections.size(), 1u);
  ASSERT_EQ(int8.detections.size(), 1u);
  const pipeline::Detection &a = int8.detections[0], &b = real.detections[0];
  EXPECT_GT(BoxIou(a.box, b.box), 0.9f);
  EXPECT_NEAR(a.score, b.score, 0.05f);
  // The eyes, nose, mouth and ears within a few pixels of the float model's
  // (the face is about 190 pixels wide).
  ASSERT_EQ(a.keypoints.size(), b.keypoints.size());
  for (size_t k = 0; k < a.keypoints.size(); ++k) {
    EXPECT_LT(std::hypot(a.keypoints[k][0] - b.keypoints[k][0], a.keypoints[k][1] - b.keypoints[k][1]), 5.0f)
        << "keypoint " << k;
  }
}

void ExpectTheSameMask(Delegate* delegate) {
  const std::string models = ModelsWithInt8("selfie_segmentation");
  const pipeline::Result int8 = Process("selfie", models, "astronaut.png", delegate);
  const pipeline::Result real = Process("selfie", testing::DataPath("models"), "astronaut.png");
  fs::remove_all(models);
  ASSERT_TRUE(int8.mask.has_value() && real.mask.has_value());
  ASSERT_EQ(int8.mask->values.size(), real.mask->values.size());
  size_t both = 0, either = 0;
  for (size_t i = 0; i < real.mask->values.size(); ++i) {
    const bool p = int8.mask->values[i] >= 0.5f, q = real.mask->values[i] >= 0.5f;
    both += p && q;
    either += p || q;
  }
  ASSERT_GT(either, real.mask->values.size() / 10) << "the float mask should cover the astronaut";
  EXPECT_GT(static_cast<double>(both) / static_cast<double>(either), 0.9);
}

TEST(QuantizedModelsTest, TheInt8FaceDetectorFindsTheFaceTheFloatOneFinds) { ExpectTheSameFace(nullptr); }
TEST(QuantizedModelsTest, TheInt8SegmenterMasksThePersonTheFloatOneMasks) { ExpectTheSameMask(nullptr); }

// On the GPU, as float ops that round as the integer kernels do
// (passes/int8_as_float.h): the same answers.
using QuantizedModelsGpuTest = testing::DelegateTest;
TEST_P(QuantizedModelsGpuTest, TheInt8FaceDetectorFindsTheFace) { ExpectTheSameFace(delegate_.get()); }
TEST_P(QuantizedModelsGpuTest, TheInt8SegmenterMasksThePerson) { ExpectTheSameMask(delegate_.get()); }

TEST_P(QuantizedModelsGpuTest, TheInt8FaceDetectorRunsWhollyOnTheGpu) {
  const Graph g = Committed("face_detection_short_range");
  const auto outputs = testing::RunWithBytes(
      g, {ReadBytes(testing::DataPath("reference/face_detection_short_range/image/input_0.f32"))}, delegate_.get());
  ASSERT_EQ(outputs.size(), 2u);  // RunWithBytes checks that every node ran on the GPU
}

INSTANTIATE_TEST_SUITE_P(Backends, QuantizedModelsGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
