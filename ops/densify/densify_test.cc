// DENSIFY: TFLite's sparse encodings by hand.
#include "ops/densify/densify.h"

#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

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

}  // namespace
}  // namespace mgd::ops
