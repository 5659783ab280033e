// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: the CPU kernel against
// TFLite's reference definitions, the GPU against the CPU.
#include "ops/resize/resize.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

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

using ResizeGpuTest = testing::DelegateTest;

TEST_P(ResizeGpuTest, MatchesTheCpu) {
  for (OpKind op : {OpKind::kResizeBilinear, OpKind::kResizeNearestNeighbor}) {
    for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
      for (auto [in, out] : {std::pair{Shape{1, 5, 7, 6}, Shape{1, 9, 13, 6}}, std::pair{Shape{1, 8, 8, 5}, Shape{1, 3, 4, 5}}}) {
        SCOPED_TRACE(::testing::Message() << OpName(op) << " align " << align << " half " << half << " "
                                          << ShapeToString(out));
        testing::OneOp g;
        const int x = g.Input(in);
        g.Out(g.Op(op, ResizeAttributes{align, half}, {x, g.b.ConstantInt({2}, {out[1], out[2]})}, {out}));
        ExpectSameAsCpu(g.b.Build(), g.data);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ResizeGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
