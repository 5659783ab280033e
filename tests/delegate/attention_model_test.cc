// face_landmark_with_attention (MediaPipe's face mesh with attention, which
// LiteRT cannot run: its TransformTensorBilinear, Landmarks2TransformMatrix
// and TransformLandmarks are MediaPipe's custom ops): fully on the GPU in
// one partition, against mgd's CPU kernels, and its landmarks against
// face_landmark's on the same face.
#include <cmath>
#include <cstdio>

#include "model/reader.h"
#include "ops/pipeline/pipeline_ops.h"
#include "pipeline/geometry.h"
#include "pipeline/pipeline.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

using AttentionModelTest = testing::DelegateTest;

std::vector<std::vector<float>> RunModel(const std::string& name, const std::vector<float>& input, Delegate* delegate,
                                         size_t* partitions = nullptr) {
  auto graph = ReadModelFile(testing::DataPath("models/" + name + ".tflite"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  InterpreterOptions options;
  if (delegate) options.delegates.push_back(delegate);
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok()) return {};
  Interpreter& in = **interpreter;
  for (size_t n = 0; n < in.graph().nodes.size(); ++n) {
    if (delegate) {
      EXPECT_NE(in.placements()[n].where, NodePlacement::Where::kCpu)
          << NodeLabel(in.graph(), static_cast<int>(n)) << ": " << in.placements()[n].reason;
    }
  }
  if (partitions) *partitions = in.partitions().size();
  std::memcpy(in.input(0).data, input.data(), in.input(0).bytes);
  EXPECT_TRUE(in.Invoke().ok());
  std::vector<std::vector<float>> outputs;
  for (size_t k = 0; k < in.num_outputs(); ++k) {
    const TensorRef& t = in.output(k);
    outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  return outputs;
}

// The face of the astronaut photo as MediaPipe's face mesh crops it: the
// detection's box turned level with the eyes, squared and grown by 1.5
// (face_detection_front_detection_to_roi.pbtxt), sampled to 192x192 in
// [0, 1] by MgdImageToTensor on the CPU.
std::vector<float> FaceCrop(pipeline::Roi* roi_out = nullptr) {
  auto image = pipeline::ReadImage(testing::DataPath("images/astronaut.png"));
  auto detector = pipeline::Pipeline::Create("face", {testing::DataPath("models"), {}, nullptr});
  EXPECT_TRUE(image.ok() && detector.ok());
  auto faces = (*detector)->Process(*image);
  EXPECT_TRUE(faces.ok());
  EXPECT_EQ(faces->detections.size(), 1u);
  const pipeline::Detection& face = faces->detections.at(0);
  pipeline::RoiRule level;
  level.start = {{0, 1.0f}};  // right eye
  level.end = {{1, 1.0f}};    // left eye
  level.scale = 1.5f;
  const std::vector<pipeline::Point> eyes{face.keypoints[0], face.keypoints[1]};
  const pipeline::Roi roi = pipeline::RoiFromPoints(level, eyes, &face.box);
  if (roi_out) *roi_out = roi;
  const pipeline::Matrix4 crop = pipeline::CropMatrix(roi, 192, 192);
  testing::GraphBuilder b;
  const int pixels = b.Tensor({1, image->height, image->width, 3}, DataType::kUInt8, "image");
  b.graph().inputs.push_back(pixels);
  const int matrix = b.Constant({1, 1, 4, 4}, std::vector<float>(crop.begin(), crop.end()));
  const int out = b.Tensor({1, 192, 192, 3});
  b.Op(OpKind::kCustom,
       CustomAttributes{ops::kImageToTensorOp, ops::EncodeOptions(ops::ImageToTensorAttributes{192, 192, 3, 0.0f, 1.0f}), nullptr},
       {pixels, matrix}, {out});
  b.Output(out);
  auto interpreter = Interpreter::Create(b.Build(), {});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  std::memcpy((*interpreter)->input(0).data, image->pixels.data(), image->pixels.size());
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  const TensorRef& t = (*interpreter)->output(0);
  return {t.as<float>(), t.as<float>() + t.elements()};
}

TEST_P(AttentionModelTest, RunsWhollyOnTheGpuAsOnTheCpu) {
  const auto input = FaceCrop();
  const auto cpu = RunModel("face_landmark_with_attention", input, nullptr);
  size_t partitions = 0;
  const auto gpu = RunModel("face_landmark_with_attention", input, delegate_.get(), &partitions);
  EXPECT_EQ(partitions, 1u);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t k = 0; k < cpu.size(); ++k) {
    const double rms = testing::RelativeRms(gpu[k], cpu[k]);
    std::printf("  output %zu: relative RMS %.3g against the CPU\n", k, rms);
    EXPECT_LE(rms, GetParam().fp16 ? 1e-2 : 1e-5) << "output " << k;
  }
}

// Each op of the model is checked on all four in ops/transform/; the whole
// model on two (a cold llvmpipe compiles its 200 shaders in 10-40 s).
INSTANTIATE_TEST_SUITE_P(Backends, AttentionModelTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, true}),
                         testing::BackendName);

// The two face meshes of the same face crop (192x192): the attention model
// refines lips, eyes and irises, and places the 468 mesh points where
// face_landmark does within a few pixels.
TEST(AttentionModelAgreementTest, MeshAgreesWithFaceLandmark) {
  pipeline::Roi roi;
  const auto input = FaceCrop(&roi);
  const auto plain = RunModel("face_landmark", input, nullptr);
  const auto attention = RunModel("face_landmark_with_attention", input, nullptr);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(attention.empty());
  ASSERT_EQ(plain[0].size(), 1404u);
  ASSERT_EQ(attention[0].size(), 1404u);
  double sum = 0, worst = 0;
  for (size_t i = 0; i < 468; ++i) {
    const double d = std::hypot(plain[0][3 * i] - attention[0][3 * i], plain[0][3 * i + 1] - attention[0][3 * i + 1]);
    sum += d;
    worst = std::max(worst, d);
  }
  const double to_image = roi.width / 192.0;
  std::printf("face mesh, attention vs face_landmark: mean %.2f px, max %.2f px of the 192 px crop "
              "(%.2f and %.2f px of the 512 px photo); face flags %.2f and %.2f\n",
              sum / 468, worst, sum / 468 * to_image, worst * to_image, plain[1][0], attention[6][0]);
  // Both see a face (positive logits) and place the mesh alike.
  EXPECT_GT(plain[1][0], 0.0f);
  EXPECT_GT(attention[6][0], 0.0f);
  EXPECT_LT(sum / 468, 2.0);
  EXPECT_LT(worst, 6.0);
}

}  // namespace
}  // namespace mgd
