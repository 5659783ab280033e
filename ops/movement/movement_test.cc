// PAD, MIRROR_PAD, TILE, TRANSPOSE, SLICE and STRIDED_SLICE: the CPU kernels
// against index arithmetic and by hand, the GPU against the CPU.
#include "ops/movement/movement.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

// ---------------------------------------------------------------------------
// Data movement: PAD, TRANSPOSE, SLICE, STRIDED_SLICE
// ---------------------------------------------------------------------------

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

TEST(TileTest, ByHand) {
  // [[1,2],[3,4]] tiled [2,3] -> 4x6.
  const auto out = RunSingleOp(OpKind::kTile, {}, {In({2, 2}, {1, 2, 3, 4}), Ints({2}, {2, 3})}, {4, 6});
  EXPECT_EQ(out, (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

TEST(TileTest, MatchesIndexMathAndRefusesBadMultiples) {
  const Shape xs{2, 3, 1, 5};
  const auto x = Random(Count(xs), 5100);
  const Shape ys{4, 3, 3, 10};
  std::vector<float> expected;
  for (int64_t i = 0; i < NumElements(ys); ++i) {
    auto idx = Unravel(i, ys);
    for (size_t d = 0; d < 4; ++d) idx[d] %= xs[d];
    expected.push_back(x[static_cast<size_t>(Ravel(idx, xs))]);
  }
  EXPECT_EQ(RunSingleOp(OpKind::kTile, {}, {In(xs, x), Ints({4}, {2, 1, 3, 2})}, ys), expected);
  EXPECT_THAT(CreateStatus(OpKind::kTile, {}, {In({2, 2}, {}), Ints({3}, {1, 1, 1})}, {{2, 2}}).message(),
              HasSubstr("multiples has 3 entries for an input of rank 2"));
  EXPECT_THAT(CreateStatus(OpKind::kTile, {}, {In({2, 2}, {}), Ints({2}, {1, -1})}, {{2, 2}}).message(),
              HasSubstr("multiples[1] = -1 is out of range"));
}

TEST(MirrorPadTest, ReflectAndSymmetricByHand) {
  // [1,2,3] padded [2, 2]: REFLECT 3 2 | 1 2 3 | 2 1; SYMMETRIC 2 1 | 1 2 3 | 3 2.
  EXPECT_EQ(RunSingleOp(OpKind::kMirrorPad, MirrorPadAttributes{false}, {In({3}, {1, 2, 3}), Ints({1, 2}, {2, 2})}, {7}),
            (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(RunSingleOp(OpKind::kMirrorPad, MirrorPadAttributes{true}, {In({3}, {1, 2, 3}), Ints({1, 2}, {2, 2})}, {7}),
            (std::vector<float>{2, 1, 1, 2, 3, 3, 2}));
  // 2-D: [[1,2],[3,4]] SYMMETRIC by [[1,0],[0,1]] -> [[1,2,2],[1,2,2],[3,4,4]].
  EXPECT_EQ(RunSingleOp(OpKind::kMirrorPad, MirrorPadAttributes{true}, {In({2, 2}, {1, 2, 3, 4}), Ints({2, 2}, {1, 0, 0, 1})},
                        {3, 3}),
            (std::vector<float>{1, 2, 2, 1, 2, 2, 3, 4, 4}));
}

TEST(MirrorPadTest, MarginsPastTheMirrorAreErrors) {
  // REFLECT takes at most n - 1, SYMMETRIC n.
  EXPECT_THAT(CreateStatus(OpKind::kMirrorPad, MirrorPadAttributes{false}, {In({3}, {}), Ints({1, 2}, {3, 0})}, {{6}}).message(),
              HasSubstr("out of range for REFLECT (at most 2)"));
  EXPECT_TRUE(CreateStatus(OpKind::kMirrorPad, MirrorPadAttributes{true}, {In({3}, {}), Ints({1, 2}, {3, 0})}, {{6}}).ok());
}

using MovementGpuTest = testing::DelegateTest;

TEST_P(MovementGpuTest, TileAndMirrorPadMatchTheCpu) {
  struct Case {
    Shape in;
    std::vector<int32_t> values;  // TILE's multiples or MIRROR_PAD's paddings
    Shape out;
  };
  for (const Case& c : {Case{{1, 3, 4, 5}, {1, 2, 3, 2}, {1, 6, 12, 10}}, Case{{2, 1, 2, 3}, {2, 3, 1, 1}, {4, 3, 2, 3}},
                        Case{{3, 7}, {2, 3}, {6, 21}}}) {
    testing::OneOp g;
    const int x = g.Input(c.in);
    g.Out(g.Op(OpKind::kTile, {}, {x, g.b.ConstantInt({static_cast<int>(c.values.size())}, c.values)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  for (bool symmetric : {false, true}) {
    for (const Case& c : {Case{{1, 4, 5, 6}, {0, 0, 2, 3, 1, 3, 0, 0}, {1, 9, 9, 6}},
                          Case{{1, 4, 5, 6}, {0, 0, 1, 1, 0, 0, 3, 2}, {1, 6, 5, 11}},
                          Case{{5, 7}, {2, 1, 3, 4}, {8, 14}}}) {
      SCOPED_TRACE(::testing::Message() << ShapeToString(c.in) << (symmetric ? " SYMMETRIC" : " REFLECT"));
      testing::OneOp g;
      const int x = g.Input(c.in);
      const int rank = static_cast<int>(c.in.size());
      g.Out(g.Op(OpKind::kMirrorPad, MirrorPadAttributes{symmetric}, {x, g.b.ConstantInt({rank, 2}, c.values)}, {c.out}));
      ExpectSameAsCpu(g.b.Build(), g.data);
    }
  }
}

TEST_P(MovementGpuTest, PadInEveryDimension) {
  struct Case {
    Shape in;
    std::vector<int32_t> paddings;
    Shape out;
  };
  for (const Case& c : {Case{{1, 4, 5, 6}, {0, 0, 1, 2, 2, 1, 0, 0}, {1, 7, 8, 6}},
                        Case{{1, 4, 5, 6}, {0, 0, 0, 0, 0, 0, 0, 3}, {1, 4, 5, 9}},
                        Case{{1, 4, 5, 6}, {0, 0, 0, 0, 0, 0, 4, 1}, {1, 4, 5, 11}},
                        Case{{1, 4, 5, 6}, {0, 0, 1, 0, 0, 1, 2, 1}, {1, 5, 6, 9}},
                        Case{{1, 4, 5, 6}, {1, 0, 0, 0, 0, 0, 0, 0}, {2, 4, 5, 6}},
                        Case{{3, 5}, {1, 1, 2, 0}, {5, 7}}}) {
    testing::OneOp g;
    const int x = g.Input(c.in);
    const int rank = static_cast<int>(c.in.size());
    g.Out(g.Op(OpKind::kPad, {}, {x, g.b.ConstantInt({rank, 2}, c.paddings)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

TEST_P(MovementGpuTest, SlicesAndTransposes) {
  {
    testing::OneOp g;
    const int x = g.Input({1, 6, 7, 9});
    g.Out(g.Op(OpKind::kSlice, {}, {x, g.b.ConstantInt({4}, {0, 1, 2, 3}), g.b.ConstantInt({4}, {1, 3, 4, 5})},
               {{1, 3, 4, 5}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  struct Strided {
    Shape in;
    std::vector<int32_t> begin, end, strides;
    int shrink;
    Shape out;
  };
  for (const Strided& c : {Strided{{1, 6, 7, 9}, {0, 1, 0, 1}, {1, 6, 7, 9}, {1, 2, 3, 2}, 0, {1, 3, 3, 4}},
                           Strided{{1, 6, 7, 9}, {0, 5, 6, 8}, {1, 0, 0, 0}, {1, -1, -2, -3}, 0, {1, 5, 3, 3}},
                           Strided{{2, 4, 5, 6}, {1, 0, 0, 0}, {2, 4, 5, 6}, {1, 1, 1, 1}, 1, {4, 5, 6}}}) {
    testing::OneOp g;
    const int x = g.Input(c.in);
    StridedSliceAttributes a;
    a.shrink_axis_mask = c.shrink;
    g.Out(g.Op(OpKind::kStridedSlice, a,
               {x, g.b.ConstantInt({4}, c.begin), g.b.ConstantInt({4}, c.end), g.b.ConstantInt({4}, c.strides)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  struct Perm {
    Shape in;
    std::vector<int32_t> perm;
    Shape out;
  };
  for (const Perm& c : {Perm{{1, 3, 4, 5}, {0, 2, 1, 3}, {1, 4, 3, 5}}, Perm{{1, 3, 4, 5}, {0, 3, 1, 2}, {1, 5, 3, 4}},
                        Perm{{2, 3, 5}, {2, 0, 1}, {5, 2, 3}}}) {
    testing::OneOp g;
    const int x = g.Input(c.in);
    g.Out(g.Op(OpKind::kTranspose, {}, {x, g.b.ConstantInt({static_cast<int>(c.perm.size())}, c.perm)}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MovementGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
