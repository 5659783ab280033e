// Unit tests of the CPU reference kernels (interpreter/kernels/*.cc) and of the
// MediaPipe custom ops (interpreter/mediapipe_ops.cc). Each test builds a one-
// or two-op graph, runs it through the Interpreter, and compares the outputs
// with values computed independently of the kernels: by hand for tiny cases
// (the arithmetic is in the comments), or by a naive loop in double written
// here from TFLite's (or MediaPipe's) reference definition.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "model/fp16.h"
#include "tests/graph_builder.h"
#include "tests/interpreter/single_op.h"

namespace mgd {
namespace {

using mgd::testing::GraphBuilder;
using ::testing::HasSubstr;
using namespace mgd::testing::single_op;  // NOLINT(google-build-using-namespace): the tests' vocabulary

// ---------------------------------------------------------------------------
// Naive references (double), written from TFLite's reference kernels.
// ---------------------------------------------------------------------------

// TFLite's ComputeOutSize: SAME ceil(in / s), VALID ceil((in - eff + 1) / s).
int OutSize(Padding padding, int in, int k, int s, int d = 1) {
  const int eff = (k - 1) * d + 1;
  const double v = padding == Padding::kSame ? std::ceil(static_cast<double>(in) / s)
                                             : std::ceil(static_cast<double>(in - eff + 1) / s);
  return std::max(0, static_cast<int>(v));
}

// TFLite's ComputePadding: half the total padding, rounded down, before.
int PadBefore(int in, int k, int s, int d, int out) {
  const int eff = (k - 1) * d + 1;
  return std::max(0, ((out - 1) * s + eff - in) / 2);
}

double ApplyActivation(Activation a, double v) {
  switch (a) {
    case Activation::kRelu: return std::max(v, 0.0);
    case Activation::kRelu6: return std::min(std::max(v, 0.0), 6.0);
    case Activation::kReluN1To1: return std::min(std::max(v, -1.0), 1.0);
    case Activation::kTanh: return std::tanh(v);
    default: return v;
  }
}

// NHWC element offset.
size_t At(const Shape& s, int b, int y, int x, int c) {
  return static_cast<size_t>(((static_cast<int64_t>(b) * s[1] + y) * s[2] + x) * s[3] + c);
}

struct ConvCase {
  int n, h, w, ci, co, kh, kw;
  int sh, sw;
  int dh = 1, dw = 1;
  Padding padding = Padding::kSame;
  int groups = 1;
  Activation activation = Activation::kNone;
  bool bias = true;
};

// Direct convolution: out[b,oy,ox,o] = bias[o] + sum x[b,iy,ix,g*cig+c] * w[o,ky,kx,c].
std::vector<double> RefConv2d(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias, Shape* out_shape) {
  const int oh = OutSize(c.padding, c.h, c.kh, c.sh, c.dh), ow = OutSize(c.padding, c.w, c.kw, c.sw, c.dw);
  const int ph = PadBefore(c.h, c.kh, c.sh, c.dh, oh), pw = PadBefore(c.w, c.kw, c.sw, c.dw, ow);
  const int cig = c.ci / c.groups, cog = c.co / c.groups;
  const Shape xs{c.n, c.h, c.w, c.ci}, ws{c.co, c.kh, c.kw, cig};
  *out_shape = {c.n, oh, ow, c.co};
  std::vector<double> out;
  for (int b = 0; b < c.n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int o = 0; o < c.co; ++o) {
          const int g = o / cog;
          double acc = c.bias ? bias[static_cast<size_t>(o)] : 0.0;
          for (int ky = 0; ky < c.kh; ++ky)
            for (int kx = 0; kx < c.kw; ++kx) {
              const int iy = oy * c.sh - ph + ky * c.dh, ix = ox * c.sw - pw + kx * c.dw;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              for (int k = 0; k < cig; ++k) {
                acc += static_cast<double>(x[At(xs, b, iy, ix, g * cig + k)]) * w[At(ws, o, ky, kx, k)];
              }
            }
          out.push_back(ApplyActivation(c.activation, acc));
        }
  return out;
}

// Runs CONV_2D on random data for `c` and compares with RefConv2d.
void CheckConv2d(const ConvCase& c, uint32_t seed, float range = 1.0f) {
  SCOPED_TRACE(::testing::Message() << "conv " << c.n << "x" << c.h << "x" << c.w << "x" << c.ci << " -> " << c.co
                                    << " k" << c.kh << "x" << c.kw << " s" << c.sh << "," << c.sw << " d" << c.dh << ","
                                    << c.dw << " groups " << c.groups
                                    << (c.padding == Padding::kSame ? " SAME" : " VALID"));
  const Shape xs{c.n, c.h, c.w, c.ci}, ws{c.co, c.kh, c.kw, c.ci / c.groups};
  const auto x = Random(Count(xs), seed, -range, range);
  const auto w = Random(Count(ws), seed + 1, -range, range);
  const auto bias = Random(static_cast<size_t>(c.co), seed + 2, -range, range);
  Shape out_shape;
  const auto expected = RefConv2d(c, x, w, bias, &out_shape);
  Conv2dAttributes a{.padding = c.padding,
                     .stride_w = c.sw,
                     .stride_h = c.sh,
                     .dilation_w = c.dw,
                     .dilation_h = c.dh,
                     .activation = c.activation};
  const auto actual =
      RunSingleOp(OpKind::kConv2d, a, {In(xs, x), Const(ws, w), c.bias ? Const({c.co}, bias) : Omitted()}, out_shape);
  ExpectClose(actual, expected);
}

// ---------------------------------------------------------------------------
// CONV_2D
// ---------------------------------------------------------------------------

TEST(Conv2dTest, TinyValidByHand) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]], bias 0.5, VALID stride 1:
  // (0,0): 1*1+2*2+4*3+5*4 = 37 -> 37.5   (0,1): 2+6+15+24 = 47 -> 47.5
  // (1,0): 4+10+21+32 = 67 -> 67.5        (1,1): 5+12+24+36 = 77 -> 77.5
  const auto out = RunSingleOp(
      OpKind::kConv2d, Conv2dAttributes{.padding = Padding::kValid},
      {In({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), Const({1, 2, 2, 1}, {1, 2, 3, 4}), Const({1}, {0.5f})},
      {1, 2, 2, 1});
  ExpectClose(out, {37.5, 47.5, 67.5, 77.5});
}

TEST(Conv2dTest, TinySamePaddingByHand) {
  // x = [[1,2],[3,4]], w 3x3 all ones, SAME stride 1 (pad 1 each side): every
  // output sums the whole 2x2 input = 10, no bias.
  const auto out =
      RunSingleOp(OpKind::kConv2d, Conv2dAttributes{},
                  {In({1, 2, 2, 1}, {1, 2, 3, 4}), Const({1, 3, 3, 1}, std::vector<float>(9, 1.0f))}, {1, 2, 2, 1});
  ExpectClose(out, {10, 10, 10, 10});
}

TEST(Conv2dTest, MatchesDirectLoopOnOddShapesStridesAndPadding) {
  const ConvCase cases[] = {
      {.n = 1, .h = 7, .w = 5, .ci = 3, .co = 5, .kh = 3, .kw = 3, .sh = 1, .sw = 1},
      {.n = 2, .h = 6, .w = 9, .ci = 17, .co = 7, .kh = 2, .kw = 3, .sh = 2, .sw = 1, .padding = Padding::kValid},
      {.n = 1, .h = 9, .w = 8, .ci = 5, .co = 13, .kh = 3, .kw = 2, .sh = 3, .sw = 2},
      {.n = 1, .h = 10, .w = 11, .ci = 1, .co = 1, .kh = 5, .kw = 5, .sh = 3, .sw = 3, .padding = Padding::kValid},
      {.n = 1, .h = 8, .w = 8, .ci = 4, .co = 8, .kh = 1, .kw = 1, .sh = 2, .sw = 2},
      {.n = 1, .h = 4, .w = 6, .ci = 6, .co = 3, .kh = 4, .kw = 4, .sh = 2, .sw = 3},
      {.n = 1, .h = 5, .w = 5, .ci = 2, .co = 9, .kh = 5, .kw = 3, .sh = 1, .sw = 2, .padding = Padding::kValid},
  };
  uint32_t seed = 100;
  for (const ConvCase& c : cases) CheckConv2d(c, seed += 10);
}

TEST(Conv2dTest, DilationMatchesDirectLoop) {
  const ConvCase cases[] = {
      {.n = 1, .h = 9, .w = 7, .ci = 3, .co = 4, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2},
      {.n = 1,
       .h = 10,
       .w = 11,
       .ci = 5,
       .co = 6,
       .kh = 3,
       .kw = 2,
       .sh = 1,
       .sw = 1,
       .dh = 3,
       .dw = 2,
       .padding = Padding::kValid},
      {.n = 2, .h = 8, .w = 9, .ci = 7, .co = 3, .kh = 2, .kw = 3, .sh = 2, .sw = 1, .dh = 2, .dw = 3},
  };
  uint32_t seed = 200;
  for (const ConvCase& c : cases) CheckConv2d(c, seed += 10);
}

TEST(Conv2dTest, GroupedConvolutionMatchesDirectLoop) {
  const ConvCase cases[] = {
      // 6 input channels, filter depth 2: 3 groups of 3 output channels.
      {.n = 1, .h = 7, .w = 6, .ci = 6, .co = 9, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .groups = 3},
      // Filter depth 1: one group per input channel, 2 outputs each.
      {.n = 1,
       .h = 5,
       .w = 8,
       .ci = 5,
       .co = 10,
       .kh = 3,
       .kw = 2,
       .sh = 2,
       .sw = 1,
       .padding = Padding::kValid,
       .groups = 5},
      // 2 groups of 8 input and 3 output channels, dilated.
      {.n = 1, .h = 9, .w = 9, .ci = 16, .co = 6, .kh = 2, .kw = 2, .sh = 1, .sw = 2, .dh = 2, .dw = 2, .groups = 2},
  };
  uint32_t seed = 300;
  for (const ConvCase& c : cases) CheckConv2d(c, seed += 10);
}

TEST(Conv2dTest, WithoutBiasMatchesDirectLoop) {
  CheckConv2d({.n = 1, .h = 6, .w = 7, .ci = 3, .co = 5, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .bias = false}, 400);
}

// Values in [-2, 2] over 3x3x3 taps: outputs spread over roughly [-20, 20], so
// every clamp bound is crossed.
ConvCase ActivationCase(Activation a) {
  return {.n = 1, .h = 6, .w = 5, .ci = 3, .co = 4, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .activation = a};
}

TEST(Conv2dTest, FusedReluMatchesDirectLoop) { CheckConv2d(ActivationCase(Activation::kRelu), 500, 2.0f); }
TEST(Conv2dTest, FusedRelu6MatchesDirectLoop) { CheckConv2d(ActivationCase(Activation::kRelu6), 510, 2.0f); }
TEST(Conv2dTest, FusedReluN1To1MatchesDirectLoop) { CheckConv2d(ActivationCase(Activation::kReluN1To1), 520, 2.0f); }
TEST(Conv2dTest, FusedTanhMatchesDirectLoop) { CheckConv2d(ActivationCase(Activation::kTanh), 530, 2.0f); }

TEST(Conv2dTest, FusedRelu6ClampsByHand) {
  // 1x1 conv with weight 1: y = relu6(x + bias 0) for x = -3, 2, 6, 9 -> 0, 2, 6, 6.
  const auto out =
      RunSingleOp(OpKind::kConv2d, Conv2dAttributes{.activation = Activation::kRelu6},
                  {In({1, 1, 4, 1}, {-3, 2, 6, 9}), Const({1, 1, 1, 1}, {1}), Const({1}, {0})}, {1, 1, 4, 1});
  ExpectClose(out, {0, 2, 6, 6});
}

// ---------------------------------------------------------------------------
// DEPTHWISE_CONV_2D
// ---------------------------------------------------------------------------

// out[b,oy,ox,o] = bias[o] + sum x[b,iy,ix,o/m] * w[0,ky,kx,o].
void CheckDepthwise(const ConvCase& c, int multiplier, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "depthwise " << c.h << "x" << c.w << "x" << c.ci << " m" << multiplier << " k"
                                    << c.kh << "x" << c.kw << " s" << c.sh << "," << c.sw << " d" << c.dh << "," << c.dw
                                    << (c.padding == Padding::kSame ? " SAME" : " VALID"));
  const int co = c.ci * multiplier;
  const Shape xs{c.n, c.h, c.w, c.ci}, ws{1, c.kh, c.kw, co};
  const auto x = Random(Count(xs), seed);
  const auto w = Random(Count(ws), seed + 1);
  const auto bias = Random(static_cast<size_t>(co), seed + 2);
  const int oh = OutSize(c.padding, c.h, c.kh, c.sh, c.dh), ow = OutSize(c.padding, c.w, c.kw, c.sw, c.dw);
  const int ph = PadBefore(c.h, c.kh, c.sh, c.dh, oh), pw = PadBefore(c.w, c.kw, c.sw, c.dw, ow);
  std::vector<double> expected;
  for (int b = 0; b < c.n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int o = 0; o < co; ++o) {
          double acc = c.bias ? bias[static_cast<size_t>(o)] : 0.0;
          for (int ky = 0; ky < c.kh; ++ky)
            for (int kx = 0; kx < c.kw; ++kx) {
              const int iy = oy * c.sh - ph + ky * c.dh, ix = ox * c.sw - pw + kx * c.dw;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              acc += static_cast<double>(x[At(xs, b, iy, ix, o / multiplier)]) * w[At(ws, 0, ky, kx, o)];
            }
          expected.push_back(ApplyActivation(c.activation, acc));
        }
  DepthwiseConv2dAttributes a{.padding = c.padding,
                              .stride_w = c.sw,
                              .stride_h = c.sh,
                              .dilation_w = c.dw,
                              .dilation_h = c.dh,
                              .depth_multiplier = multiplier,
                              .activation = c.activation};
  const auto actual = RunSingleOp(OpKind::kDepthwiseConv2d, a,
                                  {In(xs, x), Const(ws, w), c.bias ? Const({co}, bias) : Omitted()}, {c.n, oh, ow, co});
  ExpectClose(actual, expected);
}

TEST(DepthwiseConv2dTest, TinyMultiplier2ByHand) {
  // x 1x1x2x1 = [3, 5], w 1x1x1x2 = [2, -1], bias [1, 0]:
  // pixel 0: [3*2+1, 3*-1+0] = [7, -3]; pixel 1: [5*2+1, 5*-1] = [11, -5].
  const auto out =
      RunSingleOp(OpKind::kDepthwiseConv2d, DepthwiseConv2dAttributes{.depth_multiplier = 2},
                  {In({1, 1, 2, 1}, {3, 5}), Const({1, 1, 1, 2}, {2, -1}), Const({2}, {1, 0})}, {1, 1, 2, 2});
  ExpectClose(out, {7, -3, 11, -5});
}

TEST(DepthwiseConv2dTest, Multiplier1MatchesDirectLoop) {
  CheckDepthwise({.n = 1, .h = 7, .w = 6, .ci = 17, .co = 17, .kh = 3, .kw = 3, .sh = 1, .sw = 1}, 1, 600);
  CheckDepthwise(
      {.n = 2, .h = 9, .w = 10, .ci = 5, .co = 5, .kh = 5, .kw = 3, .sh = 2, .sw = 3, .padding = Padding::kValid}, 1,
      610);
  CheckDepthwise({.n = 1,
                  .h = 8,
                  .w = 8,
                  .ci = 3,
                  .co = 3,
                  .kh = 3,
                  .kw = 3,
                  .sh = 2,
                  .sw = 2,
                  .activation = Activation::kRelu6,
                  .bias = false},
                 1, 620);
}

TEST(DepthwiseConv2dTest, Multiplier2MatchesDirectLoop) {
  CheckDepthwise({.n = 1, .h = 6, .w = 7, .ci = 3, .co = 6, .kh = 3, .kw = 3, .sh = 1, .sw = 1}, 2, 700);
  CheckDepthwise(
      {.n = 1, .h = 11, .w = 5, .ci = 7, .co = 14, .kh = 2, .kw = 4, .sh = 3, .sw = 1, .padding = Padding::kValid}, 2,
      710);
}

TEST(DepthwiseConv2dTest, DilationMatchesDirectLoop) {
  CheckDepthwise({.n = 1, .h = 9, .w = 9, .ci = 5, .co = 5, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2}, 1,
                 800);
  CheckDepthwise({.n = 1,
                  .h = 10,
                  .w = 7,
                  .ci = 2,
                  .co = 4,
                  .kh = 3,
                  .kw = 2,
                  .sh = 2,
                  .sw = 1,
                  .dh = 3,
                  .dw = 2,
                  .padding = Padding::kValid},
                 2, 810);
}

// ---------------------------------------------------------------------------
// TRANSPOSE_CONV (inputs: output_shape, weights OHWI, input, optional bias)
// ---------------------------------------------------------------------------

// TFLite's reference TransposeConv: each input pixel scatters into the output,
// with padding computed as for a forward conv from the output (its declared
// size) back to the input.
std::vector<double> RefTransposeConv(const Shape& xs, const std::vector<float>& x, const Shape& ws,
                                     const std::vector<float>& w, const std::vector<float>* bias, const Shape& ys,
                                     int sh, int sw, int pad_h, int pad_w) {
  std::vector<double> y(Count(ys), 0.0);
  for (int b = 0; b < xs[0]; ++b)
    for (int iy = 0; iy < xs[1]; ++iy)
      for (int ix = 0; ix < xs[2]; ++ix)
        for (int c = 0; c < xs[3]; ++c)
          for (int ky = 0; ky < ws[1]; ++ky)
            for (int kx = 0; kx < ws[2]; ++kx)
              for (int o = 0; o < ws[0]; ++o) {
                const int oy = iy * sh - pad_h + ky, ox = ix * sw - pad_w + kx;
                if (oy < 0 || oy >= ys[1] || ox < 0 || ox >= ys[2]) continue;
                y[At(ys, b, oy, ox, o)] += static_cast<double>(x[At(xs, b, iy, ix, c)]) * w[At(ws, o, ky, kx, c)];
              }
  if (bias) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += (*bias)[i % static_cast<size_t>(ys[3])];
  }
  return y;
}

void CheckTransposeConv(Padding padding, int n, int h, int w, int ci, int co, int kh, int kw, int sh, int sw,
                        bool with_bias, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "transpose conv " << h << "x" << w << "x" << ci << " -> " << co << " k" << kh
                                    << "x" << kw << " s" << sh << "," << sw
                                    << (padding == Padding::kSame ? " SAME" : " VALID"));
  // The usual output sizes: SAME in*s, VALID (in-1)*s + k.
  const int oh = padding == Padding::kSame ? h * sh : (h - 1) * sh + kh;
  const int ow = padding == Padding::kSame ? w * sw : (w - 1) * sw + kw;
  const Shape xs{n, h, w, ci}, ws{co, kh, kw, ci}, ys{n, oh, ow, co};
  const auto x = Random(Count(xs), seed);
  const auto wt = Random(Count(ws), seed + 1);
  const auto bias = Random(static_cast<size_t>(co), seed + 2);
  const int pad_h = PadBefore(oh, kh, sh, 1, OutSize(padding, oh, kh, sh));
  const int pad_w = PadBefore(ow, kw, sw, 1, OutSize(padding, ow, kw, sw));
  const auto expected = RefTransposeConv(xs, x, ws, wt, with_bias ? &bias : nullptr, ys, sh, sw, pad_h, pad_w);
  const auto actual = RunSingleOp(
      OpKind::kTransposeConv, TransposeConvAttributes{.padding = padding, .stride_w = sw, .stride_h = sh},
      {Ints({4}, {ys[0], ys[1], ys[2], ys[3]}), Const(ws, wt), In(xs, x), with_bias ? Const({co}, bias) : Omitted()},
      ys);
  ExpectClose(actual, expected);
}

TEST(TransposeConvTest, Stride2Kernel2ValidByHand) {
  // Stride 2 with a 2x2 kernel: every input pixel paints its own 2x2 block,
  // out[2i+dy][2j+dx] = x[i][j] * w[dy][dx]; x = [[1,2],[3,4]], w = [[1,2],[3,4]],
  // bias 0.5. VALID: pad = ((2-1)*2 + 2 - 4) / 2 = 0.
  const auto out = RunSingleOp(
      OpKind::kTransposeConv, TransposeConvAttributes{.padding = Padding::kValid, .stride_w = 2, .stride_h = 2},
      {Ints({4}, {1, 4, 4, 1}), Const({1, 2, 2, 1}, {1, 2, 3, 4}), In({1, 2, 2, 1}, {1, 2, 3, 4}), Const({1}, {0.5f})},
      {1, 4, 4, 1});
  ExpectClose(out, {1.5, 2.5, 2.5, 4.5,  //
                    3.5, 4.5, 6.5, 8.5,  //
                    3.5, 6.5, 4.5, 8.5,  //
                    9.5, 12.5, 12.5, 16.5});
}

TEST(TransposeConvTest, SameStride2MatchesScatterLoop) {
  CheckTransposeConv(Padding::kSame, 1, 4, 5, 3, 5, 3, 3, 2, 2, true, 900);
  CheckTransposeConv(Padding::kSame, 2, 3, 3, 6, 2, 4, 4, 2, 2, true, 910);
  CheckTransposeConv(Padding::kSame, 1, 5, 4, 17, 7, 2, 3, 2, 1, true, 920);
}

TEST(TransposeConvTest, ValidStride2MatchesScatterLoop) {
  CheckTransposeConv(Padding::kValid, 1, 4, 5, 3, 5, 3, 3, 2, 2, true, 1000);
  CheckTransposeConv(Padding::kValid, 1, 3, 6, 1, 3, 2, 5, 2, 2, true, 1010);
}

TEST(TransposeConvTest, Stride3MatchesScatterLoop) {
  CheckTransposeConv(Padding::kSame, 1, 3, 4, 5, 4, 3, 3, 3, 3, true, 1100);
  CheckTransposeConv(Padding::kSame, 1, 4, 3, 2, 3, 5, 4, 3, 3, true, 1110);
  CheckTransposeConv(Padding::kValid, 1, 3, 4, 5, 4, 3, 2, 3, 3, true, 1120);
  CheckTransposeConv(Padding::kValid, 1, 2, 5, 3, 3, 5, 4, 3, 2, true, 1130);
}

TEST(TransposeConvTest, WithoutBiasMatchesScatterLoop) {
  CheckTransposeConv(Padding::kSame, 1, 4, 4, 3, 2, 3, 3, 2, 2, false, 1200);
  CheckTransposeConv(Padding::kValid, 1, 3, 5, 4, 5, 2, 3, 3, 2, false, 1210);
}

// ---------------------------------------------------------------------------
// FULLY_CONNECTED
// ---------------------------------------------------------------------------

TEST(FullyConnectedTest, TinyByHand) {
  // x = [[1, 2, 3], [-1, 0, 1]], w = [[1, 0, -1], [2, 1, 0]], bias = [0.5, -1]:
  // row 0: [1-3+0.5, 2+2-1] = [-1.5, 3]; row 1: [-1-1+0.5, -2+0-1] = [-1.5, -3].
  const auto out = RunSingleOp(
      OpKind::kFullyConnected, FullyConnectedAttributes{},
      {In({2, 3}, {1, 2, 3, -1, 0, 1}), Const({2, 3}, {1, 0, -1, 2, 1, 0}), Const({2}, {0.5f, -1})}, {2, 2});
  ExpectClose(out, {-1.5, 3, -1.5, -3});
}

std::vector<double> RefFullyConnected(const std::vector<float>& x, const std::vector<float>& w,
                                      const std::vector<float>& bias, int units, int depth, Activation a) {
  std::vector<double> out;
  const int rows = static_cast<int>(x.size()) / depth;
  for (int r = 0; r < rows; ++r)
    for (int u = 0; u < units; ++u) {
      double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(u)];
      for (int k = 0; k < depth; ++k) {
        acc += static_cast<double>(x[static_cast<size_t>(r * depth + k)]) * w[static_cast<size_t>(u * depth + k)];
      }
      out.push_back(ApplyActivation(a, acc));
    }
  return out;
}

TEST(FullyConnectedTest, KeepNumDimsFalseFlattensLeadingDims) {
  // [2,3,5] x [7,5]^T -> [6, 7].
  const auto x = Random(30, 1300), w = Random(35, 1301), bias = Random(7, 1302);
  const auto out = RunSingleOp(OpKind::kFullyConnected, FullyConnectedAttributes{.keep_num_dims = false},
                               {In({2, 3, 5}, x), Const({7, 5}, w), Const({7}, bias)}, {6, 7});
  ExpectClose(out, RefFullyConnected(x, w, bias, 7, 5, Activation::kNone));
}

TEST(FullyConnectedTest, KeepNumDimsTrueKeepsLeadingDims) {
  // [2,3,5] x [7,5]^T -> [2, 3, 7], with a fused RELU and no bias.
  const auto x = Random(30, 1310), w = Random(35, 1311);
  const auto out = RunSingleOp(OpKind::kFullyConnected,
                               FullyConnectedAttributes{.activation = Activation::kRelu, .keep_num_dims = true},
                               {In({2, 3, 5}, x), Const({7, 5}, w), Omitted()}, {2, 3, 7});
  ExpectClose(out, RefFullyConnected(x, w, {}, 7, 5, Activation::kRelu));
}

TEST(FullyConnectedTest, KeepNumDimsMismatchIsAnError) {
  // keep_num_dims = true must give [2,3,7]; declaring [2,21] is rejected.
  const absl::Status s =
      CreateStatus(OpKind::kFullyConnected, FullyConnectedAttributes{.keep_num_dims = true},
                   {In({2, 3, 5}, {}), Const({7, 5}, Random(35, 1)), Const({7}, Random(7, 2))}, {{2, 21}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("has shape"));
}

// ---------------------------------------------------------------------------
// ADD / SUB / MUL / DIV / MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / PRELU
// ---------------------------------------------------------------------------

// numpy broadcasting, written as a plain index decomposition: the shapes are
// right-aligned, a dimension of 1 repeats.
template <typename F>
std::vector<double> RefBroadcast(const Shape& as, const std::vector<float>& a, const Shape& bs,
                                 const std::vector<float>& b, F f, Shape* out_shape) {
  const size_t rank = std::max(as.size(), bs.size());
  Shape pa(rank - as.size(), 1), pb(rank - bs.size(), 1);
  pa.insert(pa.end(), as.begin(), as.end());
  pb.insert(pb.end(), bs.begin(), bs.end());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = std::max(pa[d], pb[d]);
  *out_shape = out;
  std::vector<double> y;
  const int64_t n = NumElements(out);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      const int64_t idx = rest % out[ud];
      rest /= out[ud];
      if (pa[ud] != 1) ia += idx * sa;
      if (pb[ud] != 1) ib += idx * sb;
      sa *= pa[ud];
      sb *= pb[ud];
    }
    y.push_back(f(static_cast<double>(a[static_cast<size_t>(ia)]), static_cast<double>(b[static_cast<size_t>(ib)])));
  }
  return y;
}

double RefBinary(OpKind op, double p, double q) {
  switch (op) {
    case OpKind::kAdd: return p + q;
    case OpKind::kSub: return p - q;
    case OpKind::kMul: return p * q;
    case OpKind::kDiv: return p / q;
    case OpKind::kMaximum: return std::max(p, q);
    case OpKind::kMinimum: return std::min(p, q);
    case OpKind::kSquaredDifference: return (p - q) * (p - q);
    case OpKind::kPrelu: return p >= 0 ? p : p * q;
    default: return std::nan("");
  }
}

// Runs `op` on random [as] x [bs] (the second operand a constant when
// `b_constant`) and compares with RefBroadcast.
void CheckBinary(OpKind op, Activation act, const Shape& as, const Shape& bs, uint32_t seed, bool b_constant = false) {
  SCOPED_TRACE(::testing::Message() << OpName(op) << " " << ShapeToString(as) << " x " << ShapeToString(bs) << " "
                                    << ActivationName(act));
  const auto a = Random(Count(as), seed, -3.0f, 3.0f);
  auto b = Random(Count(bs), seed + 1, -3.0f, 3.0f);
  if (op == OpKind::kDiv) {
    for (float& v : b) v = v < 0 ? v - 0.5f : v + 0.5f;  // away from 0
  }
  Shape out_shape;
  const auto expected = RefBroadcast(
      as, a, bs, b, [&](double p, double q) { return ApplyActivation(act, RefBinary(op, p, q)); }, &out_shape);
  Attributes attrs;
  if (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv) {
    attrs = ElementwiseAttributes{act};
  }
  const auto actual = RunSingleOp(op, attrs, {In(as, a), b_constant ? Const(bs, b) : In(bs, b)}, out_shape);
  ExpectClose(actual, expected);
}

// The broadcast patterns every arithmetic op is checked on.
void CheckBroadcastPatterns(OpKind op, uint32_t seed) {
  CheckBinary(op, Activation::kNone, {1, 3, 5, 7}, {1, 3, 5, 7}, seed);             // same shape
  CheckBinary(op, Activation::kNone, {1, 3, 5, 7}, {1, 1, 1, 7}, seed + 10, true);  // per-channel
  CheckBinary(op, Activation::kNone, {1, 1, 1, 7}, {1, 3, 5, 7}, seed + 20);        // per-channel, first operand
  CheckBinary(op, Activation::kNone, {1, 6, 3}, {1}, seed + 30, true);              // [1,N,3] x [1]
  CheckBinary(op, Activation::kNone, {1}, {1, 6, 3}, seed + 40);                    // [1] x [1,N,3]
  CheckBinary(op, Activation::kNone, {2, 5}, {}, seed + 50, true);                  // tensor x scalar
  CheckBinary(op, Activation::kNone, {}, {2, 5}, seed + 60);                        // scalar x tensor
  CheckBinary(op, Activation::kNone, {2, 1, 3, 1}, {1, 4, 1, 5}, seed + 70);        // general 4-D
  CheckBinary(op, Activation::kNone, {1, 4, 1, 5}, {2, 1, 3, 1}, seed + 80);        // and the other way
  CheckBinary(op, Activation::kNone, {4, 1, 5}, {2, 1, 3, 1}, seed + 90);           // different ranks
  CheckBinary(op, Activation::kNone, {2, 3, 1, 6}, {3, 4, 1}, seed + 100);          // different ranks
}

TEST(BinaryTest, AddChannelBroadcastByHand) {
  // [[1,2,3],[4,5,6]] + [10,20,30] = [[11,22,33],[14,25,36]].
  const auto out = RunSingleOp(OpKind::kAdd, ElementwiseAttributes{},
                               {In({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}), Const({1, 1, 1, 3}, {10, 20, 30})}, {1, 1, 2, 3});
  ExpectClose(out, {11, 22, 33, 14, 25, 36});
}

TEST(BinaryTest, SubScalarMinusTensorByHand) {
  // 10 - [1, 2.5, -3] = [9, 7.5, 13] (the scalar is the first operand).
  const auto out =
      RunSingleOp(OpKind::kSub, ElementwiseAttributes{}, {Const({}, {10}), In({1, 3}, {1, 2.5f, -3})}, {1, 3});
  ExpectClose(out, {9, 7.5, 13});
}

TEST(BinaryTest, DivGeneral4dBroadcastByHand) {
  // a [2,1] = [[6],[12]] / b [1,3] = [[1,2,3]] -> [[6,3,2],[12,6,4]].
  const auto out =
      RunSingleOp(OpKind::kDiv, ElementwiseAttributes{}, {In({2, 1}, {6, 12}), In({1, 3}, {1, 2, 3})}, {2, 3});
  ExpectClose(out, {6, 3, 2, 12, 6, 4});
}

TEST(BinaryTest, AddMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kAdd, 2000); }
TEST(BinaryTest, SubMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kSub, 2200); }
TEST(BinaryTest, MulMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMul, 2400); }
TEST(BinaryTest, DivMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kDiv, 2600); }
TEST(BinaryTest, MaximumMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMaximum, 2800); }
TEST(BinaryTest, MinimumMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMinimum, 3000); }
TEST(BinaryTest, SquaredDifferenceMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kSquaredDifference, 3200); }

TEST(BinaryTest, FusedActivationsMatchBroadcastLoop) {
  CheckBinary(OpKind::kAdd, Activation::kRelu, {1, 3, 4, 5}, {1, 1, 1, 5}, 3400, true);
  CheckBinary(OpKind::kAdd, Activation::kRelu6, {2, 1, 3, 1}, {1, 4, 1, 5}, 3410);
  CheckBinary(OpKind::kSub, Activation::kReluN1To1, {1, 6, 3}, {1}, 3420, true);
  CheckBinary(OpKind::kMul, Activation::kRelu6, {1, 4, 1, 5}, {2, 1, 3, 1}, 3430);
  CheckBinary(OpKind::kMul, Activation::kTanh, {2, 5}, {}, 3440, true);
  CheckBinary(OpKind::kDiv, Activation::kRelu, {1, 3, 4, 5}, {1, 3, 4, 5}, 3450);
  CheckBinary(OpKind::kDiv, Activation::kReluN1To1, {}, {2, 5}, 3460);
}

TEST(BinaryTest, AddFusedRelu6ByHand) {
  // relu6([-5, 1, 4, 8] + 1) = relu6([-4, 2, 5, 9]) = [0, 2, 5, 6].
  const auto out = RunSingleOp(OpKind::kAdd, ElementwiseAttributes{Activation::kRelu6},
                               {In({4}, {-5, 1, 4, 8}), Const({1}, {1})}, {4});
  ExpectClose(out, {0, 2, 5, 6});
}

TEST(BinaryTest, MaximumMinimumSquaredDifferenceByHand) {
  // a = [1, -2, 3, 0], b = [0.5] broadcast:
  // max = [1, 0.5, 3, 0.5]; min = [0.5, -2, 0.5, 0]; (a-b)^2 = [0.25, 6.25, 6.25, 0.25].
  const std::vector<Operand> ops = {In({4}, {1, -2, 3, 0}), Const({1}, {0.5f})};
  ExpectClose(RunSingleOp(OpKind::kMaximum, {}, ops, {4}), {1, 0.5, 3, 0.5});
  ExpectClose(RunSingleOp(OpKind::kMinimum, {}, ops, {4}), {0.5, -2, 0.5, 0});
  ExpectClose(RunSingleOp(OpKind::kSquaredDifference, {}, ops, {4}), {0.25, 6.25, 6.25, 0.25});
}

TEST(BinaryTest, PreluChannelAlphaByHand) {
  // x [1,1,2,3] = [[-1, 2, -3], [4, -5, -6]], alpha [1,1,3] = [0.1, 0.2, 0.3]:
  // [[-0.1, 2, -0.9], [4, -1.0, -1.8]].
  const auto out =
      RunSingleOp(OpKind::kPrelu, {}, {In({1, 1, 2, 3}, {-1, 2, -3, 4, -5, -6}), Const({1, 1, 3}, {0.1f, 0.2f, 0.3f})},
                  {1, 1, 2, 3});
  ExpectClose(out, {-0.1, 2, -0.9, 4, -1.0, -1.8});
}

TEST(BinaryTest, PreluChannelAlphaMatchesLoop) {
  CheckBinary(OpKind::kPrelu, Activation::kNone, {1, 5, 6, 7}, {1, 1, 7}, 3500, true);
  CheckBinary(OpKind::kPrelu, Activation::kNone, {2, 3, 4, 13}, {1, 1, 13}, 3510, true);
}

TEST(BinaryTest, IncompatibleShapesAreAnError) {
  const absl::Status s =
      CreateStatus(OpKind::kAdd, ElementwiseAttributes{}, {In({1, 2, 3}, {}), In({1, 4, 3}, {})}, {{1, 4, 3}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("do not broadcast"));
}

// ---------------------------------------------------------------------------
// Unary activations
// ---------------------------------------------------------------------------

// A grid of values over [lo, hi] plus a few special points.
std::vector<float> Grid(float lo, float hi, int steps, std::vector<float> extra = {}) {
  std::vector<float> v;
  for (int i = 0; i <= steps; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps));
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

template <typename F>
void CheckUnary(OpKind op, const std::vector<float>& x, F f, Attributes attrs = {}) {
  SCOPED_TRACE(OpName(op));
  std::vector<double> expected;
  for (float v : x) expected.push_back(f(static_cast<double>(v)));
  const Shape shape{1, static_cast<int32_t>(x.size())};
  ExpectClose(RunSingleOp(op, attrs, {In(shape, x)}, shape), expected);
}

const std::vector<float> kClampInputs = {-7, -1.5f, -1, -0.5f, 0, 0.5f, 1, 3, 6, 7.5f};

TEST(UnaryTest, ReluByHand) {
  const auto out = RunSingleOp(OpKind::kRelu, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {0, 0, 0, 0, 0, 0.5, 1, 3, 6, 7.5});
}

TEST(UnaryTest, Relu6ByHand) {
  const auto out = RunSingleOp(OpKind::kRelu6, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {0, 0, 0, 0, 0, 0.5, 1, 3, 6, 6});
}

TEST(UnaryTest, ReluN1To1ByHand) {
  const auto out = RunSingleOp(OpKind::kReluN1To1, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {-1, -1, -1, -0.5, 0, 0.5, 1, 1, 1, 1});
}

TEST(UnaryTest, LeakyReluByHand) {
  // alpha 0.3: [-2, -0.5, 0, 4] -> [-0.6, -0.15, 0, 4].
  const auto out = RunSingleOp(OpKind::kLeakyRelu, LeakyReluAttributes{0.3f}, {In({4}, {-2, -0.5f, 0, 4})}, {4});
  ExpectClose(out, {-0.6, -0.15, 0, 4});
}

TEST(UnaryTest, LogisticMatchesFormula) {
  CheckUnary(OpKind::kLogistic, Grid(-20, 20, 97, {0}), [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

TEST(UnaryTest, TanhMatchesFormula) {
  CheckUnary(OpKind::kTanh, Grid(-10, 10, 97, {0, 1e-3f}), [](double v) { return std::tanh(v); });
}

TEST(UnaryTest, HardSwishMatchesFormula) {
  // x * relu6(x + 3) / 6 (mgd evaluates it in XNNPACK's order: tolerance).
  CheckUnary(OpKind::kHardSwish, Grid(-6, 6, 89, {-3, 3, 0, -2.9f, 2.9f}),
             [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
}

TEST(UnaryTest, ExpMatchesFormula) {
  CheckUnary(OpKind::kExp, Grid(-10, 10, 83, {0}), [](double v) { return std::exp(v); });
}

TEST(UnaryTest, RsqrtMatchesFormula) {
  CheckUnary(OpKind::kRsqrt, Grid(0.01f, 100, 91, {1, 4, 0.25f}), [](double v) { return 1.0 / std::sqrt(v); });
}

TEST(UnaryTest, EluMatchesFormula) {
  CheckUnary(OpKind::kElu, Grid(-8, 4, 79, {0, -1e-4f}), [](double v) { return v < 0 ? std::exp(v) - 1.0 : v; });
}

TEST(UnaryTest, LeakyReluMatchesFormula) {
  CheckUnary(
      OpKind::kLeakyRelu, Grid(-5, 5, 37), [](double v) { return v >= 0 ? v : 0.05 * v; }, LeakyReluAttributes{0.05f});
}

// ---------------------------------------------------------------------------
// SOFTMAX
// ---------------------------------------------------------------------------

TEST(SoftmaxTest, BetaHalfByHand) {
  // beta 0.5, x = [0, 2 ln 3]: exp(0.5 * x) = [1, 3] -> [0.25, 0.75].
  const auto out = RunSingleOp(OpKind::kSoftmax, SoftmaxAttributes{0.5f},
                               {In({1, 2}, {0, static_cast<float>(2 * std::log(3.0))})}, {1, 2});
  ExpectClose(out, {0.25, 0.75});
}

TEST(SoftmaxTest, BetaNotOneMatchesFormulaPerRow) {
  // Each row of the last dimension: exp(beta (x - max)) / sum.
  for (float beta : {0.3f, 2.5f}) {
    SCOPED_TRACE(beta);
    const Shape shape{2, 3, 7};
    const auto x = Random(Count(shape), 3600, -4, 4);
    std::vector<double> expected;
    for (size_t r = 0; r < 6; ++r) {
      const double mx =
          *std::max_element(x.begin() + static_cast<long>(r * 7), x.begin() + static_cast<long>(r * 7 + 7));
      double sum = 0;
      for (size_t i = 0; i < 7; ++i) sum += std::exp(static_cast<double>(beta) * (x[r * 7 + i] - mx));
      for (size_t i = 0; i < 7; ++i)
        expected.push_back(std::exp(static_cast<double>(beta) * (x[r * 7 + i] - mx)) / sum);
    }
    ExpectClose(RunSingleOp(OpKind::kSoftmax, SoftmaxAttributes{beta}, {In(shape, x)}, shape), expected);
  }
}

// ---------------------------------------------------------------------------
// AVERAGE_POOL_2D / MAX_POOL_2D
// ---------------------------------------------------------------------------

// TFLite's reference pooling: the window clipped to the input; the average
// divides by the number of in-bounds elements.
std::vector<double> RefPool(bool max, const Shape& xs, const std::vector<float>& x, Padding padding, int fh, int fw,
                            int sh, int sw, Activation act, Shape* out_shape) {
  const int oh = OutSize(padding, xs[1], fh, sh), ow = OutSize(padding, xs[2], fw, sw);
  const int ph = PadBefore(xs[1], fh, sh, 1, oh), pw = PadBefore(xs[2], fw, sw, 1, ow);
  *out_shape = {xs[0], oh, ow, xs[3]};
  std::vector<double> out;
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < xs[3]; ++c) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (int ky = 0; ky < fh; ++ky)
            for (int kx = 0; kx < fw; ++kx) {
              const int iy = oy * sh - ph + ky, ix = ox * sw - pw + kx;
              if (iy < 0 || iy >= xs[1] || ix < 0 || ix >= xs[2]) continue;
              const double v = x[At(xs, b, iy, ix, c)];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          out.push_back(ApplyActivation(act, max ? acc : acc / count));
        }
  return out;
}

void CheckPool(OpKind op, const Shape& xs, Padding padding, int fh, int fw, int sh, int sw, uint32_t seed,
               Activation act = Activation::kNone) {
  SCOPED_TRACE(::testing::Message() << OpName(op) << " " << ShapeToString(xs) << " f" << fh << "x" << fw << " s" << sh
                                    << "," << sw << (padding == Padding::kSame ? " SAME" : " VALID"));
  const auto x = Random(Count(xs), seed, -3, 3);
  Shape out_shape;
  const auto expected = RefPool(op == OpKind::kMaxPool2d, xs, x, padding, fh, fw, sh, sw, act, &out_shape);
  Pool2dAttributes a{
      .padding = padding, .stride_w = sw, .stride_h = sh, .filter_w = fw, .filter_h = fh, .activation = act};
  ExpectClose(RunSingleOp(op, a, {In(xs, x)}, out_shape), expected);
}

TEST(PoolTest, AveragePoolSameDividesByInBoundsCountByHand) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], 3x3 filter, stride 1, SAME (pad 1 all round):
  // corners average 4 elements, edges 6, the centre 9:
  // (0,0) (1+2+4+5)/4 = 3     (0,1) (1+..+6)/6 = 3.5      (0,2) (2+3+5+6)/4 = 4
  // (1,0) (1+2+4+5+7+8)/6 = 4.5  (1,1) 45/9 = 5  (1,2) (2+3+5+6+8+9)/6 = 5.5
  // (2,0) (4+5+7+8)/4 = 6     (2,1) (4+..+9)/6 = 6.5      (2,2) (5+6+8+9)/4 = 7
  const auto out = RunSingleOp(OpKind::kAveragePool2d, Pool2dAttributes{.filter_w = 3, .filter_h = 3},
                               {In({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, {1, 3, 3, 1});
  ExpectClose(out, {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
}

TEST(PoolTest, AveragePoolSameStride2PadsAtTheEndByHand) {
  // 3x3 input, 2x2 filter, stride 2, SAME: out 2x2, total padding 1, all after:
  // (0,0) (1+2+4+5)/4 = 3; (0,1) (3+6)/2 = 4.5; (1,0) (7+8)/2 = 7.5; (1,1) 9/1 = 9.
  const auto out =
      RunSingleOp(OpKind::kAveragePool2d, Pool2dAttributes{.stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2},
                  {In({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, {1, 2, 2, 1});
  ExpectClose(out, {3, 4.5, 7.5, 9});
}

TEST(PoolTest, AveragePoolMatchesWindowLoop) {
  CheckPool(OpKind::kAveragePool2d, {1, 7, 5, 3}, Padding::kSame, 3, 3, 2, 2, 4000);
  CheckPool(OpKind::kAveragePool2d, {2, 8, 9, 17}, Padding::kValid, 2, 3, 2, 3, 4010);
  CheckPool(OpKind::kAveragePool2d, {1, 10, 6, 5}, Padding::kSame, 4, 2, 3, 1, 4020);
  CheckPool(OpKind::kAveragePool2d, {1, 6, 6, 2}, Padding::kSame, 5, 5, 1, 1, 4030, Activation::kRelu);
  CheckPool(OpKind::kAveragePool2d, {1, 9, 7, 1}, Padding::kValid, 3, 3, 3, 3, 4040, Activation::kReluN1To1);
}

TEST(PoolTest, MaxPoolIgnoresPaddingByHand) {
  // All-negative 2x2 input, 3x3 filter, SAME: every window holds the whole
  // input, so the max is -1 everywhere (padding is not a 0).
  const auto out = RunSingleOp(OpKind::kMaxPool2d, Pool2dAttributes{.filter_w = 3, .filter_h = 3},
                               {In({1, 2, 2, 1}, {-1, -2, -3, -4})}, {1, 2, 2, 1});
  ExpectClose(out, {-1, -1, -1, -1});
}

TEST(PoolTest, MaxPoolMatchesWindowLoop) {
  CheckPool(OpKind::kMaxPool2d, {1, 7, 5, 3}, Padding::kSame, 3, 3, 2, 2, 4100);
  CheckPool(OpKind::kMaxPool2d, {2, 8, 9, 17}, Padding::kValid, 2, 3, 2, 3, 4110);
  CheckPool(OpKind::kMaxPool2d, {1, 10, 6, 5}, Padding::kSame, 4, 2, 3, 1, 4120);
  CheckPool(OpKind::kMaxPool2d, {1, 6, 6, 2}, Padding::kSame, 2, 2, 2, 2, 4130, Activation::kRelu6);
  CheckPool(OpKind::kMaxPool2d, {1, 9, 7, 1}, Padding::kValid, 3, 3, 3, 3, 4140, Activation::kReluN1To1);
}

// ---------------------------------------------------------------------------
// MEAN
// ---------------------------------------------------------------------------

// Mean over H and W of an NHWC tensor: [N, C] values.
std::vector<double> RefMeanHw(const Shape& xs, const std::vector<float>& x) {
  std::vector<double> out;
  for (int b = 0; b < xs[0]; ++b)
    for (int c = 0; c < xs[3]; ++c) {
      double sum = 0;
      for (int y = 0; y < xs[1]; ++y)
        for (int w = 0; w < xs[2]; ++w) sum += x[At(xs, b, y, w, c)];
      out.push_back(sum / (xs[1] * xs[2]));
    }
  return out;
}

TEST(MeanTest, SpatialMeanByHand) {
  // x [1,2,2,2]: channel 0 = 1,3,5,7 -> 4; channel 1 = 2,4,6,8 -> 5.
  const auto out = RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true},
                               {In({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Ints({2}, {1, 2})}, {1, 1, 1, 2});
  ExpectClose(out, {4, 5});
}

TEST(MeanTest, Axes12KeepDimsTrue) {
  const Shape xs{2, 5, 3, 7};
  const auto x = Random(Count(xs), 4200);
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true}, {In(xs, x), Ints({2}, {1, 2})}, {2, 1, 1, 7}),
      RefMeanHw(xs, x));
}

TEST(MeanTest, Axes12KeepDimsFalse) {
  const Shape xs{2, 5, 3, 7};
  const auto x = Random(Count(xs), 4210);
  ExpectClose(RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = false}, {In(xs, x), Ints({2}, {1, 2})}, {2, 7}),
              RefMeanHw(xs, x));
}

TEST(MeanTest, NegativeAxes) {
  // [-3, -2] on rank 4 are axes 1 and 2.
  const Shape xs{1, 4, 6, 5};
  const auto x = Random(Count(xs), 4220);
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = false}, {In(xs, x), Ints({2}, {-3, -2})}, {1, 5}),
      RefMeanHw(xs, x));
  ExpectClose(
      RunSingleOp(OpKind::kMean, ReducerAttributes{.keep_dims = true}, {In(xs, x), Ints({2}, {2, -3})}, {1, 1, 1, 5}),
      RefMeanHw(xs, x));
}

TEST(MeanTest, LastAxisByHand) {
  // [[1, 2, 3], [4, 6, 8]] mean over axis -1 -> [2, 6].
  const auto out =
      RunSingleOp(OpKind::kMean, ReducerAttributes{}, {In({2, 3}, {1, 2, 3, 4, 6, 8}), Ints({1}, {-1})}, {2});
  ExpectClose(out, {2, 6});
}

// ---------------------------------------------------------------------------
// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR
// ---------------------------------------------------------------------------

// TFLite's scale, computed in float as TFLite does.
float ResizeScale(int in, int out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

// TFLite's reference ResizeBilinear (ComputeInterpolationValues).
std::vector<double> RefResizeBilinear(const Shape& xs, const std::vector<float>& x, int oh, int ow, bool align,
                                      bool half) {
  const double sy = ResizeScale(xs[1], oh, align), sx = ResizeScale(xs[2], ow, align);
  auto coord = [&](int o, double scale, int in, int* lo, int* hi) {
    const double v = half ? (o + 0.5) * scale - 0.5 : o * scale;
    *lo = std::max(static_cast<int>(std::floor(v)), 0);
    *hi = std::min(static_cast<int>(std::ceil(v)), in - 1);
    return v - *lo;
  };
  std::vector<double> out;
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        int y0, y1, x0, x1;
        const double dy = coord(oy, sy, xs[1], &y0, &y1), dx = coord(ox, sx, xs[2], &x0, &x1);
        for (int c = 0; c < xs[3]; ++c) {
          out.push_back(x[At(xs, b, y0, x0, c)] * (1 - dy) * (1 - dx) + x[At(xs, b, y1, x0, c)] * dy * (1 - dx) +
                        x[At(xs, b, y0, x1, c)] * (1 - dy) * dx + x[At(xs, b, y1, x1, c)] * dy * dx);
        }
      }
  return out;
}

// TFLite's reference GetNearestNeighbor.
int RefNearest(int o, int in, int out, bool align, bool half) {
  const float scale = ResizeScale(in, out, align);
  const float offset = half ? 0.5f : 0.0f;
  int v = std::min(align ? static_cast<int>(std::round((static_cast<float>(o) + offset) * scale))
                         : static_cast<int>(std::floor((static_cast<float>(o) + offset) * scale)),
                   in - 1);
  if (half) v = std::max(0, v);
  return v;
}

std::vector<float> RefResizeNearest(const Shape& xs, const std::vector<float>& x, int oh, int ow, bool align,
                                    bool half) {
  std::vector<float> out;
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < xs[3]; ++c) {
          out.push_back(
              x[At(xs, b, RefNearest(oy, xs[1], oh, align, half), RefNearest(ox, xs[2], ow, align, half), c)]);
        }
  return out;
}

void CheckResize(OpKind op, const Shape& xs, int oh, int ow, bool align, bool half, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << OpName(op) << " " << ShapeToString(xs) << " -> " << oh << "x" << ow
                                    << (align ? " align_corners" : "") << (half ? " half_pixel_centers" : ""));
  const auto x = Random(Count(xs), seed);
  const auto actual =
      RunSingleOp(op, ResizeAttributes{align, half}, {In(xs, x), Ints({2}, {oh, ow})}, {xs[0], oh, ow, xs[3]});
  if (op == OpKind::kResizeBilinear) {
    ExpectClose(actual, RefResizeBilinear(xs, x, oh, ow, align, half));
  } else {
    EXPECT_EQ(actual, RefResizeNearest(xs, x, oh, ow, align, half));  // a copy: exact
  }
}

// Upscale and downscale, odd and even sizes, for one mode.
void CheckResizeMode(OpKind op, bool align, bool half, uint32_t seed) {
  CheckResize(op, {1, 3, 5, 3}, 7, 8, align, half, seed);       // up, odd -> odd/even
  CheckResize(op, {2, 4, 4, 5}, 8, 12, align, half, seed + 1);  // up by 2 and 3
  CheckResize(op, {1, 7, 9, 5}, 3, 4, align, half, seed + 2);   // down
  CheckResize(op, {1, 8, 6, 1}, 5, 6, align, half, seed + 3);   // down in H, same W
  CheckResize(op, {1, 2, 3, 17}, 1, 7, align, half, seed + 4);  // to a single row
}

TEST(ResizeBilinearTest, AlignCornersByHand) {
  // [[0,1],[2,3]] -> 3x3, align_corners: scale (2-1)/(3-1) = 0.5, so the grid is
  // {0, 0.5, 1} in both directions and v(y, x) = 2y + x.
  const auto out = RunSingleOp(OpKind::kResizeBilinear, ResizeAttributes{.align_corners = true},
                               {In({1, 2, 2, 1}, {0, 1, 2, 3}), Ints({2}, {3, 3})}, {1, 3, 3, 1});
  ExpectClose(out, {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
}

TEST(ResizeBilinearTest, DefaultModeByHand) {
  // [[0,1],[2,3]] -> 4x4: scale 0.5, y = o * 0.5 = {0, 0.5, 1, 1.5}; y1 is
  // clamped to 1, so the effective coordinates are {0, 0.5, 1, 1}; v = 2y + x.
  const auto out = RunSingleOp(OpKind::kResizeBilinear, ResizeAttributes{},
                               {In({1, 2, 2, 1}, {0, 1, 2, 3}), Ints({2}, {4, 4})}, {1, 4, 4, 1});
  ExpectClose(out, {0, 0.5, 1, 1, 1, 1.5, 2, 2, 2, 2.5, 3, 3, 2, 2.5, 3, 3});
}

TEST(ResizeBilinearTest, HalfPixelCentersByHand) {
  // [[0,1],[2,3]] -> 4x4 half-pixel: y = (o + 0.5) * 0.5 - 0.5 = {-0.25, 0.25,
  // 0.75, 1.25}, clamped to {0, 0.25, 0.75, 1}; v = 2y + x.
  const auto out = RunSingleOp(OpKind::kResizeBilinear, ResizeAttributes{.half_pixel_centers = true},
                               {In({1, 2, 2, 1}, {0, 1, 2, 3}), Ints({2}, {4, 4})}, {1, 4, 4, 1});
  ExpectClose(out, {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3});
}

TEST(ResizeBilinearTest, DefaultModeMatchesReferenceFormula) {
  CheckResizeMode(OpKind::kResizeBilinear, false, false, 4300);
}
TEST(ResizeBilinearTest, AlignCornersMatchesReferenceFormula) {
  CheckResizeMode(OpKind::kResizeBilinear, true, false, 4310);
}
TEST(ResizeBilinearTest, HalfPixelCentersMatchesReferenceFormula) {
  CheckResizeMode(OpKind::kResizeBilinear, false, true, 4320);
}

TEST(ResizeNearestNeighborTest, ModesByHand) {
  // [[0,1],[2,3]]:
  // -> 4x4 default: floor(o * 0.5) = {0,0,1,1}.
  // -> 3x3 align_corners: scale 0.5, round(o * 0.5) = {0, 1 (0.5 rounds away), 1}.
  // -> 3x3 half-pixel: scale 2/3, floor((o + 0.5) * 2/3) = {0, 1, 1}.
  const std::vector<float> x = {0, 1, 2, 3};
  EXPECT_EQ(RunSingleOp(OpKind::kResizeNearestNeighbor, ResizeAttributes{}, {In({1, 2, 2, 1}, x), Ints({2}, {4, 4})},
                        {1, 4, 4, 1}),
            (std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}));
  EXPECT_EQ(RunSingleOp(OpKind::kResizeNearestNeighbor, ResizeAttributes{.align_corners = true},
                        {In({1, 2, 2, 1}, x), Ints({2}, {3, 3})}, {1, 3, 3, 1}),
            (std::vector<float>{0, 1, 1, 2, 3, 3, 2, 3, 3}));
  EXPECT_EQ(RunSingleOp(OpKind::kResizeNearestNeighbor, ResizeAttributes{.half_pixel_centers = true},
                        {In({1, 2, 2, 1}, x), Ints({2}, {3, 3})}, {1, 3, 3, 1}),
            (std::vector<float>{0, 1, 1, 2, 3, 3, 2, 3, 3}));
}

TEST(ResizeNearestNeighborTest, DefaultModeMatchesGetNearestNeighbor) {
  CheckResizeMode(OpKind::kResizeNearestNeighbor, false, false, 4400);
}
TEST(ResizeNearestNeighborTest, AlignCornersMatchesGetNearestNeighbor) {
  CheckResizeMode(OpKind::kResizeNearestNeighbor, true, false, 4410);
}
TEST(ResizeNearestNeighborTest, HalfPixelCentersMatchesGetNearestNeighbor) {
  CheckResizeMode(OpKind::kResizeNearestNeighbor, false, true, 4420);
}

// ---------------------------------------------------------------------------
// Data movement: RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD, TRANSPOSE,
// SLICE, STRIDED_SLICE, DEPTH_TO_SPACE, SPACE_TO_DEPTH
// ---------------------------------------------------------------------------

std::vector<int> Unravel(int64_t i, const Shape& s) {
  std::vector<int> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = static_cast<int>(i % s[static_cast<size_t>(d)]);
    i /= s[static_cast<size_t>(d)];
  }
  return idx;
}

int64_t Ravel(const std::vector<int>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

// x[i0, i1, ...] for every combination of the per-dimension index lists, in
// row-major order (what a slice produces).
std::vector<float> Gather(const Shape& xs, const std::vector<float>& x, const std::vector<std::vector<int>>& lists) {
  Shape counts;
  for (const auto& l : lists) counts.push_back(static_cast<int32_t>(l.size()));
  std::vector<float> out;
  for (int64_t i = 0; i < NumElements(counts); ++i) {
    const auto pos = Unravel(i, counts);
    std::vector<int> idx;
    for (size_t d = 0; d < lists.size(); ++d) idx.push_back(lists[d][static_cast<size_t>(pos[d])]);
    out.push_back(x[static_cast<size_t>(Ravel(idx, xs))]);
  }
  return out;
}

std::vector<float> Iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(ReshapeTest, MinusOneInAttributes) {
  // [2,3,4] with new_shape [-1, 6] -> [4, 6]; the data is unchanged.
  const auto x = Iota(24);
  EXPECT_EQ(RunSingleOp(OpKind::kReshape, ReshapeAttributes{Shape{-1, 6}}, {In({2, 3, 4}, x)}, {4, 6}), x);
}

TEST(ReshapeTest, MinusOneViaShapeInput) {
  // The shape input [2, -1, 3] wins over the attributes: [2,3,4] -> [2,4,3].
  const auto x = Iota(24, 1);
  EXPECT_EQ(
      RunSingleOp(OpKind::kReshape, ReshapeAttributes{Shape{24}}, {In({2, 3, 4}, x), Ints({3}, {2, -1, 3})}, {2, 4, 3}),
      x);
}

TEST(ReshapeTest, ElementCountMismatchIsAnError) {
  const absl::Status s = CreateStatus(OpKind::kReshape, {}, {In({2, 3, 4}, {}), Ints({2}, {5, 5})}, {{5, 5}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot reshape"));
}

TEST(ReshapeTest, SqueezeDropsUnitDims) {
  const auto x = Iota(6);
  EXPECT_EQ(RunSingleOp(OpKind::kSqueeze, SqueezeAttributes{{0, 2}}, {In({1, 3, 1, 2}, x)}, {3, 2}), x);
}

TEST(ReshapeTest, ExpandDimsInsertsUnitDim) {
  const auto x = Iota(6);
  EXPECT_EQ(RunSingleOp(OpKind::kExpandDims, {}, {In({3, 2}, x), Ints({}, {1})}, {3, 1, 2}), x);
}

TEST(ConcatenationTest, NegativeAxisByHand) {
  // [[1,2],[3,4]] ++ [[5],[6]] on axis -1 -> [[1,2,5],[3,4,6]].
  const auto out = RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = -1},
                               {In({2, 2}, {1, 2, 3, 4}), In({2, 1}, {5, 6})}, {2, 3});
  EXPECT_EQ(out, (std::vector<float>{1, 2, 5, 3, 4, 6}));
}

TEST(ConcatenationTest, FusedReluByHand) {
  // relu([-1, 2] ++ [3, -4]) on axis 0 = [0, 2, 3, 0].
  const auto out =
      RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = 0, .activation = Activation::kRelu},
                  {In({2}, {-1, 2}), Const({2}, {3, -4})}, {4});
  EXPECT_EQ(out, (std::vector<float>{0, 2, 3, 0}));
}

TEST(ConcatenationTest, EveryAxisMatchesIndexMath) {
  // Three inputs of rank 4 whose sizes on the concat axis are 2, 3 and 1.
  const Shape base{2, 3, 4, 5};
  for (int axis : {0, 1, 2, 3, -1, -2, -3, -4}) {
    SCOPED_TRACE(axis);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    std::vector<Shape> shapes(3, base);
    shapes[0][a] = 2;
    shapes[1][a] = 3;
    shapes[2][a] = 1;
    std::vector<std::vector<float>> data;
    std::vector<Operand> ops;
    for (size_t i = 0; i < 3; ++i) {
      data.push_back(Iota(Count(shapes[i]), 1000.0f * static_cast<float>(i)));
      ops.push_back(In(shapes[i], data[i]));
    }
    Shape out_shape = base;
    out_shape[a] = 6;
    std::vector<float> expected;
    for (int64_t i = 0; i < NumElements(out_shape); ++i) {
      auto idx = Unravel(i, out_shape);
      size_t which = 0;
      while (idx[a] >= shapes[which][a]) idx[a] -= shapes[which++][a];
      expected.push_back(data[which][static_cast<size_t>(Ravel(idx, shapes[which]))]);
    }
    EXPECT_EQ(RunSingleOp(OpKind::kConcatenation, ConcatenationAttributes{.axis = axis}, ops, out_shape), expected);
  }
}

// out = 0 except the window [before, before + in) per dimension, which holds x.
std::vector<float> RefPad(const Shape& xs, const std::vector<float>& x, const std::vector<int>& before,
                          const std::vector<int>& after, Shape* out_shape) {
  Shape ys = xs;
  for (size_t d = 0; d < xs.size(); ++d) ys[d] += before[d] + after[d];
  *out_shape = ys;
  std::vector<float> y;
  for (int64_t i = 0; i < NumElements(ys); ++i) {
    auto idx = Unravel(i, ys);
    bool inside = true;
    for (size_t d = 0; d < xs.size(); ++d) {
      idx[d] -= before[d];
      inside = inside && idx[d] >= 0 && idx[d] < xs[d];
    }
    y.push_back(inside ? x[static_cast<size_t>(Ravel(idx, xs))] : 0.0f);
  }
  return y;
}

TEST(PadTest, TwoDimensionalByHand) {
  // [[1,2],[3,4]] with paddings [[1,0],[0,1]] -> [[0,0,0],[1,2,0],[3,4,0]].
  const auto out = RunSingleOp(OpKind::kPad, {}, {In({2, 2}, {1, 2, 3, 4}), Ints({2, 2}, {1, 0, 0, 1})}, {3, 3});
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 1, 2, 0, 3, 4, 0}));
}

TEST(PadTest, SpatialMatchesIndexMath) {
  const Shape xs{2, 3, 4, 3};
  const auto x = Random(Count(xs), 5000);
  Shape ys;
  const auto expected = RefPad(xs, x, {0, 1, 2, 0}, {0, 2, 1, 0}, &ys);
  EXPECT_EQ(RunSingleOp(OpKind::kPad, {}, {In(xs, x), Ints({4, 2}, {0, 0, 1, 2, 2, 1, 0, 0})}, ys), expected);
}

TEST(PadTest, ChannelOnlyMatchesIndexMath) {
  // [[0,0],[0,0],[0,0],[0,N]]: zero channels appended to every pixel.
  const Shape xs{1, 3, 5, 3};
  const auto x = Random(Count(xs), 5010);
  Shape ys;
  const auto expected = RefPad(xs, x, {0, 0, 0, 0}, {0, 0, 0, 5}, &ys);
  ASSERT_EQ(ys, (Shape{1, 3, 5, 8}));
  EXPECT_EQ(RunSingleOp(OpKind::kPad, {}, {In(xs, x), Ints({4, 2}, {0, 0, 0, 0, 0, 0, 0, 5})}, ys), expected);
}

TEST(PadTest, AllDimensionsMatchesIndexMath) {
  const Shape xs{1, 2, 3, 2};
  const auto x = Random(Count(xs), 5020);
  Shape ys;
  const auto expected = RefPad(xs, x, {1, 0, 3, 1}, {0, 2, 0, 2}, &ys);
  EXPECT_EQ(RunSingleOp(OpKind::kPad, {}, {In(xs, x), Ints({4, 2}, {1, 0, 0, 2, 3, 0, 1, 2})}, ys), expected);
}

TEST(PadTest, PaddingsOfTheWrongShapeAreAnError) {
  // Rank-4 input, paddings [3, 2].
  const absl::Status s =
      CreateStatus(OpKind::kPad, {}, {In({1, 2, 2, 1}, {}), Ints({3, 2}, {0, 0, 1, 1, 1, 1})}, {{1, 4, 4, 1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("paddings have shape [3,2]"));
}

// out[o] = x[i] with i[perm[d]] = o[d].
std::vector<float> RefTranspose(const Shape& xs, const std::vector<float>& x, const std::vector<int>& perm,
                                Shape* out_shape) {
  Shape ys;
  for (int p : perm) ys.push_back(xs[static_cast<size_t>(p)]);
  *out_shape = ys;
  std::vector<float> y;
  for (int64_t i = 0; i < NumElements(ys); ++i) {
    const auto o = Unravel(i, ys);
    std::vector<int> idx(xs.size());
    for (size_t d = 0; d < perm.size(); ++d) idx[static_cast<size_t>(perm[d])] = o[d];
    y.push_back(x[static_cast<size_t>(Ravel(idx, xs))]);
  }
  return y;
}

TEST(TransposeTest, MatrixByHand) {
  // [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]].
  EXPECT_EQ(RunSingleOp(OpKind::kTranspose, {}, {In({2, 3}, {1, 2, 3, 4, 5, 6}), Ints({2}, {1, 0})}, {3, 2}),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(TransposeTest, PermutationsMatchIndexMath) {
  const std::pair<Shape, std::vector<int>> cases[] = {
      {{2, 3, 4}, {2, 0, 1}},
      {{1, 2, 3, 4}, {0, 3, 1, 2}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{3, 1, 5, 2}, {0, 2, 1, 3}},
  };
  uint32_t seed = 5100;
  for (const auto& [xs, perm] : cases) {
    SCOPED_TRACE(ShapeToString(xs));
    const auto x = Random(Count(xs), ++seed);
    Shape ys;
    const auto expected = RefTranspose(xs, x, perm, &ys);
    EXPECT_EQ(RunSingleOp(OpKind::kTranspose, {},
                          {In(xs, x), Ints({static_cast<int32_t>(perm.size())}, {perm.begin(), perm.end()})}, ys),
              expected);
  }
}

TEST(TransposeTest, PermThatIsNotAPermutationIsAnError) {
  const absl::Status s = CreateStatus(OpKind::kTranspose, {}, {In({2, 3, 4}, {}), Ints({3}, {0, 0, 1})}, {{2, 2, 3}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("not a permutation"));
}

TEST(SliceTest, SizeMinusOneTakesTheRest) {
  // [2,3,4], begin [0,1,1], size [-1,2,-1]: dim 0 {0,1}, dim 1 {1,2}, dim 2 {1,2,3}.
  const Shape xs{2, 3, 4};
  const auto x = Iota(24);
  EXPECT_EQ(RunSingleOp(OpKind::kSlice, {}, {In(xs, x), Ints({3}, {0, 1, 1}), Ints({3}, {-1, 2, -1})}, {2, 2, 3}),
            Gather(xs, x, {{0, 1}, {1, 2}, {1, 2, 3}}));
}

TEST(SliceTest, SliceByHand) {
  // [[1,2,3],[4,5,6],[7,8,9]], begin [1,0], size [2,2] -> [[4,5],[7,8]].
  EXPECT_EQ(RunSingleOp(OpKind::kSlice, {},
                        {In({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), Ints({2}, {1, 0}), Ints({2}, {2, 2})}, {2, 2}),
            (std::vector<float>{4, 5, 7, 8}));
}

std::vector<float> RunStridedSlice(const Shape& xs, const std::vector<float>& x, std::vector<int32_t> begin,
                                   std::vector<int32_t> end, std::vector<int32_t> strides, StridedSliceAttributes a,
                                   const Shape& out) {
  const Shape n{static_cast<int32_t>(begin.size())};
  return RunSingleOp(OpKind::kStridedSlice, a, {In(xs, x), Ints(n, begin), Ints(n, end), Ints(n, strides)}, out);
}

TEST(StridedSliceTest, BeginAndEndMasks) {
  // [3,4,5], begin [1,1,2], end [2,3,4], strides 1, begin_mask 0b001 (dim 0
  // starts at 0), end_mask 0b100 (dim 2 runs to 5):
  // dim 0 [0,2) {0,1}; dim 1 [1,3) {1,2}; dim 2 [2,5) {2,3,4}.
  const Shape xs{3, 4, 5};
  const auto x = Iota(60);
  EXPECT_EQ(RunStridedSlice(xs, x, {1, 1, 2}, {2, 3, 4}, {1, 1, 1}, {.begin_mask = 1, .end_mask = 4}, {2, 2, 3}),
            Gather(xs, x, {{0, 1}, {1, 2}, {2, 3, 4}}));
}

TEST(StridedSliceTest, NegativeStrides) {
  // [5,6], begin [-1,4], end [0,0], strides [-2,-1], end_mask 0b10:
  // dim 0 from 4 down to (not incl.) 0 by 2: {4,2}; dim 1 from 4 down to the
  // start (end masked): {4,3,2,1,0}.
  const Shape xs{5, 6};
  const auto x = Iota(30);
  EXPECT_EQ(RunStridedSlice(xs, x, {-1, 4}, {0, 0}, {-2, -1}, {.end_mask = 2}, {2, 5}),
            Gather(xs, x, {{4, 2}, {4, 3, 2, 1, 0}}));
  // begin_mask with a negative stride starts at the last element: [6], end 1,
  // stride -2 -> {5, 3}.
  EXPECT_EQ(RunStridedSlice({6}, Iota(6), {0}, {1}, {-2}, {.begin_mask = 1}, {2}), (std::vector<float>{5, 3}));
}

TEST(StridedSliceTest, ShrinkAxisMask) {
  // [3,4,5], begin [1,0,-1], end [2,4,0], strides [1,2,1], shrink 0b101:
  // dim 0 -> index 1 (dropped), dim 1 {0,2}, dim 2 -> index 4 (dropped). Out [2].
  const Shape xs{3, 4, 5};
  const auto x = Iota(60);
  EXPECT_EQ(RunStridedSlice(xs, x, {1, 0, -1}, {2, 4, 0}, {1, 2, 1}, {.shrink_axis_mask = 5}, {2}),
            Gather(xs, x, {{1}, {0, 2}, {4}}));
}

TEST(StridedSliceTest, NegativeAndOutOfRangeIndices) {
  // [4,7], begin [-3,-6], end [-1,-1], strides [1,2]: dim 0 [1,3) {1,2};
  // dim 1 [1,6) by 2 {1,3,5}.
  const Shape xs{4, 7};
  const auto x = Iota(28);
  EXPECT_EQ(RunStridedSlice(xs, x, {-3, -6}, {-1, -1}, {1, 2}, {}, {2, 3}), Gather(xs, x, {{1, 2}, {1, 3, 5}}));
  // Out-of-range bounds clamp: [5], begin -100, end 100, stride 2 -> {0,2,4}.
  EXPECT_EQ(RunStridedSlice({5}, Iota(5), {-100}, {100}, {2}, {}, {3}), (std::vector<float>{0, 2, 4}));
}

TEST(StridedSliceTest, ZeroStrideIsAnError) {
  const absl::Status s =
      CreateStatus(OpKind::kStridedSlice, StridedSliceAttributes{},
                   {In({4, 4}, {}), Ints({2}, {0, 0}), Ints({2}, {4, 4}), Ints({2}, {1, 0})}, {{4, 4}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("stride of dimension 1 is 0"));
}

TEST(SpaceDepthTest, DepthToSpaceMatchesFormula) {
  // out[b, h*bs+dy, w*bs+dx, c] = in[b, h, w, (dy*bs+dx)*C + c], bs 2, C 3.
  const int bs = 2, c = 3;
  const Shape xs{2, 3, 5, bs * bs * c}, ys{2, 6, 10, c};
  const auto x = Iota(Count(xs));
  std::vector<float> expected(Count(ys));
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 5; ++w)
        for (int dy = 0; dy < bs; ++dy)
          for (int dx = 0; dx < bs; ++dx)
            for (int k = 0; k < c; ++k) {
              expected[At(ys, b, h * bs + dy, w * bs + dx, k)] = x[At(xs, b, h, w, (dy * bs + dx) * c + k)];
            }
  EXPECT_EQ(RunSingleOp(OpKind::kDepthToSpace, BlockSizeAttributes{bs}, {In(xs, x)}, ys), expected);
}

TEST(SpaceDepthTest, SpaceToDepthMatchesFormula) {
  // out[b, h, w, (dy*bs+dx)*C + c] = in[b, h*bs+dy, w*bs+dx, c], bs 2, C 5.
  const int bs = 2, c = 5;
  const Shape xs{1, 4, 6, c}, ys{1, 2, 3, bs * bs * c};
  const auto x = Iota(Count(xs));
  std::vector<float> expected(Count(ys));
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int dy = 0; dy < bs; ++dy)
        for (int dx = 0; dx < bs; ++dx)
          for (int k = 0; k < c; ++k) {
            expected[At(ys, 0, h, w, (dy * bs + dx) * c + k)] = x[At(xs, 0, h * bs + dy, w * bs + dx, k)];
          }
  EXPECT_EQ(RunSingleOp(OpKind::kSpaceToDepth, BlockSizeAttributes{bs}, {In(xs, x)}, ys), expected);
}

TEST(SpaceDepthTest, SpaceToDepthThenDepthToSpaceIsIdentity) {
  GraphBuilder b;
  const int x = b.Input({2, 4, 6, 3});
  const int mid = b.Tensor({2, 2, 3, 12});
  const int y = b.Tensor({2, 4, 6, 3});
  b.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{2}, {x}, {mid});
  b.Op(OpKind::kDepthToSpace, BlockSizeAttributes{2}, {mid}, {y});
  b.Output(y);
  const auto data = Random(2 * 4 * 6 * 3, 5200);
  const auto out = RunGraph(b.Build(), {data});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], data);
}

TEST(SpaceDepthTest, DepthToSpaceThenSpaceToDepthIsIdentity) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 5, 8});
  const int mid = b.Tensor({1, 6, 10, 2});
  const int y = b.Tensor({1, 3, 5, 8});
  b.Op(OpKind::kDepthToSpace, BlockSizeAttributes{2}, {x}, {mid});
  b.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{2}, {mid}, {y});
  b.Output(y);
  const auto data = Random(3 * 5 * 8, 5210);
  const auto out = RunGraph(b.Build(), {data});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], data);
}

// ---------------------------------------------------------------------------
// DEQUANTIZE (constants are folded at load: the graph output is then a
// constant tensor, read the same way)
// ---------------------------------------------------------------------------

// A graph of one DEQUANTIZE whose input is the constant `t` built by `make`.
template <typename Make>
std::vector<float> DequantizeConstant(const Shape& shape, Make make) {
  GraphBuilder b;
  const int q = make(b);
  const int y = b.Tensor(shape);
  b.Op(OpKind::kDequantize, {}, {q}, {y});
  b.Output(y);
  auto outs = RunGraph(b.Build(), {});
  return outs.empty() ? std::vector<float>{} : outs[0];
}

template <typename T>
int QuantizedConstant(GraphBuilder& b, const Shape& shape, DataType type, const std::vector<T>& values,
                      Quantization q) {
  const int t = b.Tensor(shape, type);
  b.SetData(t, values.data(), values.size() * sizeof(T));
  b.graph().tensors[static_cast<size_t>(t)].quantization = std::move(q);
  return t;
}

TEST(DequantizeTest, Fp16ConstantByHand) {
  // Exactly representable halves come back unchanged; 0.1 rounds to the half
  // 0x2E66 = (1 + 614/1024) * 2^-4 = 0.0999755859375; 2^-24 is the smallest
  // subnormal half.
  const std::vector<float> values = {0.5f, -0.125f, 1024.0f, 3.140625f, 65504.0f, 0.1f, std::ldexp(1.0f, -24)};
  const auto out = DequantizeConstant({7}, [&](GraphBuilder& b) {
    std::vector<uint16_t> halves;
    for (float v : values) halves.push_back(FloatToHalf(v));
    EXPECT_EQ(halves[5], 0x2E66);
    const int t = b.Tensor({7}, DataType::kFloat16);
    b.SetData(t, halves.data(), halves.size() * 2);
    return t;
  });
  ExpectClose(out, {0.5, -0.125, 1024, 3.140625, 65504, 0.0999755859375, std::ldexp(1.0, -24)});
}

TEST(DequantizeTest, Fp16RuntimeInputByHand) {
  // The same conversion on a graph input (not folded): [1.5, -2, 0.25, 0].
  GraphBuilder b;
  const int h = b.Tensor({4}, DataType::kFloat16, "half");
  b.graph().inputs.push_back(h);
  const int y = b.Tensor({4});
  b.Op(OpKind::kDequantize, {}, {h}, {y});
  b.Output(y);
  auto interpreter = Interpreter::Create(b.Build(), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const uint16_t halves[4] = {FloatToHalf(1.5f), FloatToHalf(-2.0f), FloatToHalf(0.25f), FloatToHalf(0.0f)};
  ASSERT_EQ((*interpreter)->input(0).bytes, sizeof halves);
  std::memcpy((*interpreter)->input(0).data, halves, sizeof halves);
  ASSERT_TRUE((*interpreter)->Invoke().ok());
  const float* out = (*interpreter)->output(0).as<float>();
  ExpectClose(std::vector<float>(out, out + 4), {1.5, -2, 0.25, 0});
}

TEST(DequantizeTest, Int8PerTensorWithZeroPointByHand) {
  // (q - zp) * scale with scale 0.5, zp -3: q = [-128, -3, 0, 127] ->
  // [-125 * 0.5, 0, 3 * 0.5, 130 * 0.5] = [-62.5, 0, 1.5, 65].
  const auto out = DequantizeConstant({4}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {4}, DataType::kInt8, {-128, -3, 0, 127}, {{0.5f}, {-3}, 0});
  });
  ExpectClose(out, {-62.5, 0, 1.5, 65});
}

TEST(DequantizeTest, UInt8PerTensorByHand) {
  // scale 0.5, zp 128: [0, 128, 255] -> [-64, 0, 63.5].
  const auto out = DequantizeConstant({3}, [](GraphBuilder& b) {
    return QuantizedConstant<uint8_t>(b, {3}, DataType::kUInt8, {0, 128, 255}, {{0.5f}, {128}, 0});
  });
  ExpectClose(out, {-64, 0, 63.5});
}

TEST(DequantizeTest, Int8PerChannelAxis0ByHand) {
  // [3,2], quantized_dimension 0, scales [0.5, 0.25, 2], zero points [1, -2, 0]:
  // row 0: (3-1)*0.5 = 1, (-1-1)*0.5 = -1; row 1: (2+2)*0.25 = 1, (6+2)*0.25 = 2;
  // row 2: -4*2 = -8, 5*2 = 10.
  const auto out = DequantizeConstant({3, 2}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {3, 2}, DataType::kInt8, {3, -1, 2, 6, -4, 5},
                                     {{0.5f, 0.25f, 2.0f}, {1, -2, 0}, 0});
  });
  ExpectClose(out, {1, -1, 1, 2, -8, 10});
}

TEST(DequantizeTest, Int8PerChannelLastAxisByHand) {
  // [2,3], quantized_dimension 1, scales [1, 0.5, 0.1], zero points [0, 4, -10]:
  // row 0: 1, (2-4)*0.5 = -1, (3+10)*0.1 = 1.3; row 1: -1, (-2-4)*0.5 = -3, (-3+10)*0.1 = 0.7.
  const auto out = DequantizeConstant({2, 3}, [](GraphBuilder& b) {
    return QuantizedConstant<int8_t>(b, {2, 3}, DataType::kInt8, {1, 2, 3, -1, -2, -3},
                                     {{1.0f, 0.5f, 0.1f}, {0, 4, -10}, 1});
  });
  ExpectClose(out, {1, -1, 1.3, -1, -3, 0.7});
}

TEST(DequantizeTest, FoldedConstantFeedsTheNextOp) {
  // DEQUANTIZE(fp16 [1, 2, 3]) + input [10, 20, 30] = [11, 22, 33].
  GraphBuilder b;
  const int x = b.Input({3});
  const int h = b.Tensor({3}, DataType::kFloat16);
  const uint16_t halves[3] = {FloatToHalf(1), FloatToHalf(2), FloatToHalf(3)};
  b.SetData(h, halves, sizeof halves);
  const int w = b.Tensor({3});
  const int y = b.Tensor({3});
  b.Op(OpKind::kDequantize, {}, {h}, {w});
  b.Op(OpKind::kAdd, ElementwiseAttributes{}, {x, w}, {y});
  b.Output(y);
  const auto out = RunGraph(b.Build(), {{10, 20, 30}});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {11, 22, 33});
}

// ---------------------------------------------------------------------------
// DENSIFY
// ---------------------------------------------------------------------------

std::vector<float> DensifyConstant(const Shape& shape, const std::vector<float>& values, Sparsity sparsity) {
  GraphBuilder b;
  const int t = b.Tensor(shape);
  b.SetData(t, values.data(), values.size() * sizeof(float));
  b.graph().tensors[static_cast<size_t>(t)].sparsity = std::move(sparsity);
  const int y = b.Tensor(shape);
  b.Op(OpKind::kDensify, {}, {t}, {y});
  b.Output(y);
  auto outs = RunGraph(b.Build(), {});
  return outs.empty() ? std::vector<float>{} : outs[0];
}

TEST(DensifyTest, CsrMatrixByHand) {
  // [[1,0,2,0],
  //  [0,0,0,0],
  //  [0,3,0,4],
  //  [5,0,0,6]]
  // rows dense (size 4), columns CSR: row r holds indices[segments[r] .. segments[r+1]).
  Sparsity s;
  s.traversal_order = {0, 1};
  s.dimensions.resize(2);
  s.dimensions[0].dense_size = 4;
  s.dimensions[1].is_sparse = true;
  s.dimensions[1].array_segments = {0, 2, 2, 4, 6};
  s.dimensions[1].array_indices = {0, 2, 1, 3, 0, 3};
  EXPECT_EQ(DensifyConstant({4, 4}, {1, 2, 3, 4, 5, 6}, s),
            (std::vector<float>{1, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 4, 5, 0, 0, 6}));
}

TEST(DensifyTest, BlockSparseMatrixByHand) {
  // 2x2 blocks (block_map [0, 1]); block rows dense (2), block columns CSR,
  // each block stored densely in row-major order:
  //   block row 0 holds block column 1 = [[1,2],[3,4]];
  //   block row 1 holds block columns 0 = [[5,6],[7,8]] and 1 = [[9,0],[0,10]].
  // Dense: [[0,0,1,2],[0,0,3,4],[5,6,9,0],[7,8,0,10]].
  Sparsity s;
  s.traversal_order = {0, 1, 2, 3};
  s.block_map = {0, 1};
  s.dimensions.resize(4);
  s.dimensions[0].dense_size = 2;
  s.dimensions[1].is_sparse = true;
  s.dimensions[1].array_segments = {0, 1, 3};
  s.dimensions[1].array_indices = {1, 0, 1};
  s.dimensions[2].dense_size = 2;
  s.dimensions[3].dense_size = 2;
  EXPECT_EQ(DensifyConstant({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 10}, s),
            (std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4, 5, 6, 9, 0, 7, 8, 0, 10}));
}

// ---------------------------------------------------------------------------
// MediaPipe custom ops (registered by default)
// ---------------------------------------------------------------------------

// Raw little-endian int32 custom options (TfLiteTransposeConvParams,
// TfLitePoolParams).
std::vector<uint8_t> RawInts(const std::vector<int32_t>& ints) {
  std::vector<uint8_t> bytes(ints.size() * 4);
  std::memcpy(bytes.data(), ints.data(), bytes.size());
  return bytes;
}

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

// ---------------------------------------------------------------------------
// Bad parameters are reported at Interpreter::Create
// ---------------------------------------------------------------------------

TEST(CreateErrorTest, WrongDeclaredOutputShapeNamesBothShapes) {
  // A 2x2 VALID conv over 3x3 gives [1,2,2,1]; the graph declares [1,3,3,1].
  const absl::Status s = CreateStatus(OpKind::kConv2d, Conv2dAttributes{.padding = Padding::kValid},
                                      {In({1, 3, 3, 1}, {}), Const({1, 2, 2, 1}, {1, 2, 3, 4})}, {{1, 3, 3, 1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("has shape [1,3,3,1]"));
  EXPECT_THAT(s.message(), HasSubstr("but the inputs give [1,2,2,1]"));
}

TEST(CreateErrorTest, WrongDeclaredOutputShapeOfPoolAndConcat) {
  absl::Status s =
      CreateStatus(OpKind::kMaxPool2d, Pool2dAttributes{.stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2},
                   {In({1, 5, 5, 1}, {})}, {{1, 2, 2, 1}});
  EXPECT_THAT(s.message(), HasSubstr("has shape [1,2,2,1], but the inputs give [1,3,3,1]"));
  s = CreateStatus(OpKind::kConcatenation, ConcatenationAttributes{.axis = 1}, {In({2, 3}, {}), In({2, 4}, {})},
                   {{2, 6}});
  EXPECT_THAT(s.message(), HasSubstr("has shape [2,6], but the inputs give [2,7]"));
}

TEST(CreateErrorTest, UnregisteredCustomOpIsAnError) {
  const absl::Status s = CreateStatus(OpKind::kCustom, CustomAttributes{"NoSuchOp", {}}, {In({1}, {})}, {{1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("custom op 'NoSuchOp'"));
}

TEST(CreateErrorTest, CustomOpBadPaddingIsAnError) {
  const absl::Status s =
      CreateStatus(OpKind::kCustom, CustomAttributes{"MaxPoolingWithArgmax2D", RawInts({0, 2, 2, 2, 2, 0})},
                   {In({1, 4, 4, 1}, {})}, {{1, 2, 2, 1}, {1, 2, 2, 1}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("neither SAME (1) nor VALID (2)"));
}

}  // namespace
}  // namespace mgd
