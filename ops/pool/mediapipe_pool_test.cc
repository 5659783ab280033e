// MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D: the CPU kernels
// against MediaPipe's definitions, the GPU against the CPU.
#include "ops/pool/pool.h"

#include <algorithm>
#include <random>

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

constexpr int32_t kTfLiteSame = 1, kTfLiteValid = 2;

// MediaPipe's MaxPoolArgmax: the max over the window clipped to the input and
// its position inside the window as y * filter_w + x + 0.1 (first max wins).
void CheckMaxPoolArgmax(int32_t padding, const Shape& xs, int fh, int fw, int sh, int sw, int32_t activation,
                        uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "MaxPoolingWithArgmax2D " << ShapeToString(xs) << " f" << fh << "x" << fw << " s"
                                    << sh << "," << sw << (padding == kTfLiteSame ? " SAME" : " VALID"));
  const auto x = Random(Count(xs), seed, -2, 2);
  const Padding pad = padding == kTfLiteSame ? Padding::kSame : Padding::kValid;
  const int oh = OutSize(pad, xs[1], fh, sh), ow = OutSize(pad, xs[2], fw, sw);
  const int ph = PadBefore(xs[1], fh, sh, 1, oh), pw = PadBefore(xs[2], fw, sw, 1, ow);
  const Shape ys{xs[0], oh, ow, xs[3]};
  std::vector<double> values, indices;
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < xs[3]; ++c) {
          double best = -std::numeric_limits<double>::infinity();
          int best_k = 0;
          for (int fy = 0; fy < fh; ++fy)
            for (int fx = 0; fx < fw; ++fx) {
              const int iy = oy * sh - ph + fy, ix = ox * sw - pw + fx;
              if (iy < 0 || iy >= xs[1] || ix < 0 || ix >= xs[2]) continue;
              if (x[At(xs, b, iy, ix, c)] > best) {
                best = x[At(xs, b, iy, ix, c)];
                best_k = fy * fw + fx;
              }
            }
          values.push_back(ApplyActivation(static_cast<Activation>(activation), best));
          indices.push_back(static_cast<float>(best_k) + 0.1f);
        }
  const auto outs =
      RunOp(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", RawInts({padding, sw, sh, fw, fh, activation})},
            {In(xs, x)}, {ys, ys});
  ASSERT_EQ(outs.size(), 2u);
  ExpectClose(outs[0], values);
  ExpectClose(outs[1], indices);
}

TEST(MediaPipeOpsTest, MaxPoolingWithArgmax2DByHand) {
  // 2x2 windows, stride 2, VALID on
  //   [ 1  5  2  0]
  //   [ 3  4  8  6]
  //   [ 0 -1  7  9]
  //   [ 2 -3  4  1]
  // window (0,0): max 5 at (0,1) -> 0*2+1 + 0.1 = 1.1; (0,1): 8 at (1,0) -> 2.1;
  // (1,0): 2 at (1,0) -> 2.1; (1,1): 9 at (0,1) -> 1.1.
  const auto outs =
      RunOp(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", RawInts({kTfLiteValid, 2, 2, 2, 2, 0})},
            {In({1, 4, 4, 1}, {1, 5, 2, 0, 3, 4, 8, 6, 0, -1, 7, 9, 2, -3, 4, 1})}, {{1, 2, 2, 1}, {1, 2, 2, 1}});
  ASSERT_EQ(outs.size(), 2u);
  ExpectClose(outs[0], {5, 8, 2, 9});
  ExpectClose(outs[1], {1.1, 2.1, 2.1, 1.1});
}

TEST(MediaPipeOpsTest, MaxPoolingWithArgmax2DMatchesWindowLoop) {
  CheckMaxPoolArgmax(kTfLiteSame, {1, 7, 5, 3}, 3, 3, 2, 2, 0, 6300);
  CheckMaxPoolArgmax(kTfLiteValid, {2, 8, 9, 5}, 2, 3, 2, 3, 0, 6310);
  CheckMaxPoolArgmax(kTfLiteSame, {1, 6, 6, 2}, 2, 2, 2, 2, 1 /* RELU */, 6320);
  CheckMaxPoolArgmax(kTfLiteSame, {1, 5, 9, 4}, 3, 2, 1, 3, 3 /* RELU6 */, 6330);
}

// MaxPoolingWithArgmax2D followed by MaxUnpooling2D with the same options.
std::vector<float> PoolThenUnpool(const Shape& xs, const std::vector<float>& x, int32_t padding, int f, int s,
                                  const Shape& pooled, const Shape& ys) {
  GraphBuilder b;
  const int in = b.Input(xs);
  const int values = b.Tensor(pooled), indices = b.Tensor(pooled), out = b.Tensor(ys);
  const auto options = RawInts({padding, s, s, f, f, 0});
  b.Op(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", options}, {in}, {values, indices});
  b.Op(OpKind::kCustom, CustomAttributes{"MaxUnpooling2D", options}, {values, indices}, {out});
  b.Output(out);
  auto outs = RunGraph(b.Build(), {x});
  return outs.empty() ? std::vector<float>{} : outs[0];
}

// Each window's max back at its position, zeros elsewhere (distinct values).
std::vector<float> RefUnpoolOfPool(const Shape& xs, const std::vector<float>& x, int f, const Shape& ys) {
  std::vector<float> y(Count(ys), 0.0f);
  for (int b = 0; b < xs[0]; ++b)
    for (int wy = 0; wy * f < xs[1]; ++wy)
      for (int wx = 0; wx * f < xs[2]; ++wx)
        for (int c = 0; c < xs[3]; ++c) {
          int by = -1, bx = -1;
          for (int iy = wy * f; iy < std::min(xs[1], wy * f + f); ++iy)
            for (int ix = wx * f; ix < std::min(xs[2], wx * f + f); ++ix) {
              if (by < 0 || x[At(xs, b, iy, ix, c)] > x[At(xs, b, by, bx, c)]) {
                by = iy;
                bx = ix;
              }
            }
          y[At(ys, b, by, bx, c)] = x[At(xs, b, by, bx, c)];
        }
  return y;
}

TEST(MediaPipeOpsTest, MaxUnpooling2DPutsEachMaxBackAtItsPosition) {
  const Shape xs{2, 4, 6, 3};
  const auto x = Random(Count(xs), 6400);
  const Shape pooled{2, 2, 3, 3};
  EXPECT_EQ(PoolThenUnpool(xs, x, kTfLiteValid, 2, 2, pooled, xs), RefUnpoolOfPool(xs, x, 2, xs));
}

TEST(MediaPipeOpsTest, MaxUnpooling2DOddInputSamePadding) {
  // 5x5 pooled 2x2/2 SAME -> 3x3 (padding after only); unpooled to 6x6, the
  // last row and column stay zero.
  const Shape xs{1, 5, 5, 2};
  const auto x = Random(Count(xs), 6410);
  const Shape ys{1, 6, 6, 2};
  EXPECT_EQ(PoolThenUnpool(xs, x, kTfLiteSame, 2, 2, {1, 3, 3, 2}, ys), RefUnpoolOfPool(xs, x, 2, ys));
}

TEST(MediaPipeOpsTest, MaxUnpooling2DOutOfWindowIndicesWriteNothingOutOfBounds) {
  // values [[10,20,30],[40,50,60]] with 2x2/2 windows -> a 4x6 output. Indices:
  //   3.1 -> (1,1) of window (0,0)       -5   -> decodes to (-2,-1) from window (0,1): outside, skipped
  //   1e9 -> skipped (does not fit)      4.1  -> decodes to (2,0) from window (1,0) = row 4: outside, skipped
  //   0.1 -> (0,0) of window (1,1)       NaN  -> skipped
  // A canary tensor computed alongside (RELU of a third input) must be intact.
  GraphBuilder b;
  const int values = b.Input({1, 2, 3, 1});
  const int indices = b.Input({1, 2, 3, 1});
  const int canary_in = b.Input({64});
  const int out = b.Tensor({1, 4, 6, 1});
  const int canary = b.Tensor({64});
  b.Op(OpKind::kCustom, CustomAttributes{"MaxUnpooling2D", RawInts({kTfLiteValid, 2, 2, 2, 2, 0})}, {values, indices},
       {out});
  b.Op(OpKind::kRelu, {}, {canary_in}, {canary});
  b.Output(out);
  b.Output(canary);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> canary_data = Iota(64, 1000);
  const auto outs = RunGraph(b.Build(), {{10, 20, 30, 40, 50, 60}, {3.1f, -5, 1e9f, 4.1f, 0.1f, nan}, canary_data});
  ASSERT_EQ(outs.size(), 2u);
  std::vector<float> expected(24, 0.0f);
  expected[1 * 6 + 1] = 10;
  expected[2 * 6 + 2] = 50;
  EXPECT_EQ(outs[0], expected);
  EXPECT_EQ(outs[1], canary_data);
}

using MediaPipePoolGpuTest = testing::DelegateTest;

TEST_P(MediaPipePoolGpuTest, MaxPoolingWithArgmaxAndUnpooling) {
  // Distinct values exactly representable in fp16, so that no two taps tie
  // after rounding and the argmax is the same on every path.
  std::vector<float> values(240);
  for (size_t i = 0; i < values.size(); ++i) values[i] = (static_cast<float>(i) - 120.0f) / 128.0f;
  std::shuffle(values.begin(), values.end(), std::mt19937(5));
  for (int padding : {1, 2}) {
    GraphBuilder b;
    const int x = b.Input({1, 6, 8, 5});
    const int v = b.Tensor({1, 3, 4, 5}), i = b.Tensor({1, 3, 4, 5}), y = b.Tensor({1, 6, 8, 5});
    const std::vector<uint8_t> options = RawInts({padding, 2, 2, 2, 2, 0});
    b.Op(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", options}, {x}, {v, i});
    b.Op(OpKind::kCustom, CustomAttributes{"MaxUnpooling2D", options}, {v, i}, {y});
    for (int t : {v, i, y}) b.Output(t);
    ExpectSameAsCpu(b.Build(), {values});
  }
}

// A program's own kernel under a MediaPipe name gets the option bytes as they
// are (mgd's decoding would refuse these), and its node stays with it on the
// CPU instead of going to mgd's shader.
class SevensKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override { return ctx.ExpectOutputShape(0, ctx.in(0).shape); }
  absl::Status Invoke(KernelContext& ctx) override {
    TensorRef& y = ctx.out(0);
    std::fill(y.as<float>(), y.as<float>() + y.elements(), 7.0f);
    return absl::OkStatus();
  }
};

TEST_P(MediaPipePoolGpuTest, AProgramsOwnKernelUnderTheNameKeepsTheNode) {
  GraphBuilder b;
  const int x = b.Input({1, 2, 2, 3}), y = b.Tensor({1, 2, 2, 3});
  b.Op(OpKind::kCustom, CustomAttributes{"MaxUnpooling2D", {1, 2, 3}}, {x}, {y});
  b.Output(y);
  InterpreterOptions options;
  std::vector<uint8_t> seen;
  options.resolver.AddCustom("MaxUnpooling2D", [&seen](const Node& node) -> std::unique_ptr<Kernel> {
    const auto& custom = std::get<CustomAttributes>(node.attributes);
    seen = custom.options;
    EXPECT_EQ(custom.decoded, nullptr);
    return std::make_unique<SevensKernel>();
  });
  options.delegates.push_back(delegate_.get());
  auto interpreter = Interpreter::Create(b.Build(), std::move(options));
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  EXPECT_EQ(seen, (std::vector<uint8_t>{1, 2, 3}));
  const NodePlacement& placement = (*interpreter)->placements()[0];
  EXPECT_EQ(placement.where, NodePlacement::Where::kCpu);
  EXPECT_THAT(placement.reason, ::testing::HasSubstr("the program's own"));
  ASSERT_TRUE((*interpreter)->Invoke().ok());
  const TensorRef& out = (*interpreter)->output(0);
  EXPECT_THAT(std::vector<float>(out.as<float>(), out.as<float>() + out.elements()), ::testing::Each(7.0f));
}

INSTANTIATE_TEST_SUITE_P(Backends, MediaPipePoolGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::ops
