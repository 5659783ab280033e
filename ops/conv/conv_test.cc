// The CPU kernels of CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and
// FULLY_CONNECTED against direct loops and by hand.
#include "ops/conv/conv.h"

#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

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

}  // namespace
}  // namespace mgd::ops
