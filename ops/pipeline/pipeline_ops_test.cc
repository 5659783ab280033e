// The pipeline ops (MgdImageToTensor, MgdDecodeDetections,
// MgdNonMaxSuppression): CPU kernels against hand-worked values, the GPU
// against the CPU on both APIs and precisions.
#include <cmath>
#include <cstring>

#include "ops/pipeline/pipeline_ops.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;

using testing::RunWithBytes;

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Attributes Custom(const char* name, std::vector<uint8_t> options) { return CustomAttributes{name, std::move(options), nullptr}; }

// An image input, a matrix (constant or an input) and the op.
struct ImageGraph {
  GraphBuilder b;
  std::vector<std::vector<uint8_t>> inputs;
  ImageGraph(const std::vector<uint8_t>& pixels, int h, int w, int c, const std::vector<float>& matrix, bool matrix_input,
             const ImageToTensorAttributes& a) {
    const int image = b.Tensor({1, h, w, c}, DataType::kUInt8, "image");
    b.graph().inputs.push_back(image);
    inputs.push_back(pixels);
    int m = 0;
    if (matrix_input) {
      m = b.Input({1, 1, 4, 4}, "matrix");
      inputs.push_back(Bytes(matrix));
    } else {
      m = b.Constant({1, 1, 4, 4}, matrix, "matrix");
    }
    const int out = b.Tensor({1, a.height, a.width, a.channels});
    b.Op(OpKind::kCustom, Custom(kImageToTensorOp, EncodeOptions(a)), {image, m}, {out});
    b.Output(out);
  }
};

std::vector<float> Affine(float m00, float m01, float m03, float m10, float m11, float m13) {
  return {m00, m01, 0, m03, m10, m11, 0, m13, 0, 0, 1, 0, 0, 0, 0, 1};
}

TEST(ImageToTensorTest, SamplesBilinearlyWithZeroBorderAndScales) {
  // A 2x3 RGB image; range [-1, 1]: v / 255 * 2 - 1.
  const std::vector<uint8_t> px = {0, 10, 20, 30, 40, 50, 60, 70, 80,  //
                                   90, 100, 110, 120, 130, 140, 150, 160, 170};
  auto norm = [](float v) { return v * (2.0f / 255.0f) - 1.0f; };
  {  // the identity: the image itself
    ImageGraph g(px, 2, 3, 3, Affine(1, 0, 0, 0, 1, 0), false, {2, 3, 3, -1.0f, 1.0f});
    const auto out = RunWithBytes(g.b.Build(), g.inputs, nullptr);
    ASSERT_EQ(out.size(), 1u);
    for (size_t i = 0; i < px.size(); ++i) EXPECT_FLOAT_EQ(out[0][i], norm(px[i])) << i;
  }
  {  // half a pixel right and down: the mean of four; the last column and row half outside (zeros)
    ImageGraph g(px, 2, 3, 3, Affine(1, 0, 0.5f, 0, 1, 0.5f), false, {2, 3, 2, -1.0f, 1.0f});
    const auto out = RunWithBytes(g.b.Build(), g.inputs, nullptr);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NEAR(out[0][0], norm((0 + 30 + 90 + 120) / 4.0f), 1e-6);     // (0,0) channel 0
    EXPECT_NEAR(out[0][1], norm((10 + 40 + 100 + 130) / 4.0f), 1e-6);   // channel 1
    EXPECT_NEAR(out[0][2 * 2], norm((60 + 150) / 4.0f), 1e-6);          // (0,2): two taps outside
    EXPECT_NEAR(out[0][(3 + 2) * 2 + 1], norm(160 / 4.0f), 1e-6);       // (1,2) channel 1: one tap inside
  }
  {  // far outside: range_min; a grey image feeds every channel
    const std::vector<uint8_t> grey = {255};
    ImageGraph g(grey, 1, 1, 1, Affine(1, 0, -7, 0, 1, 0), false, {1, 2, 3, 0.0f, 1.0f});
    const auto out = RunWithBytes(g.b.Build(), g.inputs, nullptr);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], (std::vector<float>{0, 0, 0, 0, 0, 0}));
    ImageGraph at(grey, 1, 1, 1, Affine(1, 0, 0, 0, 1, 0), false, {1, 1, 3, 0.0f, 1.0f});
    EXPECT_EQ(RunWithBytes(at.b.Build(), at.inputs, nullptr)[0], (std::vector<float>{1, 1, 1}));
  }
}

TEST(ImageToTensorTest, ClampToEdgeRepeatsTheBorder) {
  const std::vector<uint8_t> px = {0, 10, 20, 30, 40, 50, 60, 70, 80,  //
                                   90, 100, 110, 120, 130, 140, 150, 160, 170};
  auto norm = [](float v) { return v * (2.0f / 255.0f) - 1.0f; };
  ImageToTensorAttributes a{2, 3, 3, -1.0f, 1.0f, true};
  ImageGraph g(px, 2, 3, 3, Affine(1, 0, 0.5f, 0, 1, 0.5f), false, a);
  const auto out = RunWithBytes(g.b.Build(), g.inputs, nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0][0], norm((0 + 30 + 90 + 120) / 4.0f), 1e-6);   // inside: as without
  EXPECT_NEAR(out[0][2 * 3], norm((60 + 150) / 2.0f), 1e-6);        // (0,2): the last column twice
  EXPECT_NEAR(out[0][(3 + 2) * 3 + 1], norm(160), 1e-6);            // (1,2): the corner pixel
  // Far outside: the nearest corner's value, not range_min.
  ImageGraph far(px, 2, 3, 3, Affine(1, 0, -9, 0, 1, 9), false, {1, 1, 3, -1.0f, 1.0f, true});
  EXPECT_NEAR(RunWithBytes(far.b.Build(), far.inputs, nullptr)[0][1], norm(100), 1e-6);
}

TEST(ImageToTensorTest, RefusesBadNodes) {
  const std::vector<uint8_t> px(2 * 2 * 2, 0);
  ImageGraph g(px, 2, 2, 2, Affine(1, 0, 0, 0, 1, 0), false, {2, 2, 3, 0.0f, 1.0f});
  auto interpreter = Interpreter::Create(g.b.Build(), {});
  ASSERT_FALSE(interpreter.ok());
  EXPECT_THAT(std::string(interpreter.status().message()), ::testing::HasSubstr("image has 2 channels (1, 3 or 4)"));
  GraphBuilder b;
  const int x = b.Input({1, 2, 2, 3});
  const int m = b.Constant({1, 1, 4, 4}, Affine(1, 0, 0, 0, 1, 0));
  const int y = b.Tensor({1, 2, 2, 3});
  b.Op(OpKind::kCustom, Custom(kImageToTensorOp, {1, 2, 3}), {x, m}, {y});
  b.Output(y);
  auto bad = Interpreter::Create(b.Build(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("custom_options hold 3 bytes, expected 20"));
}

TEST(DecodeDetectionsTest, DecodesAsMediaPipe) {
  // One anchor at (0.25, 0.5) of size 0.5 x 1; raw x, y, w, h, one keypoint.
  DecodeDetectionsAttributes a;
  a.num_coords = 6;
  a.num_keypoints = 1;
  a.x_scale = a.y_scale = a.w_scale = a.h_scale = 10.0f;
  a.score_clip = 3.0f;
  GraphBuilder b;
  const int boxes = b.Input({1, 1, 6});
  const int scores = b.Input({1, 1, 1});
  const int anchors = b.Constant({1, 4}, {0.25f, 0.5f, 0.5f, 1.0f});
  const int out = b.Tensor({1, 1, DetectionRowSize(1)});
  b.Op(OpKind::kCustom, Custom(kDecodeDetectionsOp, EncodeOptions(a)), {boxes, scores, anchors}, {out});
  b.Output(out);
  const auto result = RunWithBytes(b.Build(), {Bytes(std::vector<float>{2, -4, 4, 2, 1, 3}), Bytes(std::vector<float>{9})}, nullptr);
  ASSERT_EQ(result.size(), 1u);
  // x = 2/10*0.5 + 0.25 = 0.35, y = -4/10*1 + 0.5 = 0.1, w = 4/10*0.5 = 0.2, h = 2/10*1 = 0.2
  const float sigmoid3 = 1.0f / (1.0f + std::exp(-3.0f));
  const std::vector<float> expected = {0.25f, 0.0f, 0.45f, 0.2f, 0.3f, 0.8f, sigmoid3};
  ASSERT_EQ(result[0].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(result[0][i], expected[i], 1e-6) << i;
}

// Rows: xmin, ymin, xmax, ymax, one keypoint, score.
Graph NmsGraph(int n, const NonMaxSuppressionAttributes& a, const std::vector<float>* projection) {
  GraphBuilder b;
  const int rows = b.Input({1, n, 7});
  std::vector<int> inputs = {rows};
  if (projection) inputs.push_back(b.Constant({1, 1, 4, 4}, *projection));
  const int out = b.Tensor({1, a.max_detections, 7});
  b.Op(OpKind::kCustom, Custom(kNonMaxSuppressionOp, EncodeOptions(a)), inputs, {out});
  b.Output(out);
  return b.Build();
}

TEST(NonMaxSuppressionTest, WeightsOverlappingBoxesByScore) {
  const std::vector<float> rows = {
      0.0f,  0.0f,  0.5f,  0.5f,  0.25f, 0.25f, 0.75f,  // A
      0.5f,  0.5f,  1.0f,  1.0f,  0.75f, 0.75f, 0.6f,   // C, apart
      0.0f,  0.0f,  0.5f,  0.25f, 0.5f,  0.5f,  0.25f,  // B: IoU with A 0.5
      0.9f,  0.9f,  1.0f,  1.0f,  0.0f,  0.0f,  0.1f,   // below min_score
  };
  NonMaxSuppressionAttributes a{3, 0.2f, 0.3f};
  const auto out = RunWithBytes(NmsGraph(4, a, nullptr), {Bytes(rows)}, nullptr);
  ASSERT_EQ(out.size(), 1u);
  // A and B weighted 0.75 : 0.25; then C alone; then an empty row.
  const std::vector<float> expected = {0.0f, 0.0f, 0.5f,  0.4375f, 0.3125f, 0.3125f, 0.75f,  //
                                       0.5f, 0.5f, 1.0f,  1.0f,    0.75f,   0.75f,   0.6f,   //
                                       0.0f, 0.0f, 0.0f,  0.0f,    0.0f,    0.0f,    -1.0f};
  ASSERT_EQ(out[0].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(out[0][i], expected[i], 1e-6) << i;
  // Projected by x' = 100 x + 10, y' = 50 y (the box stays axis-aligned).
  const std::vector<float> m = Affine(100, 0, 10, 0, 50, 0);
  const auto projected = RunWithBytes(NmsGraph(4, {1, 0.2f, 0.3f}, &m), {Bytes(rows)}, nullptr);
  ASSERT_EQ(projected.size(), 1u);
  const std::vector<float> first = {10.0f, 0.0f, 60.0f, 21.875f, 41.25f, 15.625f, 0.75f};
  for (size_t i = 0; i < first.size(); ++i) EXPECT_NEAR(projected[0][i], first[i], 1e-4) << i;
}

using PipelineOpsGpuTest = testing::DelegateTest;

TEST_P(PipelineOpsGpuTest, ImageToTensorMatchesTheCpu) {
  for (int c : {1, 3, 4}) {
    const int h = 37, w = 53;
    std::vector<uint8_t> px(static_cast<size_t>(h * w * c));
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 7919 + 13) % 251);
    // Rotated by 0.3 rad, scaled and shifted so that some samples fall outside.
    const float cs = std::cos(0.3f), sn = std::sin(0.3f);
    const auto m = Affine(1.7f * cs, -1.3f * sn, 4.2f, 1.7f * sn, 1.3f * cs, -3.1f);
    for (bool matrix_input : {false, true}) {
      ImageGraph g(px, h, w, c, m, matrix_input, {19, 23, std::min(c == 1 ? 3 : c, 3), -1.0f, 1.0f});
      const Graph graph = g.b.Build();
      const auto cpu = RunWithBytes(graph, g.inputs, nullptr);
      // A matrix input is read as the host's floats (fp16 storage would
      // move the samples), a constant one inlined.
      ExpectNear(RunWithBytes(graph, g.inputs, delegate_.get()), cpu, 2.0);
    }
  }
}

// A float one-channel "image" of 0..255 values (a mask brought back onto a
// picture, pipeline/graphs.cc), with either border.
TEST_P(PipelineOpsGpuTest, FloatMaskResamplingMatchesTheCpu) {
  const int h = 29, w = 31;
  std::vector<float> mask(static_cast<size_t>(h * w));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<float>((i * 37) % 97) / 96.0f;
  for (bool clamp : {false, true}) {
    GraphBuilder b;
    const int x = b.Input({1, h, w, 1}, "mask");
    const int m = b.Constant({1, 1, 4, 4}, Affine(0.45f, 0.1f, -2.0f, -0.1f, 0.5f, 1.5f));
    const int y = b.Tensor({1, 67, 71, 1});
    b.Op(OpKind::kCustom, Custom(kImageToTensorOp, EncodeOptions(ImageToTensorAttributes{67, 71, 1, 0.0f, 255.0f, clamp})),
         {x, m}, {y});
    b.Output(y);
    const Graph graph = b.Build();
    const std::vector<std::vector<uint8_t>> inputs{Bytes(mask)};
    const auto cpu = RunWithBytes(graph, inputs, nullptr);
    ExpectNear(RunWithBytes(graph, inputs, delegate_.get()), cpu, 2.0);
  }
}

TEST_P(PipelineOpsGpuTest, DecodeAndSuppressionMatchTheCpu) {
  const int n = 150, k = 3, coords = 4 + 2 * k + 2;
  DecodeDetectionsAttributes a;
  a.num_coords = coords;
  a.box_offset = 2;
  a.keypoint_offset = 6;
  a.num_keypoints = k;
  a.x_scale = a.y_scale = 64.0f;
  a.w_scale = a.h_scale = 16.0f;
  a.exp_size = true;
  a.reverse_order = false;
  a.score_clip = 50.0f;
  GraphBuilder b;
  const int boxes = b.Input({1, n, coords});
  const int scores = b.Input({1, n, 1});
  std::vector<float> anchor_values;
  for (int i = 0; i < n; ++i) anchor_values.insert(anchor_values.end(), {(i % 10) / 10.0f, (i / 10) / 15.0f, 0.2f, 0.3f});
  const int anchors = b.Constant({n, 4}, anchor_values);
  const int decoded = b.Tensor({1, n, DetectionRowSize(k)});
  b.Op(OpKind::kCustom, Custom(kDecodeDetectionsOp, EncodeOptions(a)), {boxes, scores, anchors}, {decoded});
  b.Output(decoded);
  std::vector<float> raw = testing::Uniform(static_cast<size_t>(n * coords), 71, 8.0f);
  std::vector<float> raw_scores = testing::Uniform(static_cast<size_t>(n), 72, 6.0f);
  const Graph graph = b.Build();
  const std::vector<std::vector<uint8_t>> inputs = {Bytes(raw), Bytes(raw_scores)};
  ExpectNear(RunWithBytes(graph, inputs, delegate_.get()), RunWithBytes(graph, inputs, nullptr), 4.0);

  // Suppression on rows that fp16 stores exactly (sixty-fourths, distinct
  // scores), so that both sides see the same boxes: overlapping clusters.
  const int m = 200;
  std::vector<float> rows;
  for (int i = 0; i < m; ++i) {
    const float x = static_cast<float>((i * 37) % 48) / 64.0f, y = static_cast<float>((i * 11) % 40) / 64.0f;
    const float w = static_cast<float>(8 + i % 9) / 64.0f, h = static_cast<float>(8 + i % 7) / 64.0f;
    rows.insert(rows.end(), {x, y, x + w, y + h, x + w / 2, y, static_cast<float>((i * 53) % m) / 256.0f});
  }
  const std::vector<float> projection = Affine(640, 0, 3, 0, 480, -2);
  for (const std::vector<float>* p : {static_cast<const std::vector<float>*>(nullptr), &projection}) {
    const Graph nms = NmsGraph(m, {40, 0.1f, 0.3f}, p);
    ExpectNear(RunWithBytes(nms, {Bytes(rows)}, delegate_.get()), RunWithBytes(nms, {Bytes(rows)}, nullptr), 4.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PipelineOpsGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
