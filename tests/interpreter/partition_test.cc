// The delegate interface: partitioning real models for a test delegate that
// claims a few op kinds and runs its partitions on a nested interpreter.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>

#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "ops/elementwise/elementwise.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

using ::testing::HasSubstr;

// Runs a partition as a graph of its own on the CPU kernels.
class SubgraphKernel : public DelegateKernel {
 public:
  explicit SubgraphKernel(std::unique_ptr<Interpreter> interpreter) : interpreter_(std::move(interpreter)) {}
  absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs) override {
    for (size_t i = 0; i < inputs.size(); ++i) std::memcpy(interpreter_->input(i).data, inputs[i]->data, inputs[i]->bytes);
    if (absl::Status s = interpreter_->Invoke(); !s.ok()) return s;
    for (size_t i = 0; i < outputs.size(); ++i) std::memcpy(outputs[i]->data, interpreter_->output(i).data, outputs[i]->bytes);
    ++invocations;
    return absl::OkStatus();
  }
  int invocations = 0;

 private:
  std::unique_ptr<Interpreter> interpreter_;
};

class TestDelegate : public Delegate {
 public:
  explicit TestDelegate(std::set<OpKind> claimed, bool fail_prepare = false)
      : claimed_(std::move(claimed)), fail_prepare_(fail_prepare) {}
  std::string name() const override { return "test-delegate"; }

  NodeSupport IsNodeSupported(const Graph& graph, int node) override {
    const OpKind op = graph.nodes[static_cast<size_t>(node)].op;
    if (claimed_.count(op)) return {true, ""};
    return {false, OpName(op) + " is not claimed"};
  }

  absl::StatusOr<std::unique_ptr<DelegateKernel>> Prepare(const Graph& graph, const Partition& p) override {
    seen_partitions.push_back(p);
    if (fail_prepare_) return absl::InternalError("injected prepare failure");
    Graph sub;
    sub.tensors = graph.tensors;
    for (int n : p.nodes) sub.nodes.push_back(graph.nodes[static_cast<size_t>(n)]);
    sub.inputs = p.inputs;
    sub.outputs = p.outputs;
    auto interpreter = Interpreter::Create(std::move(sub), InterpreterOptions{});
    if (!interpreter.ok()) return interpreter.status();
    return std::unique_ptr<DelegateKernel>(new SubgraphKernel(std::move(*interpreter)));
  }

  absl::StatusOr<PartitionCost> EstimateCost(const Graph&, const Partition& p) override {
    if (!cost) return absl::UnimplementedError("no estimates");
    return cost(p);
  }

  std::vector<Partition> seen_partitions;
  std::function<PartitionCost(const Partition&)> cost;  // null: no estimates

 private:
  std::set<OpKind> claimed_;
  bool fail_prepare_;
};

const char* const kModels[] = {"face_detection_short_range", "face_landmark", "hand_landmark_lite",
                               "palm_detection_lite", "pose_landmark_lite", "selfie_segmentation"};

struct RunResult {
  std::vector<std::vector<float>> outputs;
  std::unique_ptr<Interpreter> interpreter;
};

RunResult RunModel(const std::string& model, Delegate* delegate, int max_partitions = 0,
                   std::vector<std::string>* log = nullptr, bool by_cost = false) {
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  EXPECT_TRUE(graph.ok());
  InterpreterOptions options;
  if (delegate != nullptr) options.delegates.push_back(delegate);
  options.max_delegated_partitions = max_partitions;
  options.partition_by_cost = by_cost;
  if (log != nullptr) options.logger = [log](LogLevel, const std::string& m) { log->push_back(m); };
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  const auto input = testing::ReadF32(testing::DataPath("reference/" + model + "/image/input_0.f32"));
  std::memcpy((*interpreter)->input(0).data, input.data(), (*interpreter)->input(0).bytes);
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  RunResult r;
  for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
    const TensorRef& t = (*interpreter)->output(k);
    r.outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  r.interpreter = std::move(*interpreter);
  return r;
}

// No path may leave a partition and come back into it.
void ExpectAcyclic(const Graph& graph, const Partition& p) {
  std::set<int> inside(p.nodes.begin(), p.nodes.end());
  std::set<int> frontier_tensors(p.outputs.begin(), p.outputs.end());
  std::set<int> reached_nodes;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const int node = static_cast<int>(n);
      if (inside.count(node) || reached_nodes.count(node)) continue;
      for (int t : graph.nodes[n].inputs) {
        if (frontier_tensors.count(t)) {
          reached_nodes.insert(node);
          for (int out : graph.nodes[n].outputs) frontier_tensors.insert(out);
          grew = true;
          break;
        }
      }
    }
  }
  for (int t : p.inputs) EXPECT_FALSE(frontier_tensors.count(t)) << "partition input " << t << " depends on its own output";
}

TEST(PartitionTest, ClaimingAddAndConvGivesIdenticalOutputsOnEveryModel) {
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    const RunResult cpu = RunModel(model, nullptr);
    TestDelegate delegate({OpKind::kAdd, OpKind::kConv2d});
    const RunResult delegated = RunModel(model, &delegate);
    const Interpreter& interp = *delegated.interpreter;
    ASSERT_FALSE(interp.partitions().empty());
    int delegated_nodes = 0;
    for (size_t n = 0; n < interp.placements().size(); ++n) {
      const NodePlacement& p = interp.placements()[n];
      if (p.where != NodePlacement::Where::kDelegate) continue;
      ++delegated_nodes;
      const OpKind op = interp.graph().nodes[n].op;
      EXPECT_TRUE(op == OpKind::kAdd || op == OpKind::kConv2d) << "node " << n;
    }
    EXPECT_GT(delegated_nodes, 0);
    for (const Partition& p : interp.partitions()) {
      EXPECT_FALSE(p.outputs.empty());
      ExpectAcyclic(interp.graph(), p);
    }
    // Same kernels, same order inside each node: bit-identical results.
    ASSERT_EQ(cpu.outputs.size(), delegated.outputs.size());
    for (size_t k = 0; k < cpu.outputs.size(); ++k) EXPECT_EQ(cpu.outputs[k], delegated.outputs[k]) << "output " << k;
  }
}

TEST(PartitionTest, UnsupportedNodesGetTheDelegatesReason) {
  TestDelegate delegate({OpKind::kConv2d});
  const RunResult r = RunModel("face_detection_short_range", &delegate);
  bool found = false;
  for (size_t n = 0; n < r.interpreter->placements().size(); ++n) {
    const auto& p = r.interpreter->placements()[n];
    if (r.interpreter->graph().nodes[n].op == OpKind::kAdd) {
      EXPECT_EQ(p.where, NodePlacement::Where::kCpu);
      EXPECT_EQ(p.reason, "test-delegate: ADD is not claimed");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(PartitionTest, MaxPartitionsKeepsTheLargest) {
  TestDelegate all({OpKind::kConv2d, OpKind::kDepthwiseConv2d});
  const RunResult unlimited = RunModel("face_detection_short_range", &all);
  ASSERT_GT(unlimited.interpreter->partitions().size(), 1u);
  size_t largest = 0;
  for (const auto& p : unlimited.interpreter->partitions()) largest = std::max(largest, p.nodes.size());

  TestDelegate one({OpKind::kConv2d, OpKind::kDepthwiseConv2d});
  const RunResult limited = RunModel("face_detection_short_range", &one, 1);
  ASSERT_EQ(limited.interpreter->partitions().size(), 1u);
  EXPECT_EQ(limited.interpreter->partitions()[0].nodes.size(), largest);
  int beyond = 0;
  for (const auto& p : limited.interpreter->placements()) beyond += p.reason.find("beyond the maximum of 1") != std::string::npos;
  EXPECT_GT(beyond, 0);
  EXPECT_EQ(limited.outputs, unlimited.outputs);
}

TEST(PartitionTest, FailedPrepareFallsBackToTheCpuAndSaysWhy) {
  const RunResult cpu = RunModel("selfie_segmentation", nullptr);
  TestDelegate failing({OpKind::kConv2d, OpKind::kAdd}, /*fail_prepare=*/true);
  std::vector<std::string> log;
  const RunResult r = RunModel("selfie_segmentation", &failing, 0, &log);
  EXPECT_FALSE(failing.seen_partitions.empty());
  EXPECT_TRUE(r.interpreter->partitions().empty());
  ASSERT_FALSE(log.empty());
  EXPECT_THAT(log[0], HasSubstr("injected prepare failure"));
  EXPECT_EQ(r.outputs, cpu.outputs);
}

// a -> [A] -> b -> (B, not supported) -> c -> [C]; [A] also feeds [C].
// Merging A and C would make a cycle through B: they must be two partitions.
// A float [1, 4] tensor of `g`.
int Vector4(Graph& g, const std::string& name) {
  Tensor t;
  t.name = name;
  t.shape = {1, 4};
  g.tensors.push_back(t);
  return static_cast<int>(g.tensors.size()) - 1;
}

// `g` with a delegate that claims ADD.
std::unique_ptr<Interpreter> WithAddDelegate(const Graph& g, TestDelegate& delegate) {
  InterpreterOptions options;
  options.delegates.push_back(&delegate);
  auto interpreter = Interpreter::Create(g, std::move(options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  return interpreter.ok() ? std::move(*interpreter) : nullptr;
}

TEST(PartitionTest, NeverMergesAcrossAnUnsupportedNode) {
  Graph g;
  auto tensor = [&](const std::string& name) { return Vector4(g, name); };
  const int x = tensor("x"), a = tensor("a"), b = tensor("b"), c = tensor("c");
  g.inputs = {x};
  g.nodes.push_back({OpKind::kAdd, 1, ops::ElementwiseAttributes{}, {x, x}, {a}});
  g.nodes.push_back({OpKind::kRelu, 1, std::monostate{}, {a}, {b}});
  g.nodes.push_back({OpKind::kAdd, 1, ops::ElementwiseAttributes{}, {a, b}, {c}});
  g.outputs = {c};
  TestDelegate delegate({OpKind::kAdd});
  auto interpreter = WithAddDelegate(g, delegate);
  ASSERT_NE(interpreter, nullptr);
  ASSERT_EQ(interpreter->partitions().size(), 2u);
  for (const Partition& p : interpreter->partitions()) ExpectAcyclic(interpreter->graph(), p);
  const float in[4] = {-1, 2, -3, 4};
  std::memcpy(interpreter->input(0).data, in, sizeof in);
  ASSERT_TRUE(interpreter->Invoke().ok());
  const float* out = interpreter->output(0).as<float>();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], 2 * in[i] + std::max(0.0f, 2 * in[i]));
}

// x -> [A] -> a and y -> [B] -> b share no tensor: one epoch, one
// partition (one submission), as TFLite groups them.
TEST(PartitionTest, PartsSharingNoTensorAreOnePartition) {
  Graph g;
  auto tensor = [&](const std::string& name) { return Vector4(g, name); };
  const int x = tensor("x"), y = tensor("y"), a = tensor("a"), b = tensor("b");
  g.inputs = {x, y};
  g.nodes.push_back({OpKind::kAdd, 1, ops::ElementwiseAttributes{}, {x, x}, {a}});
  g.nodes.push_back({OpKind::kAdd, 1, ops::ElementwiseAttributes{}, {y, y}, {b}});
  g.outputs = {a, b};
  TestDelegate delegate({OpKind::kAdd});
  auto interpreter = WithAddDelegate(g, delegate);
  ASSERT_NE(interpreter, nullptr);
  ASSERT_EQ(interpreter->partitions().size(), 1u);
  const Partition& p = interpreter->partitions()[0];
  EXPECT_EQ(p.nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.inputs, (std::vector<int>{x, y}));
  EXPECT_EQ(p.outputs, (std::vector<int>{a, b}));
  const float in[4] = {-1, 2, -3, 4};
  std::memcpy(interpreter->input(0).data, in, sizeof in);
  std::memcpy(interpreter->input(1).data, in, sizeof in);
  ASSERT_TRUE(interpreter->Invoke().ok());
  for (size_t k = 0; k < 2; ++k) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(interpreter->output(k).as<float>()[i], 2 * in[i]);
  }
}

// Partitioning by cost: a partition that would cost more on the delegate
// than on the CPU (here: one of fewer than 3 nodes) runs on the CPU, its
// nodes saying so with the numbers; the others keep their estimates; the
// outputs do not change. Without estimates every partition stays.
TEST(PartitionTest, ByCostKeepsOnlyPartitionsThatPay) {
  const RunResult cpu = RunModel("face_detection_short_range", nullptr);
  TestDelegate plain({OpKind::kAdd, OpKind::kConv2d});
  const RunResult all = RunModel("face_detection_short_range", &plain);
  size_t small = 0;
  for (const Partition& p : all.interpreter->partitions()) small += p.nodes.size() < 3;
  ASSERT_GT(small, 0u);  // else nothing here would be dropped
  for (const auto& c : all.interpreter->partition_costs()) EXPECT_FALSE(c.has_value());

  TestDelegate costed({OpKind::kAdd, OpKind::kConv2d});
  costed.cost = [](const Partition& p) { return PartitionCost{1.0, 1.0, static_cast<double>(p.nodes.size())}; };
  const RunResult by_cost = RunModel("face_detection_short_range", &costed, 0, nullptr, true);
  const Interpreter& interp = *by_cost.interpreter;
  EXPECT_EQ(interp.partitions().size(), all.interpreter->partitions().size() - small);
  ASSERT_EQ(interp.partition_costs().size(), interp.partitions().size());
  for (size_t i = 0; i < interp.partitions().size(); ++i) {
    EXPECT_GE(interp.partitions()[i].nodes.size(), 3u);
    ASSERT_TRUE(interp.partition_costs()[i].has_value());
    EXPECT_EQ(interp.partition_costs()[i]->cpu_ms, static_cast<double>(interp.partitions()[i].nodes.size()));
  }
  for (const Partition& p : all.interpreter->partitions()) {
    if (p.nodes.size() >= 3) continue;
    for (int n : p.nodes) {
      EXPECT_EQ(interp.placements()[static_cast<size_t>(n)].where, NodePlacement::Where::kCpu);
      EXPECT_THAT(interp.placements()[static_cast<size_t>(n)].reason,
                  HasSubstr(fmt::format("test-delegate: on the CPU by cost: its partition of {} nodes would take 1.000 ms "
                                        "there plus 1.000 ms of transfers, against {}.000 ms on the CPU",
                                        p.nodes.size(), p.nodes.size())));
    }
  }
  EXPECT_EQ(by_cost.outputs, cpu.outputs);
}

}  // namespace
}  // namespace mgd
