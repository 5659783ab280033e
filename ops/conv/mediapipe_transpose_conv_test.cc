// MediaPipe's Convolution2DTransposeBias (registered by default): the CPU
// kernel against a scatter loop with MediaPipe's output size, the GPU
// against the CPU.
#include "ops/conv/conv.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

constexpr int32_t kTfLiteSame = 1, kTfLiteValid = 2;

// MediaPipe's Convolution2DTransposeBias (transpose_conv_bias.cc): for SAME,
// total padding P = max(0, k - (in-1) % s - 1), output s*(in-1) + k - P,
// padding before P/2; for VALID no padding and output s*(in-1) + k.
void CheckTransposeConvBias(int32_t padding, int h, int w, int ci, int co, int kh, int kw, int sh, int sw,
                            uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "Convolution2DTransposeBias " << h << "x" << w << "x" << ci << " -> " << co
                                    << " k" << kh << "x" << kw << " s" << sh << "," << sw
                                    << (padding == kTfLiteSame ? " SAME" : " VALID"));
  const int ph = padding == kTfLiteSame ? std::max(0, kh - (h - 1) % sh - 1) : 0;
  const int pw = padding == kTfLiteSame ? std::max(0, kw - (w - 1) % sw - 1) : 0;
  const Shape xs{1, h, w, ci}, ws{co, kh, kw, ci}, ys{1, sh * (h - 1) + kh - ph, sw * (w - 1) + kw - pw, co};
  const auto x = Random(Count(xs), seed), wt = Random(Count(ws), seed + 1),
             bias = Random(static_cast<size_t>(co), seed + 2);
  const auto expected = RefTransposeConv(xs, x, ws, wt, &bias, ys, sh, sw, ph / 2, pw / 2);
  const auto actual =
      RunSingleOp(OpKind::kCustom, CustomAttributes{"Convolution2DTransposeBias", RawInts({padding, sw, sh})},
                  {In(xs, x), Const(ws, wt), Const({co}, bias)}, ys);
  ExpectClose(actual, expected);
}

TEST(MediaPipeOpsTest, Convolution2DTransposeBiasByHand) {
  // VALID, stride 2, 2x2 kernel: out[2i+dy][2j+dx] = x[i][j] * w[dy][dx] + bias;
  // x = [[1,2],[3,4]], w = [[1,0],[0,-1]], bias 1:
  // [[1+1, 0+1, 2+1, 0+1], [0+1, -1+1, 0+1, -2+1], [3+1, 1, 4+1, 1], [1, -3+1, 1, -4+1]].
  const auto out =
      RunSingleOp(OpKind::kCustom, CustomAttributes{"Convolution2DTransposeBias", RawInts({kTfLiteValid, 2, 2})},
                  {In({1, 2, 2, 1}, {1, 2, 3, 4}), Const({1, 2, 2, 1}, {1, 0, 0, -1}), Const({1}, {1})}, {1, 4, 4, 1});
  ExpectClose(out, {2, 1, 3, 1, 1, 0, 1, -1, 4, 1, 5, 1, 1, -2, 1, -3});
}

TEST(MediaPipeOpsTest, Convolution2DTransposeBiasSameEvenInputStride2) {
  // The shapes MediaPipe's segmentation models use: even input, stride 2.
  CheckTransposeConvBias(kTfLiteSame, 4, 6, 3, 5, 4, 4, 2, 2, 6000);
  CheckTransposeConvBias(kTfLiteSame, 6, 4, 8, 2, 3, 3, 2, 2, 6010);
  CheckTransposeConvBias(kTfLiteSame, 2, 8, 5, 7, 2, 2, 2, 2, 6020);
}

TEST(MediaPipeOpsTest, Convolution2DTransposeBiasValid) {
  CheckTransposeConvBias(kTfLiteValid, 3, 5, 3, 4, 3, 3, 2, 2, 6100);
  CheckTransposeConvBias(kTfLiteValid, 4, 3, 17, 2, 2, 5, 3, 2, 6110);
}

TEST(MediaPipeOpsTest, Convolution2DTransposeBiasSameOddInputOrStride3FollowsMediaPipeOutputSize) {
  // MediaPipe: odd input 3x5, stride 2, k 4: P = 4 - 0 - 1 = 3 per axis, so the
  // output is 2*2 + 4 - 3 = 5 by 2*4 + 4 - 3 = 9 (not 6x10), padding before 1.
  CheckTransposeConvBias(kTfLiteSame, 3, 5, 2, 3, 4, 4, 2, 2, 6200);
  // Stride 3, input 4, k 3: P = 3 - 0 - 1 = 2, output 3*3 + 3 - 2 = 10 (not 12).
  CheckTransposeConvBias(kTfLiteSame, 4, 4, 3, 2, 3, 3, 3, 3, 6210);
}

using MediaPipeTransposeConvGpuTest = testing::DelegateTest;

TEST_P(MediaPipeTransposeConvGpuTest, MatchesTheCpu) {
  for (auto [padding, out] : {std::pair{kTfLiteSame, Shape{1, 8, 9, 3}}, std::pair{kTfLiteValid, Shape{1, 10, 12, 3}}}) {
    testing::OneOp g;
    const int x = g.Input({1, 4, 5, 6});
    g.Out(g.Op(OpKind::kCustom, CustomAttributes{"Convolution2DTransposeBias", RawInts({padding, 2, 2})},
               {x, g.Const({3, 4, 4, 6}, 0.2f), g.Const({3})}, {out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

// Options the interpreter did not decode (a program's own kernel took the
// name) leave the node to that kernel.
TEST_P(MediaPipeTransposeConvGpuTest, UndecodedOptionsStayOnTheCpu) {
  testing::OneOp g;
  const int x = g.Input({1, 4, 5, 6});
  g.Out(g.Op(OpKind::kCustom, CustomAttributes{"Convolution2DTransposeBias", RawInts({kTfLiteSame, 2, 2})},
             {x, g.Const({3, 4, 4, 6}, 0.2f), g.Const({3})}, {{1, 8, 9, 3}}));
  const NodeSupport support = delegate_->IsNodeSupported(g.b.Build(), 0);
  EXPECT_FALSE(support.supported);
  EXPECT_THAT(support.reason, ::testing::HasSubstr("the program's own"));
}

INSTANTIATE_TEST_SUITE_P(Backends, MediaPipeTransposeConvGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::ops
