// CPU reference kernel tests: AVERAGE_POOL_2D and MAX_POOL_2D (interpreter/kernels/pool.cc).
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd {
namespace {

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

}  // namespace
}  // namespace mgd
