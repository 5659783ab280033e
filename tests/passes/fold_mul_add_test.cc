// FoldMulAddIntoConvolutions on small graphs: what it folds, into which
// weights and bias, and what it must leave alone.
#include <gtest/gtest.h>

#include "model/constants.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "passes/fold_mul_add.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::WholeGraph;

// x [1,3,3,2] -> CONV_2D 1x1 (2 -> 2 channels, weights 1..4, bias 10, 20)
// -> `op` with constant `k` -> (optionally) a second reader of the conv.
struct ConvGraph {
  Graph graph;
  int conv_out = -1;
};
ConvGraph ConvThen(OpKind op, const std::vector<float>& k, Activation conv_activation = Activation::kNone,
                  bool second_reader = false, bool conv_output_escapes = false) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 3, 2});
  ops::Conv2dAttributes a;
  a.activation = conv_activation;
  const int c = b.Tensor({1, 3, 3, 2});
  b.Op(OpKind::kConv2d, a, {x, b.Constant({2, 1, 1, 2}, {1, 2, 3, 4}), b.Constant({2}, {10, 20})}, {c});
  const int y = b.Tensor({1, 3, 3, 2});
  b.Op(op, ops::ElementwiseAttributes{Activation::kRelu6},
       {c, b.Constant(k.size() == 1 ? Shape{1} : Shape{static_cast<int>(k.size())}, k)}, {y});
  b.Output(y);
  if (second_reader) {
    const int z = b.Tensor({1, 3, 3, 2});
    b.Op(OpKind::kRelu, {}, {c}, {z});
    b.Output(z);
  }
  if (conv_output_escapes) b.Output(c);
  return {b.Build(), c};
}

TEST(FoldMulAdd, APerChannelMulScalesTheWeightsAndTheBias) {
  auto [g, conv_out] = ConvThen(OpKind::kMul, {2.0f, -0.5f});
  Subgraph s = WholeGraph(g);
  FoldMulAddIntoConvolutions(s);
  ASSERT_EQ(s.nodes, std::vector<int>{0});
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.outputs[0], g.outputs[0]);  // the convolution writes the MUL's output
  const auto* a = FindAttributes<ops::Conv2dAttributes>(conv.attributes);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->activation, Activation::kRelu6);
  // OHWI: output channel 0 is weights 1, 2; channel 1 is 3, 4.
  EXPECT_EQ(ConstantFloats(g.tensors[static_cast<size_t>(conv.inputs[1])]), (std::vector<float>{2, 4, -1.5f, -2}));
  EXPECT_EQ(ConstantFloats(g.tensors[static_cast<size_t>(conv.inputs[2])]), (std::vector<float>{20, -10}));
  // The model's own weights are left as they were (they may be shared).
  EXPECT_EQ(ConstantFloats(g.tensors[2]), (std::vector<float>{1, 2, 3, 4}));
}

TEST(FoldMulAdd, AScalarAddGoesIntoTheBias) {
  auto [g, conv_out] = ConvThen(OpKind::kAdd, {0.25f});
  Subgraph s = WholeGraph(g);
  FoldMulAddIntoConvolutions(s);
  ASSERT_EQ(s.nodes, std::vector<int>{0});
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.inputs[1], 2);  // weights unchanged
  EXPECT_EQ(ConstantFloats(g.tensors[static_cast<size_t>(conv.inputs[2])]), (std::vector<float>{10.25f, 20.25f}));
}

TEST(FoldMulAdd, LeavesWhatItCannotFold) {
  struct Case {
    const char* why;
    ConvGraph graph;
  };
  Case cases[] = {
      {"the convolution has an activation", ConvThen(OpKind::kMul, {2, 3}, Activation::kRelu)},
      {"the convolution's output has another reader", ConvThen(OpKind::kMul, {2, 3}, Activation::kNone, true)},
      {"the convolution's output leaves the partition", ConvThen(OpKind::kMul, {2, 3}, Activation::kNone, false, true)},
      {"a SUB is not folded", ConvThen(OpKind::kSub, {2, 3})},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.why);
    Graph& g = c.graph.graph;
    const size_t nodes = g.nodes.size(), tensors = g.tensors.size();
    Subgraph s = WholeGraph(g);
    FoldMulAddIntoConvolutions(s);
    EXPECT_EQ(s.nodes.size(), nodes);
    EXPECT_EQ(g.tensors.size(), tensors);
    EXPECT_EQ(g.nodes[0].outputs[0], c.graph.conv_out);
  }
}

}  // namespace
}  // namespace mgd
