// Resampler: samples by hand (inside, on a pixel, half outside, outside),
// the GPU against the CPU with the warp given by the app (read exactly) and
// computed inside the model, and bad shapes refused by name.
#include "ops/resampler/resampler.h"

#include "interpreter/interpreter.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/single_op.h"

namespace mgd::ops {
namespace {

using testing::GraphBuilder;

Attributes ResamplerNode() { return CustomAttributes{kResamplerOp, {}, nullptr}; }

// Source [batch, h, w, c] and warp [batch, wh, ww, 2], both graph inputs;
// with `computed_warp` the warp is the input plus 0.25 (an activation).
Graph ResamplerGraph(const Shape& source, const Shape& warp, bool computed_warp = false) {
  GraphBuilder b;
  const int src = b.Input(source, "source");
  int w = b.Input(warp, "warp");
  if (computed_warp) {
    const int shifted = b.Tensor(warp, DataType::kFloat32, "shifted");
    b.Op(OpKind::kAdd, ElementwiseAttributes{}, {w, b.Constant({1}, {0.25f})}, {shifted});
    w = shifted;
  }
  const int out = b.Tensor({source[0], warp[1], warp[2], source[3]}, DataType::kFloat32, "sampled");
  b.Op(OpKind::kCustom, ResamplerNode(), {src, w}, {out});
  b.Output(out);
  return b.Build();
}

TEST(ResamplerTest, SamplesByHand) {
  // A 2x2 image of one channel: 1 2 / 3 4.
  const std::vector<float> image = {1, 2, 3, 4};
  const std::vector<float> warp = {
      0.5f, 0.5f,   // the middle: the mean, 2.5
      1.0f, 1.0f,   // on pixel (1, 1): 4
      -0.5f, 0.0f,  // half a pixel left of (0, 0): half its weight, 0.5
      2.0f, 0.0f,   // at x = width: outside, 0
      0.25f, 0.0f,  // a quarter of the way to 2: 1.25
      0.0f, -1.0f,  // at y = -1: outside, 0
  };
  const auto out = testing::single_op::RunGraph(ResamplerGraph({1, 2, 2, 1}, {1, 1, 6, 2}), {image, warp});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (std::vector<float>{2.5f, 4.0f, 0.5f, 0.0f, 1.25f, 0.0f}));
}

TEST(ResamplerTest, BadShapesAreRefusedByName) {
  const auto s = Interpreter::Create(ResamplerGraph({1, 4, 4, 3}, {1, 4, 4, 3}), InterpreterOptions{}).status();
  EXPECT_THAT(s.message(), ::testing::HasSubstr("warp [1,4,4,3] must be [1, height, width, 2]"));
}

class ResamplerGpuTest : public testing::DelegateTest {};

// Odd sizes and channels; samples inside, on the border and beyond it.
TEST_P(ResamplerGpuTest, MatchesTheCpu) {
  const Shape source{2, 7, 9, 6}, warp{2, 5, 11, 2};
  std::vector<float> coords = testing::Uniform(static_cast<size_t>(NumElements(warp)), 7);
  for (size_t i = 0; i < coords.size(); ++i) coords[i] = (coords[i] + 1.0f) * (i % 2 == 0 ? 5.5f : 4.5f) - 1.5f;
  const std::vector<float> image = testing::Uniform(static_cast<size_t>(NumElements(source)), 8);
  for (bool computed : {false, true}) {
    SCOPED_TRACE(computed ? "computed warp" : "the app's warp");
    // A computed warp is stored as fp16 with fp16 activations: a coordinate
    // below 16 moves by up to 2^-7 pixel, the value by that times the
    // image's slope (up to 2).
    ExpectSameAsCpu(ResamplerGraph(source, warp, computed), {image, coords}, computed ? 4.0 : 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ResamplerGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
