// int8 ops on the GPU (passes/int8_as_float.h): each 8-bit case of
// integer_cases.h, as a converted model has it (float in, QUANTIZE, the op,
// DEQUANTIZE), runs wholly on the GPU as float ops that round onto the int8
// grids, and gives the integer kernels' results within a quantum
// (docs/numerics.md); and FAKE_QUANT itself against TFLite's definition.
#include <set>

#include "ops/pool/pool.h"
#include "ops/quantize/quantize.h"
#include "passes/int8_as_float.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/ops/integer_cases.h"

namespace mgd::ops {
namespace {

using quantized::Params;

// The graph's outputs on the CPU.
std::vector<std::vector<float>> OnTheCpu(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  std::vector<std::vector<uint8_t>> bytes;
  for (const std::vector<float>& v : inputs) bytes.push_back(mgd::testing::BytesOf(v));
  return mgd::testing::RunWithBytes(g, bytes, nullptr);
}

// Inputs on their int8 grids, so that QUANTIZE takes them as they are.
std::vector<std::vector<float>> GridInputs(const testing::Case& c) {
  std::mt19937 random(11);
  std::uniform_int_distribution<int32_t> value(-128, 127);
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::vector<float>& v = inputs.emplace_back(static_cast<size_t>(NumElements(c.inputs[i])));
    for (float& x : v) x = quantized::Dequantize(value(random), c.input_params[i]);
  }
  return inputs;
}

TEST(Int8AsFloatTest, TheRewriteRoundsEachResultOntoItsGrid) {
  const testing::Case c = testing::Cases().front();  // an average pool
  const Graph g = testing::BuildWithFloatEdges(c);
  auto rewritten = Int8AsFloat(g);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  // QUANTIZE became a FAKE_QUANT, the op is followed by one, DEQUANTIZE
  // became a copy; no tensor is 8-bit any more.
  EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kFakeQuant), 2);
  EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kQuantize), 0);
  EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kDequantize), 0);
  EXPECT_FALSE(HasInt8Activations(*rewritten));
  EXPECT_TRUE(HasInt8Activations(g));
  // On the CPU the float form gives the integer kernels' results within a
  // quantum, as on the GPU.
  const auto inputs = GridInputs(c);
  const auto integer = OnTheCpu(g, inputs);
  const auto as_float = OnTheCpu(*rewritten, inputs);
  ASSERT_EQ(integer.size(), 1u);
  for (size_t i = 0; i < integer[0].size(); ++i) {
    EXPECT_LE(std::abs(as_float[0][i] - integer[0][i]), c.output_params.scale * 1.001f) << "element " << i;
  }
}

// Ops that only move values (QuantizeRule::moves_values) between grids
// alike leave them on the grid: no FAKE_QUANT follows them. One follows
// every other op, and one whose parameters change or whose activation
// clamps off the grid (RELU6 at 6).
TEST(Int8AsFloatTest, OpsThatOnlyMoveValuesRoundNothing) {
  const std::set<std::string> movers = {"max pool", "reshape", "pad", "nearest", "concatenation, one scale",
                                        "reduce max"};
  std::vector<testing::Case> cases = testing::Cases();
  testing::Case max_relu6 = cases[2];
  ASSERT_EQ(max_relu6.name, "max pool");
  auto a = AttributesOf<PoolAttributes>(max_relu6.attributes);
  a.activation = Activation::kRelu6;
  max_relu6.attributes = a;
  max_relu6.name += ", RELU6";
  cases.push_back(max_relu6);
  testing::Case max_rescaled = cases[2];
  max_rescaled.output_params.scale *= 2;
  max_rescaled.name += ", rescaled";
  cases.push_back(max_rescaled);
  for (const testing::Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto rewritten = Int8AsFloat(testing::BuildWithFloatEdges(c));
    ASSERT_TRUE(rewritten.ok()) << rewritten.status();
    // Each input's QUANTIZE is one.
    EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kFakeQuant),
              static_cast<int>(c.inputs.size()) + (movers.count(c.name) != 0 ? 0 : 1));
  }
}

TEST(Int8AsFloatTest, Int8ModelInputsAndOutputsKeepTheirTypes) {
  const testing::Case c = testing::Cases().front();
  const Graph g = testing::Build(c, DataType::kInt8);
  auto rewritten = Int8AsFloat(g);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_EQ(rewritten->tensors[static_cast<size_t>(rewritten->inputs[0])].type, DataType::kInt8);
  EXPECT_EQ(rewritten->tensors[static_cast<size_t>(rewritten->outputs[0])].type, DataType::kInt8);
  EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kDequantize), 1);  // the input's, on the CPU
  EXPECT_EQ(mgd::testing::CountOps(*rewritten, OpKind::kQuantize), 1);    // the output's
}

TEST(FakeQuantTest, NudgesTheGridAndRoundsHalvesUp) {
  // [-1, 2] over 255 steps of 3/255: 0 falls at 85 steps above -1, so the
  // grid is [-1, 2] itself. 0.5 steps round up; outside values clamp.
  FakeQuantAttributes a{-1.0f, 2.0f, 8, false};
  const FakeQuantGrid grid = NudgedGrid(a);
  EXPECT_FLOAT_EQ(grid.scale, 3.0f / 255);
  EXPECT_FLOAT_EQ(grid.min, -1.0f);
  // [0.1, 1.1]: 0 is below the range, so the grid starts at 0.
  const FakeQuantGrid shifted = NudgedGrid({0.1f, 1.1f, 8, false});
  EXPECT_FLOAT_EQ(shifted.min, 0.0f);
  EXPECT_NEAR(shifted.max, 1.0f, 1e-6f);
  mgd::testing::GraphBuilder b;
  const int x = b.Input({4});
  const int y = b.Tensor({4});
  b.Op(OpKind::kFakeQuant, a, {x}, {y});
  b.Output(y);
  const float step = 3.0f / 255;
  const auto out = OnTheCpu(b.Build(), {{5.0f, -7.0f, 2.5f * step, 0.4f * step}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0][0], 2.0f);
  EXPECT_FLOAT_EQ(out[0][1], -1.0f);
  EXPECT_NEAR(out[0][2], 3 * step, 1e-6f);
  EXPECT_NEAR(out[0][3], 0.0f, 1e-6f);
}

using Int8GpuTest = mgd::testing::DelegateTest;

TEST_P(Int8GpuTest, EachInt8OpGivesTheIntegerKernelsResultsWithinAQuantum) {
  for (const testing::Case& c : testing::Cases()) {
    SCOPED_TRACE(c.name);
    const Graph g = testing::BuildWithFloatEdges(c);
    const auto inputs = GridInputs(c);
    const auto integer = Run(g, inputs, nullptr);
    const auto gpu = Run(g, inputs, delegate_.get());  // every node on the GPU
    ASSERT_EQ(gpu.size(), 1u);
    for (size_t i = 0; i < integer[0].size(); ++i) {
      // fp16 storage holds a grid value to 11 bits.
      const float stored = GetParam().fp16 ? std::abs(integer[0][i]) * 0x1.0p-10f : 0.0f;
      ASSERT_LE(std::abs(gpu[0][i] - integer[0][i]), c.output_params.scale * 1.001f + stored)
          << "element " << i << ": gpu " << gpu[0][i] << " cpu " << integer[0][i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Int8GpuTest, ::testing::ValuesIn(mgd::testing::AllBackends()),
                         mgd::testing::BackendName);

}  // namespace
}  // namespace mgd::ops
