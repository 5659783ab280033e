// RemoveNoOps: each kind of node that moves no data becomes an alias, a
// chain of them resolves to the first real tensor, and nodes that do move
// data stay.
#include <gtest/gtest.h>

#include "ops/concatenation/concatenation.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "passes/remove_no_ops.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::WholeGraph;

// Shapes are stored alike when they have the same number of elements and
// the same last dimension (enough for these graphs).
bool SameStorage(const Shape& a, const Shape& b) { return NumElements(a) == NumElements(b) && a.back() == b.back(); }

TEST(RemoveNoOps, EachKindBecomesAnAliasAndChainsResolve) {
  GraphBuilder b;
  const int x = b.Input({1, 2, 3, 4});
  const int r = b.Tensor({2, 3, 4}), p = b.Tensor({2, 3, 4}), c = b.Tensor({2, 3, 4}), s = b.Tensor({2, 3, 4});
  const int z = b.Tensor({1, 6, 4}), e = b.Tensor({1, 6, 4});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {x, b.ConstantInt({3}, {2, 3, 4})}, {r});
  b.Op(OpKind::kPad, {}, {r, b.ConstantInt({3, 2}, {0, 0, 0, 0, 0, 0})}, {p});
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{}, {p}, {c});
  b.Op(OpKind::kSlice, {}, {c, b.ConstantInt({3}, {0, 0, 0}), b.ConstantInt({3}, {-1, -1, -1})}, {s});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {s, b.ConstantInt({3}, {1, 6, 4})}, {z});
  b.Op(OpKind::kTanh, {}, {z}, {e});  // moves data: stays
  b.Output(e);
  Graph g = b.Build();
  Subgraph sub = WholeGraph(g);
  RemoveNoOps(sub, SameStorage);
  EXPECT_EQ(sub.nodes, std::vector<int>{5});
  for (int t : {r, p, c, s, z}) EXPECT_EQ(sub.Resolve(t), x) << "tensor " << t;
  EXPECT_EQ(sub.Resolve(e), e);
}

TEST(RemoveNoOps, NodesThatMoveDataStay) {
  GraphBuilder b;
  const int x = b.Input({1, 2, 3, 4});
  const int p = b.Tensor({1, 2, 3, 6}), s = b.Tensor({1, 2, 2, 4}), q = b.Tensor({1, 4, 6, 4}), r = b.Tensor({1, 3, 2, 4});
  b.Op(OpKind::kPad, {}, {x, b.ConstantInt({4, 2}, {0, 0, 0, 0, 0, 0, 1, 1})}, {p});          // pads channels
  b.Op(OpKind::kSlice, {}, {x, b.ConstantInt({4}, {0, 0, 1, 0}), b.ConstantInt({4}, {-1, -1, -1, -1})}, {s});
  b.Op(OpKind::kResizeNearestNeighbor, ops::ResizeAttributes{}, {x, b.ConstantInt({2}, {4, 6})}, {q});
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {x, b.ConstantInt({4}, {1, 3, 2, 4})}, {r});
  for (int t : {p, s, q, r}) b.Output(t);
  Graph g = b.Build();
  Subgraph sub = WholeGraph(g);
  // A backend that stores [1,2,3,4] and [1,3,2,4] differently keeps the
  // reshape.
  RemoveNoOps(sub, [](const Shape& a, const Shape& b) { return a == b; });
  EXPECT_EQ(sub.nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(sub.aliases.empty());
}

}  // namespace
}  // namespace mgd
