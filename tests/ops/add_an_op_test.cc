// "How to add an op" (docs/design.md), kept honest: a tiny op defined here,
// outside mgd, through the same OpDefinition and registration as the
// families in ops/ use, and then read from a .tflite file, validated, run on
// the CPU, run fully on the GPU on both APIs, and written back. If adding an
// op ever needs an edit anywhere else, this test stops compiling or fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/reader.h"
#include "model/writer.h"
#include "model/status_macros.h"
#include "ops/registry.h"
#include "shaders/ops.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

// A made-up builtin code, so that the test op never meets a real one:
// "TWICE", y = 2x, elementwise.
constexpr auto kTwice = static_cast<OpKind>(1000);

absl::Status ValidateTwice(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  return c.OutputType(0, DataType::kFloat32);
}

class TwiceKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override { return ctx.ExpectOutputShape(0, ctx.in(0).shape); }
  absl::Status Invoke(KernelContext& ctx) override {
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out(0).as<float>();
    for (int64_t i = 0; i < ctx.in(0).elements(); ++i) y[i] = 2.0f * x[i];
    return absl::OkStatus();
  }
};

// A linkable shader: the compiler adds the prologue (x, y, b, s) and the
// store of `value`, and may fuse elementwise ops after it.
absl::StatusOr<shaders::GeneratedShader> TwiceShader(const shaders::NodeContext& ctx) {
  auto out = shaders::OutputBhwc(ctx, 0);
  if (!out.ok()) return out.status();
  shaders::GeneratedShader g = shaders::StartShader(ctx, *out, {0});
  g.code.body += "  vec4 value = 2.0 * vec4(" + shaders::glsl::Read(g.code.params, "in0", *out, "b", "s", "y", "x") + ");\n";
  return g;
}

ops::OpDefinition Twice() {
  return {.op = kTwice,
          .validate = ValidateTwice,
          .cpu_kernel = ops::MakeKernel<TwiceKernel>,
          .gpu = {TwiceShader}};
}

Graph TwiceGraph() {
  testing::GraphBuilder b;
  const int x = b.Input({1, 3, 5, 6});
  const int y = b.Tensor({1, 3, 5, 6});
  b.Op(kTwice, {}, {x}, {y});
  b.Output(y);
  return b.Build();
}

using AddAnOpTest = testing::DelegateTest;

TEST_P(AddAnOpTest, ARegisteredOpIsReadRunOnBothProcessorsAndWritten) {
  auto bytes = WriteModel(TwiceGraph());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  if (ops::FindBuiltin(kTwice) == nullptr) {  // the first backend's run: not registered yet
    EXPECT_EQ(ReadModel(bytes->data(), bytes->size(), "twice.tflite").status().message(),
              "twice.tflite: node 0: operator BUILTIN_1000 (1000) is not supported by mgd");
    ASSERT_TRUE(ops::Register(Twice()).ok());
  }
  EXPECT_EQ(ops::Register(Twice()).code(), absl::StatusCode::kAlreadyExists);
  ops::OpDefinition custom = Twice();
  custom.op = OpKind::kCustom;
  EXPECT_EQ(ops::Register(custom).code(), absl::StatusCode::kInvalidArgument);

  auto graph = ReadModel(bytes->data(), bytes->size(), "twice.tflite");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto rewritten = WriteModel(*graph);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_EQ(*rewritten, *bytes);

  const std::vector<float> x = testing::Uniform(90, 7);
  const auto cpu = Run(*graph, {x}, nullptr);
  ASSERT_EQ(cpu.size(), 1u);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(cpu[0][i], 2.0f * x[i]);
  ExpectSameAsCpu(*graph, {x});  // and every node on the GPU

  // The validation rules are the op's: a second input is refused by name.
  Graph wrong = *graph;
  wrong.nodes[0].inputs.push_back(wrong.inputs[0]);
  auto refused = WriteModel(wrong);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(ReadModel(refused->data(), refused->size(), "twice.tflite").status().message(),
            "twice.tflite: node 0 (BUILTIN_1000): has 2 inputs, expected 1");
}

INSTANTIATE_TEST_SUITE_P(Backends, AddAnOpTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
