// The ops of issue 24 against LiteRT: small models (litert_op_models.cc)
// with LiteRT's inputs and outputs in tests/data/litert_ops/NAME/
// (scripts/litert-op-references). The CPU kernels within the fp32 op bound,
// the GPU within the op bounds of its precision widened by the model's node
// count, both APIs.
#include <cmath>
#include <fstream>
#include <iterator>

#include "model/reader.h"
#include "model/writer.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/single_op.h"
#include "tests/ops/litert_op_models.h"

namespace mgd::testing {
namespace {

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Reference {
  Graph graph;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<float>> outputs;
};

// The committed model (which must be the one the generator writes now), the
// inputs LiteRT ran on and its outputs.
std::optional<Reference> Load(const LitertOpModel& m) {
  const std::string dir = DataPath("litert_ops/" + m.name + "/");
  auto written = WriteModel(m.graph);
  EXPECT_TRUE(written.ok()) << written.status();
  const std::vector<uint8_t> committed = ReadBytes(dir + "model.tflite");
  EXPECT_TRUE(written.ok() && *written == committed) << m.name << ": run scripts/litert-op-references";
  auto graph = ReadModel(committed.data(), committed.size(), dir + "model.tflite");
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return std::nullopt;
  Reference r{*graph, {}, {}};
  for (size_t k = 0; k < r.graph.inputs.size(); ++k) {
    const DataType type = r.graph.tensors[static_cast<size_t>(r.graph.inputs[k])].type;
    r.inputs.push_back(ReadBytes(dir + "input_" + std::to_string(k) + (type == DataType::kInt32 ? ".int32" : ".f32")));
  }
  for (size_t k = 0; k < r.graph.outputs.size(); ++k) r.outputs.push_back(ReadF32(dir + "output_" + std::to_string(k) + ".f32"));
  return r;
}

// The scale of an output that DEQUANTIZE makes from an 8-bit tensor (0 for
// any other output). Such an output may differ from LiteRT's by this one
// quantum, the bound per op; mgd follows LiteRT's arithmetic and
// gives its outputs exactly today (docs/numerics.md).
float QuantumOf(const Graph& g, size_t output) {
  const int t = g.outputs[output];
  for (const Node& n : g.nodes) {
    if (n.outputs[0] != t || n.op != OpKind::kDequantize) continue;
    const Tensor& in = g.tensors[static_cast<size_t>(n.inputs[0])];
    if (in.quantization.has_value() && in.quantization->scale.size() == 1) return in.quantization->scale[0];
  }
  return 0.0f;
}

TEST(LitertOpsTest, CpuMatchesLitert) {
  for (const LitertOpModel& m : LitertOpModels()) {
    SCOPED_TRACE(m.name);
    std::optional<Reference> r = Load(m);
    if (!r) continue;
    const auto actual = RunWithBytes(r->graph, r->inputs, nullptr);
    ASSERT_EQ(actual.size(), r->outputs.size());
    for (size_t k = 0; k < actual.size(); ++k) {
      ASSERT_EQ(actual[k].size(), r->outputs[k].size()) << "output " << k;
      const float quantum = QuantumOf(r->graph, k);
      size_t off_by_a_quantum = 0;
      for (size_t i = 0; i < actual[k].size(); ++i) {
        const float diff = std::abs(actual[k][i] - r->outputs[k][i]);
        if (quantum > 0.0f && diff > 0.0f && diff <= quantum * 1.001f) {
          ++off_by_a_quantum;
          continue;
        }
        ASSERT_TRUE(single_op::WithinTolerance(actual[k][i], r->outputs[k][i]))
            << "output " << k << " element " << i << ": mgd " << actual[k][i] << " LiteRT " << r->outputs[k][i];
      }
      // Ties are the exception, not the rule.
      EXPECT_LE(off_by_a_quantum * 5, actual[k].size()) << "output " << k << ": " << off_by_a_quantum << " values";
    }
  }
}

using LitertOpsGpuTest = DelegateTest;

TEST_P(LitertOpsGpuTest, MatchesLitert) {
  for (const LitertOpModel& m : LitertOpModels()) {
    if (!m.gpu) continue;
    SCOPED_TRACE(m.name);
    std::optional<Reference> r = Load(m);
    if (!r) continue;
    ExpectNear(RunWithBytes(r->graph, r->inputs, delegate_.get(), m.all_on_gpu), r->outputs,
               static_cast<double>(r->graph.nodes.size()));
  }
}

// The int8 models on the GPU (passes/int8_as_float.h) against LiteRT (the
// CPU's results, bit for bit): each quantized output within a quantum per
// 8-bit op on its longest path from the float input.
TEST_P(LitertOpsGpuTest, Int8ModelsWithinAQuantumPerOp) {
  for (const LitertOpModel& m : LitertOpModels()) {
    if (m.name.rfind("quantize", 0) != 0) continue;
    SCOPED_TRACE(m.name);
    std::optional<Reference> r = Load(m);
    if (!r) continue;
    const auto gpu = RunWithBytes(r->graph, r->inputs, delegate_.get());
    ASSERT_EQ(gpu.size(), r->outputs.size());
    // Each tensor's count of 8-bit ops (QUANTIZE included) on its longest
    // path from an input; the nodes are in order.
    std::vector<int> ops(r->graph.tensors.size(), 0);
    for (const Node& n : r->graph.nodes) {
      int deepest = 0;
      for (int t : n.inputs) deepest = t == kNoTensor ? deepest : std::max(deepest, ops[static_cast<size_t>(t)]);
      for (int t : n.outputs) ops[static_cast<size_t>(t)] = deepest + (n.op == OpKind::kDequantize ? 0 : 1);
    }
    for (size_t k = 0; k < gpu.size(); ++k) {
      const float quantum = QuantumOf(r->graph, k);
      ASSERT_GT(quantum, 0.0f) << "output " << k;
      const int path = ops[static_cast<size_t>(r->graph.outputs[k])];
      for (size_t i = 0; i < gpu[k].size(); ++i) {
        ASSERT_LE(std::abs(gpu[k][i] - r->outputs[k][i]), static_cast<float>(path) * quantum * 1.03f)
            << "output " << k << " element " << i << " (" << path << " ops): gpu " << gpu[k][i] << " LiteRT "
            << r->outputs[k][i];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LitertOpsGpuTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace mgd::testing
