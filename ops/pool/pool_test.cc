// MAX_POOL_2D and AVERAGE_POOL_2D: the CPU kernel against TFLite's reference
// pooling, the GPU (both shaders: the per-output loop and the split
// reduction for large windows) against the CPU.
#include "ops/pool/pool.h"

#include <algorithm>

#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
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
  PoolAttributes a{
      .padding = padding, .stride_w = sw, .stride_h = sh, .filter_w = fw, .filter_h = fh, .activation = act};
  ExpectClose(RunSingleOp(op, a, {In(xs, x)}, out_shape), expected);
}

TEST(PoolTest, AveragePoolSameDividesByInBoundsCountByHand) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], 3x3 filter, stride 1, SAME (pad 1 all round):
  // corners average 4 elements, edges 6, the centre 9:
  // (0,0) (1+2+4+5)/4 = 3     (0,1) (1+..+6)/6 = 3.5      (0,2) (2+3+5+6)/4 = 4
  // (1,0) (1+2+4+5+7+8)/6 = 4.5  (1,1) 45/9 = 5  (1,2) (2+3+5+6+8+9)/6 = 5.5
  // (2,0) (4+5+7+8)/4 = 6     (2,1) (4+..+9)/6 = 6.5      (2,2) (5+6+8+9)/4 = 7
  const auto out = RunSingleOp(OpKind::kAveragePool2d, PoolAttributes{.filter_w = 3, .filter_h = 3},
                               {In({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, {1, 3, 3, 1});
  ExpectClose(out, {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
}

TEST(PoolTest, AveragePoolSameStride2PadsAtTheEndByHand) {
  // 3x3 input, 2x2 filter, stride 2, SAME: out 2x2, total padding 1, all after:
  // (0,0) (1+2+4+5)/4 = 3; (0,1) (3+6)/2 = 4.5; (1,0) (7+8)/2 = 7.5; (1,1) 9/1 = 9.
  const auto out =
      RunSingleOp(OpKind::kAveragePool2d, PoolAttributes{.stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2},
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
  const auto out = RunSingleOp(OpKind::kMaxPool2d, PoolAttributes{.filter_w = 3, .filter_h = 3},
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

using PoolGpuTest = testing::DelegateTest;

TEST_P(PoolGpuTest, PoolsMatchTheCpu) {
  struct Case {
    OpKind op;
    Padding padding;
    int filter, stride;
    Activation activation;
    int oh, ow;
  };
  for (const Case& c : {Case{OpKind::kMaxPool2d, Padding::kSame, 3, 2, Activation::kNone, 4, 5},
                        Case{OpKind::kMaxPool2d, Padding::kValid, 2, 2, Activation::kRelu6, 3, 4},
                        Case{OpKind::kAveragePool2d, Padding::kSame, 3, 1, Activation::kNone, 7, 9},
                        Case{OpKind::kAveragePool2d, Padding::kValid, 3, 2, Activation::kRelu, 3, 4}}) {
    for (int channels : {5, 8}) {
      testing::OneOp g;
      const int x = g.Input({1, 7, 9, channels});
      PoolAttributes a;
      a.padding = c.padding;
      a.filter_h = a.filter_w = c.filter;
      a.stride_h = a.stride_w = c.stride;
      a.activation = c.activation;
      g.Out(g.Op(c.op, a, {x}, {{1, c.oh, c.ow, channels}}));
      ExpectSameAsCpu(g.b.Build(), g.data);
    }
  }
}

// Windows of hundreds of values over few outputs take the split-reduction
// shader (128 invocations per output, combined through shared memory), with
// windows cut by the edges (averaged over what they hold) included.
TEST_P(PoolGpuTest, LargePoolWindowsMatchTheCpu) {
  struct Case {
    OpKind op;
    Shape in;
    Padding padding;
    int filter_h, filter_w, stride;
    Activation activation;
    Shape out;
    uint32_t threads;  // per output: about a quarter of the window, 32 to 128
  };
  for (const Case& c : {Case{OpKind::kAveragePool2d, {1, 20, 24, 6}, Padding::kValid, 20, 24, 1, Activation::kNone, {1, 1, 1, 6}, 64},
                        Case{OpKind::kMaxPool2d, {1, 20, 24, 6}, Padding::kValid, 20, 24, 1, Activation::kNone, {1, 1, 1, 6}, 64},
                        Case{OpKind::kAveragePool2d, {1, 30, 30, 3}, Padding::kSame, 17, 17, 16, Activation::kRelu6, {1, 2, 2, 3}, 64},
                        Case{OpKind::kMaxPool2d, {1, 30, 30, 5}, Padding::kSame, 17, 17, 16, Activation::kRelu, {1, 2, 2, 5}, 64},
                        Case{OpKind::kAveragePool2d, {1, 40, 40, 5}, Padding::kValid, 40, 40, 1, Activation::kNone, {1, 1, 1, 5}, 128},
                        // a classifier's 7x7 global average pool
                        Case{OpKind::kAveragePool2d, {1, 7, 7, 42}, Padding::kValid, 7, 7, 1, Activation::kNone, {1, 1, 1, 42}, 32}}) {
    SCOPED_TRACE(std::string(c.op == OpKind::kMaxPool2d ? "max" : "average") + " pool over " + ShapeToString(c.in));
    testing::OneOp g;
    const int x = g.Input(c.in);
    PoolAttributes a;
    a.padding = c.padding;
    a.filter_h = c.filter_h;
    a.filter_w = c.filter_w;
    a.stride_h = a.stride_w = c.stride;
    a.activation = c.activation;
    g.Out(g.Op(c.op, a, {x}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
    const auto& infos = delegate_->dispatch_infos().back();
    EXPECT_TRUE(std::any_of(infos.begin(), infos.end(), [&](const GpuDelegate::DispatchInfo& d) {
      return d.workgroup == tuning::Workgroup{c.threads, 1, 1};
    })) << "no split-reduction dispatch of " << c.threads << " invocations per output";
  }
  {  // fused into one dispatch with a PAD before (its zeros are averaged in) and a MUL after
    testing::OneOp g;
    const int x = g.Input({1, 30, 28, 6});
    const int padded = g.Op(OpKind::kPad, {}, {x, g.b.ConstantInt({4, 2}, {0, 0, 1, 2, 2, 1, 0, 0})}, {{1, 33, 31, 6}})[0];
    PoolAttributes a;
    a.padding = Padding::kValid;
    a.filter_h = a.filter_w = 17;
    a.stride_h = a.stride_w = 16;
    const int pooled = g.Op(OpKind::kAveragePool2d, a, {padded}, {{1, 2, 1, 6}})[0];
    g.Out(g.Op(OpKind::kMul, ElementwiseAttributes{}, {pooled, g.Const({6})}, {{1, 2, 1, 6}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
    const auto& infos = delegate_->dispatch_infos().back();
    EXPECT_TRUE(std::any_of(infos.begin(), infos.end(), [](const GpuDelegate::DispatchInfo& d) {
      return d.workgroup == tuning::Workgroup{64, 1, 1} && d.nodes.size() == 3;
    })) << "PAD, pool and MUL are not one split-reduction dispatch";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
