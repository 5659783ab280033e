// FoldActivationsIntoConvolutions on small graphs: what it folds and what it
// must leave alone.
#include <gtest/gtest.h>

#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "passes/fold_activations.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::WholeGraph;

// x [1,3,3,2] -> `conv` (1x1, 2 -> 2 channels) -> `op` [-> a second reader of
// the convolution's output] [the convolution's output a graph output].
struct ConvGraph {
  Graph graph;
  int conv_out = -1;
};
ConvGraph ConvThen(OpKind conv, OpKind op, Activation conv_activation = Activation::kNone, bool second_reader = false,
                   bool conv_output_escapes = false) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 3, 2});
  const int c = b.Tensor({1, 3, 3, 2});
  if (conv == OpKind::kConv2d) {
    ops::Conv2dAttributes a;
    a.activation = conv_activation;
    b.Op(conv, a, {x, b.Constant({2, 1, 1, 2}, {1, 2, 3, 4}), b.Constant({2}, {10, 20})}, {c});
  } else {
    ops::DepthwiseConv2dAttributes a;
    a.activation = conv_activation;
    b.Op(conv, a, {x, b.Constant({1, 1, 1, 2}, {1, 2}), b.Constant({2}, {10, 20})}, {c});
  }
  const int y = b.Tensor({1, 3, 3, 2});
  b.Op(op, {}, {c}, {y});
  b.Output(y);
  if (second_reader) {
    const int z = b.Tensor({1, 3, 3, 2});
    b.Op(OpKind::kRelu, {}, {c}, {z});
    b.Output(z);
  }
  if (conv_output_escapes) b.Output(c);
  return {b.Build(), c};
}

TEST(FoldActivations, AReluAfterAConvolutionBecomesItsActivation) {
  const std::pair<OpKind, Activation> folds[] = {
      {OpKind::kRelu, Activation::kRelu}, {OpKind::kRelu6, Activation::kRelu6}, {OpKind::kReluN1To1, Activation::kReluN1To1}};
  for (OpKind conv : {OpKind::kConv2d, OpKind::kDepthwiseConv2d}) {
    for (const auto& [op, activation] : folds) {
      SCOPED_TRACE(std::string(OpName(conv)) + " then " + OpName(op));
      auto [g, conv_out] = ConvThen(conv, op);
      Subgraph s = WholeGraph(g);
      FoldActivationsIntoConvolutions(s);
      ASSERT_EQ(s.nodes, std::vector<int>{0});
      EXPECT_EQ(g.nodes[0].outputs[0], g.outputs[0]);  // the convolution writes the RELU's output
      EXPECT_EQ(ops::ConvolutionActivation(g.nodes[0]), activation);
      EXPECT_EQ(s.folded[0], std::vector<int>{1});  // the accuracy guard still finds the RELU's name
    }
  }
}

TEST(FoldActivations, LeavesWhatItCannotFold) {
  struct Case {
    const char* why;
    ConvGraph graph;
  };
  Case cases[] = {
      {"the convolution has an activation", ConvThen(OpKind::kConv2d, OpKind::kRelu, Activation::kRelu6)},
      {"the convolution's output has another reader", ConvThen(OpKind::kConv2d, OpKind::kRelu, Activation::kNone, true)},
      {"the convolution's output leaves the partition",
       ConvThen(OpKind::kConv2d, OpKind::kRelu6, Activation::kNone, false, true)},
      {"a LOGISTIC is no fused activation", ConvThen(OpKind::kConv2d, OpKind::kLogistic)},
      {"TANH is one, but does not commute with fp16's rounding", ConvThen(OpKind::kConv2d, OpKind::kTanh)},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.why);
    Graph& g = c.graph.graph;
    const size_t nodes = g.nodes.size();
    const Activation before = ops::ConvolutionActivation(g.nodes[0]);
    Subgraph s = WholeGraph(g);
    FoldActivationsIntoConvolutions(s);
    EXPECT_EQ(s.nodes.size(), nodes);
    EXPECT_EQ(g.nodes[0].outputs[0], c.graph.conv_out);
    EXPECT_EQ(ops::ConvolutionActivation(g.nodes[0]), before);
  }
}

}  // namespace
}  // namespace mgd
