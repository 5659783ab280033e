// The accuracy guard in the compiler: in an fp16 compile with fp16
// arithmetic, a dispatch that runs a layer named in CompileOptions::
// fp32_layers computes and sums in fp32 (no mediump), whether the name is
// the layer's as the model has it or as the graph passes left it; the
// others keep fp16 arithmetic. (The search for those layers, mgd tune
// --accuracy, is tested end to end in tests/cli/cli_test.sh.)
#include <gtest/gtest.h>

#include "delegate/compiler.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::Uniform;

// conv -> MUL by a constant (folded into the conv) -> RELU, then a second
// conv: two dispatches once fused.
Graph TwoLayers() {
  GraphBuilder b;
  const int x = b.Input({1, 6, 6, 8}, "input");
  ops::Conv2dAttributes a;
  auto conv = [&](int in, const std::string& name, uint32_t seed) {
    const int y = b.Tensor({1, 6, 6, 8}, DataType::kFloat32, name);
    b.Op(OpKind::kConv2d, a, {in, b.Constant({8, 3, 3, 8}, Uniform(576, seed, 0.2f)), b.Constant({8}, Uniform(8, seed + 1))}, {y});
    return y;
  };
  const int c = conv(x, "conv1", 1);
  const int m = b.Tensor({1, 6, 6, 8}, DataType::kFloat32, "scaled");
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {c, b.Constant({8}, Uniform(8, 3))}, {m});
  const int r = b.Tensor({1, 6, 6, 8}, DataType::kFloat32, "relu");
  b.Op(OpKind::kRelu, {}, {m}, {r});
  b.Output(conv(r, "conv2", 4));
  return b.Build();
}

// Per model-node dispatch: whether it computes in fp16 (mediump).
std::vector<std::pair<std::string, bool>> Dispatches(const std::vector<std::string>& fp32_layers, Precision precision) {
  const Graph graph = TwoLayers();
  const Partition partition{{0, 1, 2, 3}, {graph.inputs[0]}, {graph.outputs[0]}};
  CompileOptions options;
  options.precision = precision;
  options.fp32_layers = fp32_layers;
  auto model = CompilePartition(graph, partition, options);
  EXPECT_TRUE(model.ok()) << model.status();
  std::vector<std::pair<std::string, bool>> out;
  if (!model.ok()) return out;
  for (const CompiledDispatch& d : model->dispatches) {
    if (!d.nodes.empty()) out.emplace_back(d.code.name, d.code.mediump);
  }
  return out;
}

TEST(AccuracyGuard, NamedLayersComputeInFp32) {
  const auto plain = Dispatches({}, Precision::Fp16());
  ASSERT_EQ(plain.size(), 2u);  // conv1 (MUL folded, RELU fused) and conv2
  EXPECT_TRUE(plain[0].second && plain[1].second);
  EXPECT_EQ(plain[0].first.find("_fp32"), std::string::npos);

  // By the conv's own name (which the MUL's fold replaced), by the folded
  // MUL's, by the fused RELU's: the first dispatch each time.
  for (const std::string layer : {"conv1", "scaled", "relu"}) {
    const auto guarded = Dispatches({layer}, Precision::Fp16());
    ASSERT_EQ(guarded.size(), 2u) << layer;
    EXPECT_FALSE(guarded[0].second) << layer;
    EXPECT_NE(guarded[0].first.find("_fp32"), std::string::npos) << layer << ": " << guarded[0].first;
    EXPECT_TRUE(guarded[1].second) << layer;
  }
  const auto second = Dispatches({"conv2"}, Precision::Fp16());
  EXPECT_TRUE(second[0].second);
  EXPECT_FALSE(second[1].second);
  // A name no layer has changes nothing.
  EXPECT_EQ(Dispatches({"no such layer"}, Precision::Fp16()), plain);
}

TEST(AccuracyGuard, NothingChangesWithoutFp16Arithmetic) {
  Precision storage_only = Precision::Fp16();
  storage_only.arithmetic = ArithmeticType::kFloat32;
  EXPECT_EQ(Dispatches({"conv1"}, storage_only), Dispatches({}, storage_only));
  EXPECT_EQ(Dispatches({"conv1"}, Precision::Fp32()), Dispatches({}, Precision::Fp32()));
}

}  // namespace
}  // namespace mgd
