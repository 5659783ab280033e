// Random graphs (docs/design.md section 5, after NNAPI's random-graph CTS):
// pseudorandom DAGs of small float32 tensors (and the bools of comparisons
// inside them, int32 token ids as inputs of ONE_HOT) and the ops the GPU
// delegate runs, every node on the GPU, against the CPU reference kernels,
// with the op bounds widened along the paths from the inputs (see
// ErrorBound).
//
//   MGD_RANDOM_GRAPHS=N       N graphs per backend (default 200)
//   MGD_RANDOM_GRAPH_SEED=S   only the graph of seed S (to reproduce a failure)
//
// Each graph runs once per backend, in one of four variants taken in turn by
// seed: fp32 or GpuDelegateOptions.precision fp16, fusion on or off.
// A failing graph is written to $TEST_UNDECLARED_OUTPUTS_DIR (else
// ./random_graph_failures)/<backend>/seed_<S>/: model.tflite, input_<k>.npy
// (.int32, raw, for an index input), expected_<k>.npy (CPU),
// actual_<precision>_<k>.npy (GPU), failure.txt.
//
// Each op kind has one maker: it picks its activation inputs among the values
// drawn so far, draws its parameters and constants, and adds one node. A node
// the delegate does not support is dropped and another drawn, so makers for
// ops the GPU cannot run yet cost nothing and start being tested when their
// shader lands. Adding an op is adding a maker and a line in Makers() (both
// in random_graph/makers.cc) and its op in the list of RandomGraphMakersTest,
// which checks every maker against the validator and the CPU interpreter
// without a GPU.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/validator.h"
#include "model/writer.h"
#include "tests/delegate/random_graph/describe.h"
#include "tests/delegate/random_graph/draw.h"
#include "tests/delegate/random_graph/makers.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"
#include "tools/mgd/npy.h"

namespace mgd {
namespace random_graph {
namespace {

// ---- Drawing a whole graph ----

using SupportFn = std::function<NodeSupport(const Graph&, int)>;

struct Stats {
  int graphs = 0;                              // compared on the GPU
  std::map<std::string, int> discarded;        // graphs not compared, by why
  std::map<std::string, int> unsupported;      // node draws dropped, by op
  std::map<std::string, std::string> reasons;  // one reason per op
  std::map<std::string, int> nodes;            // nodes in compared graphs, by op
  int failures = 0;
  // The largest |gpu - cpu| / bound seen, per precision, and its seed: how
  // close the passing graphs come to the bound; and the same against one
  // op's bound (not widened).
  std::map<std::string, std::pair<double, uint32_t>> closest, closest_one_op;

  int total_discarded() const {
    int n = 0;
    for (const auto& [why, count] : discarded) n += count;
    return n;
  }
};

struct DrawnGraph {
  Graph graph;
  std::vector<float> error;  // per graph output: Value::error
  std::vector<std::vector<float>> inputs;
};

// The graph of `seed`: 1-2 inputs, 1-8 nodes the delegate supports. Null when
// no graph could be drawn (too many nodes dropped).
std::optional<DrawnGraph> DrawGraph(uint32_t seed, const SupportFn& supported, Stats& stats) {
  Draw d(seed);
  // Inputs: [B,H,W,C] (batch 1 mostly), now and then [B,C]; a second one of
  // the same shape, a per-channel [1,1,1,C] or an unrelated shape.
  auto input_shape = [&]() -> Shape {
    const int b = d.Chance(0.1f) ? 2 : 1;
    if (d.Chance(0.1f)) return {b, d.Int(1, 20)};
    return {b, d.Int(1, 12), d.Int(1, 12), d.Int(1, 20)};
  };
  const Shape first = input_shape();
  d.AddInput(first);
  if (d.Chance(0.4f)) {
    const float kind = d.Unit();
    if (kind < 0.5f)
      d.AddInput(first);
    else if (kind < 0.8f)
      d.AddInput({1, 1, 1, first.back()});
    else
      d.AddInput(input_shape());
  }
  const int target = d.Int(1, kMaxNodes);
  int nodes = 0;
  for (int attempt = 0; attempt < 20 * kMaxNodes; ++attempt) {
    bool inputs_read = true;
    for (int t : d.graph().inputs) inputs_read = inputs_read && d.Consumed(t);
    if (nodes >= target && inputs_read) break;
    const Draw::Mark mark = d.Here();
    const Maker& maker = DrawMaker(d);
    if (!maker.make(d)) {
      d.Rollback(mark);
      continue;
    }
    const int n = static_cast<int>(d.graph().nodes.size()) - 1;
    const NodeSupport support = supported(d.graph(), n);
    if (!support.supported) {
      const std::string op = OpName(d.graph().nodes.back().op);
      ++stats.unsupported[op];
      stats.reasons.emplace(op, support.reason);
      d.Rollback(mark);
      continue;
    }
    ++nodes;
  }
  for (int t : d.graph().inputs) {
    if (!d.Consumed(t)) return std::nullopt;
  }
  if (nodes == 0) return std::nullopt;
  // Outputs: every value nothing reads, and now and then one that is read too.
  DrawnGraph g;
  for (const Value& v : d.values()) {
    if (d.IsGraphInput(v.tensor)) continue;
    if (!d.Consumed(v.tensor) || d.Chance(0.15f)) {
      d.graph().outputs.push_back(v.tensor);
      g.error.push_back(v.error);
    }
  }
  // Float inputs uniform in [-1, 1]; index inputs in [-1, bound], their
  // int32 bytes held in the floats' place.
  for (int t : d.graph().inputs) {
    const int64_t n = NumElements(d.graph().tensors[static_cast<size_t>(t)].shape);
    if (const std::optional<int> bound = d.IndexBound(t)) {
      std::vector<float> bytes(static_cast<size_t>(n));
      for (float& v : bytes) v = std::bit_cast<float>(static_cast<int32_t>(d.Int(-1, *bound)));
      g.inputs.push_back(std::move(bytes));
    } else {
      g.inputs.push_back(d.Uniform(n, 1.0f));
    }
  }
  g.graph = std::move(d.graph());
  return g;
}

// The bound on |gpu - cpu| of one output element: docs/design.md section 5's op
// bound (fp32 1e-5 + 5*2^-23*|e|, fp16 5*2^-10*(1+|e|)) times the output's
// error multiplier (Value::error). The multiplier is the number of ops on the
// longest path from an input, each op weighted by how much it scales the
// errors of its inputs: an op adds at most its own bound and passes on the
// error it reads scaled by its gain. Convolutions and FULLY_CONNECTED have
// weights of about 1/sqrt(fan_in), so their gain is ~1; the generator keeps the
// ops that do amplify (EXP, MUL, DIV, RSQRT, SQUARED_DIFFERENCE) on values that
// keep the multiplier small (at most kMaxErrorMultiplier).
double ErrorBound(bool fp16, float multiplier, float expected) {
  const double e = std::abs(static_cast<double>(expected));
  const double op = fp16 ? 5 * std::ldexp(1.0, -10) * (1 + e) : 1e-5 + 5 * std::ldexp(1.0, -23) * e;
  return multiplier * op;
}

std::string FailureRoot() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::filesystem::path root = dir != nullptr && *dir != 0 ? dir : ".";
  return std::filesystem::absolute(root / "random_graph_failures").lexically_normal().string();
}

std::vector<float> Floats(const TensorRef& t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.elements());
}

// ---- The test ----

struct Variant {
  bool fp16;
  bool fusion;
};

class RandomGraphTest : public ::testing::TestWithParam<gpu::Api> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam());
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (mgd::testing::GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    // One delegate per option set, made once: creating devices is slow.
    for (const bool fp16 : {false, true}) {
      for (const bool fusion : {false, true}) {
        GpuDelegateOptions options;
        options.api = GetParam();
        options.validation = true;
        options.precision = Precision::Of(fp16);
        options.fusion = fusion;
        auto delegate = GpuDelegate::Create(options);
        ASSERT_TRUE(delegate.ok()) << delegate.status();
        delegates_[{fp16, fusion}] = std::move(*delegate);
      }
    }
  }
  void TearDown() override {
    for (const auto& [variant, delegate] : delegates_) {
      EXPECT_THAT(delegate->device().validation_messages(), ::testing::IsEmpty());
    }
  }

  // A node is kept only when every delegate takes it.
  NodeSupport Supported(const Graph& graph, int node) {
    for (const auto& [variant, delegate] : delegates_) {
      NodeSupport s = delegate->IsNodeSupported(graph, node);
      if (!s.supported) return s;
    }
    return {true, ""};
  }

  // Runs graph `seed` on the CPU and in both GPU variants; counts it in
  // `stats`. Failures are reported (with the graph written out) and counted.
  void RunSeed(uint32_t seed, Stats& stats);

  // Writes the failing graph, its inputs, the CPU outputs and the GPU outputs
  // of `precision`; returns the directory.
  std::string WriteFailure(uint32_t seed, const DrawnGraph& g, const Interpreter& cpu, const Interpreter* gpu,
                           const std::string& precision, const std::string& message);

  std::map<std::pair<bool, bool>, std::unique_ptr<GpuDelegate>> delegates_;  // by {fp16, fusion}
  std::set<uint32_t> written_;                                               // seeds whose failures this run wrote out
};

std::string RandomGraphTest::WriteFailure(uint32_t seed, const DrawnGraph& g, const Interpreter& cpu,
                                          const Interpreter* gpu, const std::string& precision,
                                          const std::string& message) {
  const std::string dir = FailureRoot() + "/" + gpu::ApiName(GetParam()) + "/seed_" + std::to_string(seed);
  std::error_code ec;
  if (written_.insert(seed).second) std::filesystem::remove_all(dir, ec);  // not a previous run's files
  std::filesystem::create_directories(dir, ec);
  if (ec) return "(could not create " + dir + ": " + ec.message() + ")";
  const absl::Status written = WriteModelFile(g.graph, dir + "/model.tflite");
  if (!written.ok()) return "(could not write " + dir + "/model.tflite: " + std::string(written.message()) + ")";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor& input = g.graph.tensors[static_cast<size_t>(g.graph.inputs[i])];
    if (input.type == DataType::kInt32) {  // raw, as `mgd run --input` reads it
      std::ofstream(dir + "/input_" + std::to_string(i) + ".int32", std::ios::binary)
          .write(reinterpret_cast<const char*>(g.inputs[i].data()), static_cast<std::streamsize>(g.inputs[i].size() * 4));
      continue;
    }
    (void)cli::WriteNpy(dir + "/input_" + std::to_string(i) + ".npy", input.shape, g.inputs[i].data(),
                        g.inputs[i].size());
  }
  for (size_t k = 0; k < cpu.num_outputs(); ++k) {
    const TensorRef& e = cpu.output(k);
    (void)cli::WriteNpy(dir + "/expected_" + std::to_string(k) + ".npy", e.shape, e.as<float>(),
                        static_cast<size_t>(e.elements()));
    if (gpu != nullptr) {
      const TensorRef& a = gpu->output(k);
      (void)cli::WriteNpy(dir + "/actual_" + precision + "_" + std::to_string(k) + ".npy", a.shape, a.as<float>(),
                          static_cast<size_t>(a.elements()));
    }
  }
  std::ofstream(dir + "/failure.txt", std::ios::app) << message << "\n\n";
  return dir;
}

void RandomGraphTest::RunSeed(uint32_t seed, Stats& stats) {
  const char* api = gpu::ApiName(GetParam());
  std::optional<DrawnGraph> g = DrawGraph(
      seed, [this](const Graph& graph, int n) { return Supported(graph, n); }, stats);
  if (!g) {
    ++stats.discarded["no graph of supported nodes"];
    return;
  }
  const std::string where = std::to_string(seed);
  auto header = [&](const std::string& variant) {
    return "random graph seed " + where + " on " + api + (variant.empty() ? "" : " (" + variant + ")");
  };
  auto reproduce = [&]() {
    return "reproduce: MGD_RANDOM_GRAPH_SEED=" + where + " random_graph_test --gtest_filter='*/" + api + "'";
  };
  const absl::Status valid = ValidateGraph(g->graph);
  if (!valid.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": the validator rejects the drawn graph: " << valid << "\n" << Describe(g->graph);
    return;
  }
  auto cpu = Interpreter::Create(g->graph, InterpreterOptions{});
  if (!cpu.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": the CPU interpreter rejects the drawn graph: " << cpu.status() << "\n"
                  << Describe(g->graph);
    return;
  }
  for (size_t i = 0; i < g->inputs.size(); ++i)
    std::memcpy((*cpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
  if (absl::Status s = (*cpu)->Invoke(); !s.ok()) {
    ++stats.failures;
    ADD_FAILURE() << header("") << ": CPU invoke failed: " << s << "\n" << Describe(g->graph);
    return;
  }
  for (size_t k = 0; k < (*cpu)->num_outputs(); ++k) {
    for (float v : Floats((*cpu)->output(k))) {
      if (!std::isfinite(v)) {
        ++stats.discarded["non-finite CPU output"];
        return;
      }
    }
  }
  // One variant per graph, in turn by seed: fp32 and fp16, fusion on and off.
  // (Every graph in every variant would double the compile time on software
  // GPUs for little more coverage.)
  for (const Variant variant : {Variant{(seed / 2) % 2 == 1, seed % 2 == 0}}) {
    const std::string precision = variant.fp16 ? "fp16" : "fp32";
    const std::string name = precision + (variant.fusion ? ", fusion on" : ", fusion off");
    InterpreterOptions options;
    options.delegates.push_back(delegates_.at({variant.fp16, variant.fusion}).get());
    std::vector<std::string> log;
    options.logger = [&](LogLevel level, const std::string& m) {
      if (level >= LogLevel::kWarning) log.push_back(m);
    };
    auto gpu = Interpreter::Create(g->graph, std::move(options));
    auto fail = [&](const std::string& what, const Interpreter* run) {
      ++stats.failures;
      std::string message = header(name) + ": " + what + "\ngraph:\n" + Describe(g->graph);
      const std::string dir = WriteFailure(seed, *g, **cpu, run, precision, message);
      ADD_FAILURE() << message << "\nwritten to " << dir << "\n" << reproduce();
    };
    if (!gpu.ok()) return fail("creating the interpreter failed: " + std::string(gpu.status().message()), nullptr);
    if (!log.empty()) return fail("the delegate failed a partition it claimed: " + log.front(), nullptr);
    for (size_t n = 0; n < g->graph.nodes.size(); ++n) {
      if ((*gpu)->placements()[n].where != NodePlacement::Where::kDelegate) {
        ++stats.discarded["node not delegated"];
        return;
      }
    }
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      std::memcpy((*gpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
    }
    if (absl::Status s = (*gpu)->Invoke(); !s.ok())
      return fail("invoke failed: " + std::string(s.message()), gpu->get());
    std::string mismatches;
    for (size_t k = 0; k < g->graph.outputs.size(); ++k) {
      const TensorRef& e = (*cpu)->output(k);
      const TensorRef& a = (*gpu)->output(k);
      for (int64_t i = 0; i < e.elements(); ++i) {
        const float ev = e.as<float>()[i], av = a.as<float>()[i];
        const double bound = ErrorBound(variant.fp16, g->error[k], ev);
        const double ratio = std::abs(static_cast<double>(av) - ev) / bound;
        auto& closest = stats.closest[precision];
        if (ratio > closest.first) closest = {ratio, seed};
        auto& one_op = stats.closest_one_op[precision];
        if (ratio * g->error[k] > one_op.first) one_op = {ratio * g->error[k], seed};
        if (!(ratio <= 1.0)) {
          mismatches += fmt::format(
              "output {} (t{} {}) element {}: gpu {} cpu {}, |diff| {:.3g} > bound {:.3g} (error multiplier {})\n", k,
              g->graph.outputs[k], ShapeToString(e.shape), i, av, ev, std::abs(static_cast<double>(av) - ev), bound,
              g->error[k]);
          break;
        }
      }
    }
    if (!mismatches.empty()) return fail("results differ from the CPU:\n" + mismatches, gpu->get());
  }
  ++stats.graphs;
  for (const Node& node : g->graph.nodes) ++stats.nodes[OpName(node.op)];
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::atoi(v) : fallback;
}

TEST_P(RandomGraphTest, GpuMatchesTheCpu) {
  const auto start = std::chrono::steady_clock::now();
  Stats stats;
  const int seed_env = EnvInt("MGD_RANDOM_GRAPH_SEED", -1);
  const int wanted = seed_env >= 0 ? 1 : EnvInt("MGD_RANDOM_GRAPHS", kDefaultGraphs);
  int drawn = 0;
  if (seed_env >= 0) {
    RunSeed(static_cast<uint32_t>(seed_env), stats);
    drawn = 1;
  } else {
    // Seeds 1, 2, ... until `wanted` graphs ran (discarded ones do not count).
    for (uint32_t seed = 1; stats.graphs + stats.failures < wanted && drawn < 4 * wanted; ++seed, ++drawn) {
      RunSeed(seed, stats);
      if (stats.failures >= 10) {
        ADD_FAILURE() << "stopping after 10 failing graphs";
        break;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << gpu::ApiName(GetParam()) << ": " << stats.graphs << " random graphs matched the CPU, " << stats.failures
          << " failed, " << stats.total_discarded() << " discarded, in " << fmt::format("{:.1f}", seconds) << " s\n";
  for (const auto& [why, count] : stats.discarded) summary << "  discarded (" << why << "): " << count << "\n";
  for (const auto& [precision, worst] : stats.closest) {
    const auto& one_op = stats.closest_one_op[precision];
    summary << "  " << precision << ": largest |gpu - cpu| / bound " << fmt::format("{:.3g}", worst.first) << " (seed "
            << worst.second << "), / one op's bound " << fmt::format("{:.3g}", one_op.first) << " (seed "
            << one_op.second << ")\n";
  }
  summary << "  nodes run:";
  for (const auto& [op, count] : stats.nodes) summary << " " << op << " " << count;
  summary << "\n  node draws dropped (not supported):";
  for (const auto& [op, count] : stats.unsupported) summary << " " << op << " " << count;
  summary << "\n";
  for (const auto& [op, reason] : stats.reasons) summary << "    " << op << ": " << reason << "\n";
  std::cout << summary.str();
  if (seed_env < 0) {
    // Discards must stay the exception, or the test would quietly test little.
    EXPECT_LE(2 * stats.total_discarded(), drawn) << summary.str();
    EXPECT_GE(stats.graphs + stats.failures, wanted) << summary.str();
  }
  if (seed_env < 0 && wanted >= 100) {
    // Ops the GPU has run since its first version must keep turning up: a
    // generator that stopped taking them would otherwise go unnoticed here.
    for (OpKind op : {OpKind::kConv2d, OpKind::kDepthwiseConv2d, OpKind::kFullyConnected, OpKind::kAdd, OpKind::kMul,
                      OpKind::kPrelu, OpKind::kLogistic}) {
      EXPECT_GT(stats.nodes[OpName(op)], 0) << OpName(op) << " never ran on the GPU\n" << summary.str();
    }
  }
}

// The makers alone, every node kept (most ops have no GPU shader yet, so the
// GPU test drops them): every drawn graph must pass the validator, load in
// the CPU interpreter (whose kernels check each output shape), survive the
// writer and reader (what a failure report relies on), and run to finite
// outputs. A wrong maker then shows up here, not as a GPU failure later.
TEST(RandomGraphMakersTest, EveryGraphIsOneTheCpuRuns) {
  Stats stats;
  const SupportFn everything = [](const Graph&, int) { return NodeSupport{true, ""}; };
  int non_finite = 0;
  for (uint32_t seed = 1; seed <= 600; ++seed) {
    std::optional<DrawnGraph> g = DrawGraph(seed, everything, stats);
    ASSERT_TRUE(g.has_value()) << "seed " << seed;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << "\n" << Describe(g->graph));
    ASSERT_TRUE(ValidateGraph(g->graph).ok()) << ValidateGraph(g->graph);
    auto bytes = WriteModel(g->graph);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto read = ReadModel(bytes->data(), bytes->size(), "random graph");
    ASSERT_TRUE(read.ok()) << read.status();
    auto cpu = Interpreter::Create(std::move(*read), InterpreterOptions{});
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      std::memcpy((*cpu)->input(i).data, g->inputs[i].data(), g->inputs[i].size() * 4);
    }
    ASSERT_TRUE((*cpu)->Invoke().ok());
    for (size_t k = 0; k < (*cpu)->num_outputs(); ++k) {
      for (float v : Floats((*cpu)->output(k))) non_finite += std::isfinite(v) ? 0 : 1;
    }
    for (const Node& node : g->graph.nodes) ++stats.nodes[OpName(node.op)];
  }
  EXPECT_EQ(non_finite, 0);
  // Every maker's ops turn up.
  for (OpKind op : {OpKind::kConv2d,
                    OpKind::kDepthwiseConv2d,
                    OpKind::kTransposeConv,
                    OpKind::kFullyConnected,
                    OpKind::kBatchMatmul,
                    OpKind::kCumsum,
                    OpKind::kGather,
                    OpKind::kOneHot,
                    OpKind::kExp,
                    OpKind::kRsqrt,
                    OpKind::kGelu,
                    OpKind::kAdd,
                    OpKind::kDiv,
                    OpKind::kPrelu,
                    OpKind::kSoftmax,
                    OpKind::kMaxPool2d,
                    OpKind::kAveragePool2d,
                    OpKind::kMean,
                    OpKind::kSum,
                    OpKind::kReduceMax,
                    OpKind::kReduceMin,
                    OpKind::kReduceProd,
                    OpKind::kLstm,
                    OpKind::kUnidirectionalSequenceLstm,
                    OpKind::kConcatenation,
                    OpKind::kReshape,
                    OpKind::kSqueeze,
                    OpKind::kExpandDims,
                    OpKind::kPad,
                    OpKind::kMirrorPad,
                    OpKind::kPack,
                    OpKind::kSplit,
                    OpKind::kSplitV,
                    OpKind::kTile,
                    OpKind::kSlice,
                    OpKind::kStridedSlice,
                    OpKind::kDepthToSpace,
                    OpKind::kSpaceToDepth,
                    OpKind::kResizeBilinear,
                    OpKind::kResizeNearestNeighbor,
                    OpKind::kTranspose,
                    OpKind::kEqual,
                    OpKind::kNotEqual,
                    OpKind::kLess,
                    OpKind::kLessEqual,
                    OpKind::kGreater,
                    OpKind::kGreaterEqual,
                    OpKind::kSelectV2,
                    OpKind::kCast}) {
    EXPECT_GT(stats.nodes[OpName(op)], 0) << OpName(op);
  }
}

INSTANTIATE_TEST_SUITE_P(BothApis, RandomGraphTest, ::testing::Values(gpu::Api::kVulkan, gpu::Api::kGles),
                         [](const ::testing::TestParamInfo<gpu::Api>& info) {
                           return std::string(gpu::ApiName(info.param));
                         });

}  // namespace
}  // namespace random_graph
}  // namespace mgd
