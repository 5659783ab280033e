// The GPU delegate across ops: fp16 storage and program sharing, on both APIs
// and both precisions (each op's own GPU tests are in its folder under ops/).
#include <array>

#include "model/fp16.h"
#include "model/op_kind.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using testing::Uniform;
using GpuDelegateTest = testing::DelegateTest;

// fp16 really stores halves: x + 0 comes back rounded to fp16.
TEST_P(GpuDelegateTest, Fp16PrecisionStoresHalves) {
  GraphBuilder b;
  const int x = b.Input({1, 1, 1, 3}), y = b.Tensor({1, 1, 1, 3});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, b.Constant({1}, {0.0f})}, {y});
  b.Output(y);
  const std::vector<float> in = {1.0f / 3, 0.1f, -2.0f / 7};
  const auto out = Run(b.Build(), {in}, delegate_.get());
  ASSERT_EQ(out.size(), 1u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[0][i], GetParam().fp16 ? HalfToFloat(FloatToHalf(in[i])) : in[i]) << i;
  }
}

// With share_programs, convolutions alike but for their input depth share
// one program, reading the sizes that differ as parameters
// (shaders/parameters.h), and still compute what the CPU does; by default
// each shape has its own.
TEST_P(GpuDelegateTest, DispatchesAlikeButForSizesShareAProgram) {
  GraphBuilder b;
  int t = b.Input({1, 8, 8, 4}), depth = 4;
  uint32_t seed = 40;
  for (int k = 0; k < 3; ++k) {  // 4 -> 8, 8 -> 8, 8 -> 8 channels
    const int w = b.Constant({8, 3, 3, depth}, Uniform(static_cast<size_t>(8 * 9 * depth), seed++, 0.2f));
    const int bias = b.Constant({8}, Uniform(8, seed++));
    const int y = b.Tensor({1, 8, 8, 8});
    ops::Conv2dAttributes a;
    a.padding = Padding::kSame;
    a.activation = Activation::kRelu6;
    b.Op(OpKind::kConv2d, a, {t, w, bias}, {y});
    t = y;
    depth = 8;
  }
  b.Output(t);
  const Graph graph = b.Build();
  const std::vector<std::vector<float>> input = {Uniform(8 * 8 * 4, seed)};
  const auto cpu = Run(graph, input, nullptr);
  // The convolutions' dispatches: 1..3 (0 and 4 convert the layouts).
  auto conv_programs = [](const GpuDelegate& delegate) {
    const auto& infos = delegate.dispatch_infos().back();
    EXPECT_EQ(infos.size(), 5u);
    EXPECT_EQ(infos[1].workgroup, infos[2].workgroup) << "the tables gave equal shapes different workgroups";
    return std::array<size_t, 3>{infos[1].program, infos[2].program, infos[3].program};
  };
  ExpectNear(Run(graph, input, delegate_.get()), cpu);
  const std::array<size_t, 3> own = conv_programs(*delegate_);
  EXPECT_NE(own[0], own[1]);
  EXPECT_EQ(own[1], own[2]);  // the same shape: the same source, whatever the weights

  const std::unique_ptr<GpuDelegate> sharing = MakeDelegate(/*fusion=*/true, /*share_programs=*/true);
  ASSERT_NE(sharing, nullptr);
  ExpectNear(Run(graph, input, sharing.get()), cpu);
  const std::array<size_t, 3> shared = conv_programs(*sharing);
  EXPECT_EQ(shared[0], shared[1]);
  EXPECT_EQ(shared[1], shared[2]);
  EXPECT_THAT(sharing->device().validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuDelegateTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
