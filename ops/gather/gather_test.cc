// GATHER: the CPU kernel by hand (embeddings, axes, batch_dims, any params
// dtype) and against index arithmetic, its errors, and the GPU against the
// CPU with constant and run-time (token id) indices.
#include "ops/gather/gather.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

TEST(GatherTest, EmbeddingLookupByHand) {
  // Rows 2, 0, 2, 3 of a 4x3 table, as a [2, 2] batch of token ids.
  const std::vector<float> table = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
  EXPECT_EQ(RunSingleOp(OpKind::kGather, GatherAttributes{}, {Const({4, 3}, table), Ints({2, 2}, {2, 0, 2, 3})}, {2, 2, 3}),
            (std::vector<float>{20, 21, 22, 0, 1, 2, 20, 21, 22, 30, 31, 32}));
  // Columns 2 and 0 (axis 1, or -1 from the end).
  for (int axis : {1, -1}) {
    EXPECT_EQ(RunSingleOp(OpKind::kGather, GatherAttributes{axis, 0}, {In({2, 3}, {1, 2, 3, 4, 5, 6}), Ints({2}, {2, 0})}, {2, 2}),
              (std::vector<float>{3, 1, 6, 4}));
  }
  // batch_dims 1: each row picks its own columns: row 0 takes 2, 2 and row 1 takes 0, 1.
  EXPECT_EQ(RunSingleOp(OpKind::kGather, GatherAttributes{1, 1}, {In({2, 3}, {1, 2, 3, 4, 5, 6}), Ints({2, 2}, {2, 2, 0, 1})},
                        {2, 2}),
            (std::vector<float>{3, 3, 4, 5}));
}

TEST(GatherTest, IntParamsAndInt64Indices) {
  auto out = RunTyped(OpKind::kGather, GatherAttributes{},
                      {Values<int32_t>(DataType::kInt32, {3}, {7, -8, 9}), Values<int64_t>(DataType::kInt64, {4}, {1, 1, 0, 2})},
                      DataType::kInt32, {4});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(As<int32_t>(*out), (std::vector<int32_t>{-8, -8, 7, 9}));
  auto mask = RunTyped(OpKind::kGather, GatherAttributes{},
                       {Values<uint8_t>(DataType::kBool, {2, 2}, {1, 0, 0, 1}), Values<int32_t>(DataType::kInt32, {1}, {1})},
                       DataType::kBool, {1, 2});
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, (std::vector<uint8_t>{0, 1}));
}

struct Case {
  Shape params, indices;
  GatherAttributes a;
  Shape out;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {{5, 6, 7}, {3}, {0, 0}, {3, 6, 7}},
      {{2, 5, 6, 7}, {4}, {1, 0}, {2, 4, 6, 7}},
      {{5, 6, 7}, {2, 2}, {1, 0}, {5, 2, 2, 7}},
      {{2, 5, 6, 7}, {3}, {-1, 0}, {2, 5, 6, 3}},  // channels, from the end
      {{3, 9, 5}, {3, 4}, {1, 1}, {3, 4, 5}},      // batch_dims: per-batch rows
      {{6, 10}, {1, 5}, {0, 0}, {1, 5, 10}},       // token ids into a table
  };
  return cases;
}

// Indices spread over the axis, with repeats; the axis is found as the
// planner does.
std::vector<int32_t> IndicesFor(const Case& c) {
  const int rank = static_cast<int>(c.params.size());
  const int axis = c.a.axis < 0 ? c.a.axis + rank : c.a.axis;
  std::vector<int32_t> v;
  for (int64_t i = 0; i < NumElements(c.indices); ++i) v.push_back(static_cast<int32_t>((i * 7 + 3) % c.params[static_cast<size_t>(axis)]));
  return v;
}

TEST(GatherTest, MatchesIndexArithmetic) {
  uint32_t seed = 8100;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(::testing::Message() << ShapeToString(c.params) << " by " << ShapeToString(c.indices) << " axis " << c.a.axis);
    const auto params = Random(Count(c.params), seed++);
    const auto indices = IndicesFor(c);
    const int rank = static_cast<int>(c.params.size());
    const size_t axis = static_cast<size_t>(c.a.axis < 0 ? c.a.axis + rank : c.a.axis);
    const size_t batch_dims = static_cast<size_t>(c.a.batch_dims);
    const size_t index_dims = c.indices.size() - batch_dims;
    std::vector<double> expected;
    for (int64_t i = 0; i < NumElements(c.out); ++i) {
      const std::vector<int> o = Unravel(i, c.out);
      // The index: batch coordinates, then the output's coordinates at the axis.
      std::vector<int> at_index(o.begin(), o.begin() + static_cast<long>(batch_dims));
      at_index.insert(at_index.end(), o.begin() + static_cast<long>(axis), o.begin() + static_cast<long>(axis + index_dims));
      std::vector<int> at_params(o.begin(), o.begin() + static_cast<long>(axis));
      at_params.push_back(indices[static_cast<size_t>(Ravel(at_index, c.indices))]);
      at_params.insert(at_params.end(), o.begin() + static_cast<long>(axis + index_dims), o.end());
      expected.push_back(params[static_cast<size_t>(Ravel(at_params, c.params))]);
    }
    ExpectClose(RunSingleOp(OpKind::kGather, c.a, {In(c.params, params), Ints(c.indices, indices)}, c.out), expected);
  }
}

TEST(GatherTest, BadAttributesAndIndicesAreErrors) {
  EXPECT_THAT(CreateStatus(OpKind::kGather, GatherAttributes{2, 0}, {In({2, 3}, {}), Ints({1}, {0})}, {{2, 1}}).message(),
              HasSubstr("axis 2 is out of range for params [2,3]"));
  EXPECT_THAT(CreateStatus(OpKind::kGather, GatherAttributes{1, 1}, {In({2, 3}, {}), Ints({3, 1}, {0, 0, 0})}, {{2, 1}}).message(),
              HasSubstr("differ in batch dimension 0"));
  EXPECT_THAT(CreateStatus(OpKind::kGather, GatherAttributes{0, 1}, {In({2, 3}, {}), Ints({2, 1}, {0, 0})}, {{2, 1}}).message(),
              HasSubstr("batch_dims 1 is out of range"));
  // An index outside the axis fails the invoke, naming it (TFLite's too).
  auto out = RunTyped(OpKind::kGather, GatherAttributes{},
                      {Values<float>(DataType::kFloat32, {3}, {1, 2, 3}), Values<int32_t>(DataType::kInt32, {2}, {1, 3})},
                      DataType::kFloat32, {2});
  EXPECT_THAT(out.status().message(), HasSubstr("indices[1] = 3 is out of range [0, 3)"));
}

using GatherGpuTest = testing::DelegateTest;

TEST_P(GatherGpuTest, ConstantIndicesMatchTheCpu) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(::testing::Message() << ShapeToString(c.params) << " by " << ShapeToString(c.indices) << " axis " << c.a.axis);
    testing::OneOp g;
    const int params = g.Input(c.params);
    g.Out(g.Op(OpKind::kGather, c.a, {params, g.b.ConstantInt(c.indices, IndicesFor(c))}, {c.out}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

// Token ids as the model's int32 input into a constant table, an embedding's
// lookup: the GPU reads the ids as the app gave them.
TEST_P(GatherGpuTest, TokenIdsIntoATableMatchTheCpu) {
  testing::GraphBuilder b;
  const int table = b.Constant({50, 13}, testing::Uniform(50 * 13, 8200));
  const int ids = b.Tensor({1, 9}, DataType::kInt32, "ids");
  b.graph().inputs.push_back(ids);
  const int embedded = b.Tensor({1, 9, 13});
  b.Op(OpKind::kGather, GatherAttributes{}, {table, ids}, {embedded});
  const int out = b.Tensor({1, 9, 13});
  b.Op(OpKind::kAbs, {}, {embedded}, {out});  // a float op after it, in the same partition
  b.Output(out);
  const std::vector<int32_t> tokens = {49, 0, 7, 7, 31, 2, 48, 13, 25};
  const auto* begin = reinterpret_cast<const uint8_t*>(tokens.data());
  const std::vector<std::vector<uint8_t>> inputs = {{begin, begin + tokens.size() * sizeof(int32_t)}};
  const Graph graph = b.Build();
  ExpectNear(testing::RunWithBytes(graph, inputs, delegate_.get()), testing::RunWithBytes(graph, inputs, nullptr));
}

INSTANTIATE_TEST_SUITE_P(Backends, GatherGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::ops
