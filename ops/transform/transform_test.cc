// MediaPipe's TransformLandmarks, TransformTensorBilinear and
// Landmarks2TransformMatrix: CPU kernels against hand-worked values, options
// read from flexbuffers (and refused when damaged), the GPU against the CPU.
#include <flatbuffers/flexbuffers.h>

#include <cmath>

#include "ops/transform/transform.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;

std::vector<uint8_t> Flex(const std::function<void(flexbuffers::Builder&)>& fields) {
  flexbuffers::Builder fbb;
  fbb.Map([&] { fields(fbb); });
  fbb.Finish();
  return fbb.GetBuffer();
}

std::vector<uint8_t> L2tmV2Options(const std::vector<int>& subset, int left, int right, float target, int oh, int ow,
                                   float sx, float sy) {
  return Flex([&](flexbuffers::Builder& f) {
    f.TypedVector("subset_idxs", [&] {
      for (int i : subset) f.Int(i);
    });
    f.Int("left_rotation_idx", left);
    f.Int("right_rotation_idx", right);
    f.Float("target_rotation_radians", target);
    f.Int("output_height", oh);
    f.Int("output_width", ow);
    f.Float("scale_x", sx);
    f.Float("scale_y", sy);
  });
}

Attributes Custom(const char* name, std::vector<uint8_t> options) { return CustomAttributes{name, std::move(options), nullptr}; }

std::vector<float> Affine(float m00, float m01, float m03, float m10, float m11, float m13) {
  return {m00, m01, 0, m03, m10, m11, 0, m13, 0, 0, 1, 0, 0, 0, 0, 1};
}

std::vector<std::vector<float>> Cpu(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  auto interpreter = Interpreter::Create(g, {});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok()) return {};
  for (size_t i = 0; i < inputs.size(); ++i) std::memcpy((*interpreter)->input(i).data, inputs[i].data(), inputs[i].size() * 4);
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  std::vector<std::vector<float>> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const TensorRef& t = (*interpreter)->output(k);
    out.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  return out;
}

Graph TwoInputOp(const char* name, int version, std::vector<uint8_t> options, const Shape& x, const Shape& y) {
  GraphBuilder b;
  const int in = b.Input(x);
  const int m = b.Input({1, 4, 4});
  const int out = b.Tensor(y);
  b.Op(OpKind::kCustom, Custom(name, std::move(options)), {in, m}, {out});
  b.graph().nodes.back().version = version;
  b.Output(out);
  return b.Build();
}

TEST(TransformTest, TransformLandmarksMovesXyAndKeepsZ) {
  const auto m = Affine(2, 0, 1, 0, 2, -1);
  // v2: [1, N, 3], no options.
  const auto v2 = Cpu(TwoInputOp("TransformLandmarks", 2, {}, {1, 2, 3}, {1, 2, 3}), {{1, 2, 3, -1, 0, 5}, m});
  EXPECT_EQ(v2[0], (std::vector<float>{3, 3, 3, -1, -1, 5}));
  // v1: landmarks of 2 along the channels, the translation scaled by 0.5.
  const auto opts = Flex([](flexbuffers::Builder& f) {
    f.Int("dimensions", 2);
    f.Float("scale", 0.5f);
  });
  const auto v1 = Cpu(TwoInputOp("TransformLandmarks", 1, opts, {1, 1, 1, 4}, {1, 1, 1, 4}), {{1, 2, 3, 4}, m});
  EXPECT_EQ(v1[0], (std::vector<float>{2.5f, 3.5f, 6.5f, 7.5f}));
  // mgd's pipelines: pose's five values, all after x, y kept.
  const auto five = Flex([](flexbuffers::Builder& f) { f.Int("dimensions", 5); });
  const auto v5 = Cpu(TwoInputOp("TransformLandmarks", 1, five, {1, 10}, {1, 10}), {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, m});
  EXPECT_EQ(v5[0], (std::vector<float>{3, 3, 3, 4, 5, 13, 13, 8, 9, 10}));
}

TEST(TransformTest, TransformTensorBilinearSamplesAsMediaPipe) {
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};  // [1, 2, 3, 1]
  const auto size = Flex([](flexbuffers::Builder& f) {
    f.Int("output_height", 2);
    f.Int("output_width", 3);
  });
  // v2 moves the identity by half a pixel and back: the input itself.
  EXPECT_EQ(Cpu(TwoInputOp("TransformTensorBilinear", 2, size, {1, 2, 3, 1}, {1, 2, 3, 1}), {x, Affine(1, 0, 0, 0, 1, 0)})[0], x);
  // Half a pixel right: the mean of neighbours; past the last column: zero.
  const auto shifted = Cpu(TwoInputOp("TransformTensorBilinear", 2, size, {1, 2, 3, 1}, {1, 2, 3, 1}), {x, Affine(1, 0, 0.5f, 0, 1, 0)});
  EXPECT_EQ(shifted[0], (std::vector<float>{0.5f, 1.5f, 0, 3.5f, 4.5f, 0}));
  // v1 reads output_size and samples at corners (no half-pixel move).
  const auto v1size = Flex([](flexbuffers::Builder& f) {
    f.TypedVector("output_size", [&] {
      f.Int(1);
      f.Int(2);
    });
  });
  const auto v1 = Cpu(TwoInputOp("TransformTensorBilinear", 1, v1size, {1, 2, 3, 1}, {1, 1, 2, 1}), {x, Affine(2, 0, 0, 0, 1, 1)});
  EXPECT_EQ(v1[0], (std::vector<float>{3, 5}));
}

TEST(TransformTest, Landmarks2TransformMatrixCropsAroundTheSubset) {
  // Eyes level: no rotation. The subset spans 10 x 20 around (5, 10); an
  // output of 20 x 40 then samples 0.5 input units per pixel from (0, 0).
  GraphBuilder b;
  const int lm = b.Input({1, 4, 3});
  const int out = b.Tensor({1, 4, 4});
  b.Op(OpKind::kCustom, Custom("Landmarks2TransformMatrix", L2tmV2Options({0, 1, 2, 3}, 0, 1, 0.0f, 40, 20, 1.0f, 1.0f)),
       {lm}, {out});
  b.graph().nodes.back().version = 2;
  b.Output(out);
  const auto m = Cpu(b.Build(), {{0, 0, 0, 10, 0, 0, 0, 20, 0, 10, 20, 0}});
  const std::vector<float> expected = Affine(0.5f, 0, 0, 0, 0.5f, 0);
  ASSERT_EQ(m[0].size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(m[0][i], expected[i], 1e-6) << i;
}

TEST(TransformTest, DamagedOptionsAreRefusedByName) {
  GraphBuilder b;
  const int lm = b.Input({1, 4, 3});
  const int out = b.Tensor({1, 4, 4});
  b.Op(OpKind::kCustom, Custom("Landmarks2TransformMatrix", {1, 2, 3}), {lm}, {out});
  b.Output(out);
  auto bad = Interpreter::Create(b.Build(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("custom_options: 3 bytes are not a flexbuffer"));
  GraphBuilder c;
  const int lm2 = c.Input({1, 4, 3});
  const int out2 = c.Tensor({1, 4, 4});
  c.Op(OpKind::kCustom, Custom("Landmarks2TransformMatrix", L2tmV2Options({0, 9}, 0, 1, 0.0f, 8, 8, 1.0f, 1.0f)), {lm2}, {out2});
  c.Output(out2);
  auto out_of_range = Interpreter::Create(c.Build(), {});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(std::string(out_of_range.status().message()), ::testing::HasSubstr("custom_options: landmark 9 of 4"));
}

using TransformGpuTest = testing::DelegateTest;

TEST_P(TransformGpuTest, MatchesTheCpu) {
  using testing::OneOp;
  {  // the matrix from landmarks, then a crop through it and landmarks back
    OneOp g;
    const int lm = g.Input({1, 30, 3}, 50.0f);
    const int image = g.Input({1, 37, 41, 6});
    const auto opts = L2tmV2Options({3, 7, 11, 19, 23, 29, 2}, 4, 17, 0.3f, 16, 12, 1.2f, 0.9f);
    const int m = g.Op(OpKind::kCustom, Custom("Landmarks2TransformMatrix", opts), {lm}, {{1, 4, 4}})[0];
    g.b.graph().nodes.back().version = 2;
    const auto size = Flex([](flexbuffers::Builder& f) {
      f.Int("output_height", 16);
      f.Int("output_width", 12);
    });
    g.Out(g.Op(OpKind::kCustom, Custom("TransformTensorBilinear", size), {image, m}, {{1, 16, 12, 6}}));
    g.b.graph().nodes.back().version = 2;
    g.Out(g.Op(OpKind::kCustom, Custom("TransformLandmarks", {}), {lm, m}, {{1, 30, 3}}));
    g.b.graph().nodes.back().version = 2;
    g.Out({m});
    // The matrix's fp16 storage moves samples by up to a pixel: the crop is
    // compared at fp32 only; the matrix and landmarks within the op bounds
    // widened for sums of ~50-unit coordinates.
    if (GetParam().fp16) {
      auto graph = g.b.Build();
      graph.outputs.erase(graph.outputs.begin());
      ExpectSameAsCpu(graph, g.data, 64.0);
    } else {
      ExpectSameAsCpu(g.b.Build(), g.data, 64.0);
    }
  }
  {  // v1 landmarks along channels, scaled
    OneOp g;
    const int lm = g.Input({1, 2, 3, 6}, 10.0f);
    const int m = g.Input({1, 4, 4});
    const auto opts = Flex([](flexbuffers::Builder& f) {
      f.Int("dimensions", 3);
      f.Float("scale", 0.25f);
    });
    g.Out(g.Op(OpKind::kCustom, Custom("TransformLandmarks", opts), {lm, m}, {{1, 2, 3, 6}}));
    ExpectSameAsCpu(g.b.Build(), g.data, 16.0);
  }
  {  // five values a landmark (pose through mgd's pipelines)
    OneOp g;
    const int lm = g.Input({1, 195}, 10.0f);
    const int m = g.Input({1, 4, 4});
    const auto opts = Flex([](flexbuffers::Builder& f) { f.Int("dimensions", 5); });
    g.Out(g.Op(OpKind::kCustom, Custom("TransformLandmarks", opts), {lm, m}, {{1, 195}}));
    ExpectSameAsCpu(g.b.Build(), g.data, 16.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TransformGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
