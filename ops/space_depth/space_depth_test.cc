// SPACE_TO_DEPTH and DEPTH_TO_SPACE: the CPU kernel against the formula,
// the GPU against the CPU.
#include "ops/space_depth/space_depth.h"

#include "model/reader.h"
#include "model/writer.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

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

// The options table round-trips through the writer and the reader, and a
// block size below 1 is refused by name.
TEST(SpaceDepthTest, BlockSizeIsReadWrittenAndChecked) {
  for (int block : {3, 0}) {
    GraphBuilder b;
    const int x = b.Input({1, 6, 6, 2});
    const int y = b.Tensor({1, 2, 2, 18});
    b.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{block}, {x}, {y});
    b.Output(y);
    auto bytes = WriteModel(b.Build());
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto graph = ReadModel(bytes->data(), bytes->size(), "s2d.tflite");
    if (block == 3) {
      ASSERT_TRUE(graph.ok()) << graph.status();
      EXPECT_EQ(AttributesOf<BlockSizeAttributes>(graph->nodes[0].attributes).block_size, 3);
    } else {
      EXPECT_EQ(graph.status().message(),
                "s2d.tflite: node 0 (SPACE_TO_DEPTH): field block_size: 0 must be at least 1");
    }
  }
}

using SpaceDepthGpuTest = testing::DelegateTest;

TEST_P(SpaceDepthGpuTest, MatchesTheCpu) {
  using testing::OneOp;
  {
    OneOp g;
    const int x = g.Input({1, 3, 4, 8});
    const int d2s = g.Op(OpKind::kDepthToSpace, BlockSizeAttributes{2}, {x}, {{1, 6, 8, 2}})[0];
    g.Out(g.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{2}, {d2s}, {{1, 3, 4, 8}}));
    g.Out({d2s});
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {
    OneOp g;
    const int x = g.Input({1, 4, 6, 3});
    g.Out(g.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{2}, {x}, {{1, 2, 3, 12}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // block size 3, channels that do not fill slices, two batches
    OneOp g;
    const int x = g.Input({2, 2, 3, 18});
    const int d2s = g.Op(OpKind::kDepthToSpace, BlockSizeAttributes{3}, {x}, {{2, 6, 9, 2}})[0];
    g.Out({d2s});
    g.Out(g.Op(OpKind::kSpaceToDepth, BlockSizeAttributes{3}, {d2s}, {{2, 2, 3, 18}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SpaceDepthGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
