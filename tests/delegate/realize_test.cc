// A realized partition's shared part (programs, constants) serves several
// executions, each with its own activations and user-side buffers: two
// executions interleaved give what each gives alone, bit for bit.
#include "delegate/compiler.h"
#include "delegate/realize.h"
#include "delegate/workgroups.h"
#include "ops/conv/conv.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::Uniform;

// conv -> RELU -> conv, each conv 3x3 over 6 channels: activations that
// two executions must not share.
Graph TwoConvolutions() {
  GraphBuilder b;
  const int x = b.Input({1, 9, 11, 6});
  ops::Conv2dAttributes a;
  int t = x;
  for (int k = 0; k < 2; ++k) {
    const int y = b.Tensor({1, 9, 11, 6});
    b.Op(OpKind::kConv2d, a, {t, b.Constant({6, 3, 3, 6}, Uniform(324, 10 + k, 0.3f)), b.Constant({6}, Uniform(6, 20 + k))},
         {y});
    t = y;
    if (k == 0) {
      const int r = b.Tensor({1, 9, 11, 6});
      b.Op(OpKind::kRelu, {}, {t}, {r});
      t = r;
    }
  }
  b.Output(t);
  return b.Build();
}

using RealizeTest = testing::DelegateTest;

TEST_P(RealizeTest, ExecutionsOfOneSharedPartAreIndependent) {
  const Graph graph = TwoConvolutions();
  const Partition partition{{0, 1, 2}, {graph.inputs[0]}, {graph.outputs[0]}};
  CompileOptions options;
  options.precision = Precision::Of(GetParam().fp16);
  auto model = CompilePartition(graph, partition, options);
  ASSERT_TRUE(model.ok()) << model.status();
  gpu::Device& device = delegate_->device();
  ChooseWorkgroups(*model, {}, device.info());
  RealizeOptions realize;
  realize.api = GetParam().api;
  auto prepared = Realize(device, *model, realize);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  auto second = NewExecution(device, *model, *prepared->shared, false, {});
  ASSERT_TRUE(second.ok()) << second.status();
  Execution& a = prepared->execution;
  Execution& b = *second;
  for (const auto& buffer : b.buffers) {
    for (const auto& other : a.buffers) EXPECT_NE(buffer.get(), other.get());
  }

  const size_t in_bytes = 9 * 11 * 6 * 4, out_bytes = in_bytes;
  const std::vector<float> in_a = Uniform(9 * 11 * 6, 1), in_b = Uniform(9 * 11 * 6, 2);
  auto run_alone = [&](Execution& e, const std::vector<float>& in) {
    std::vector<float> out(in.size());
    EXPECT_TRUE(device.Upload(*e.inputs[0], in.data(), in_bytes).ok());
    EXPECT_TRUE(device.Run(*e.recording).ok());
    EXPECT_TRUE(device.Download(*e.outputs[0], out.data(), out_bytes).ok());
    return out;
  };
  const std::vector<float> alone_a = run_alone(a, in_a), alone_b = run_alone(b, in_b);
  EXPECT_NE(alone_a, alone_b);
  // Interleaved: both uploaded, both run, then both read.
  ASSERT_TRUE(device.Upload(*a.inputs[0], in_a.data(), in_bytes).ok());
  ASSERT_TRUE(device.Upload(*b.inputs[0], in_b.data(), in_bytes).ok());
  ASSERT_TRUE(device.Run(*a.recording).ok());
  ASSERT_TRUE(device.Run(*b.recording).ok());
  std::vector<float> out_a(in_a.size()), out_b(in_b.size());
  ASSERT_TRUE(device.Download(*a.outputs[0], out_a.data(), out_bytes).ok());
  ASSERT_TRUE(device.Download(*b.outputs[0], out_b.data(), out_bytes).ok());
  EXPECT_EQ(out_a, alone_a);
  EXPECT_EQ(out_b, alone_b);
  // And what they give is the CPU's within the bounds.
  ExpectNear({alone_a}, Run(graph, {in_a}, nullptr), 2.0);
  ExpectNear({alone_b}, Run(graph, {in_b}, nullptr), 2.0);
}

INSTANTIATE_TEST_SUITE_P(Backends, RealizeTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
