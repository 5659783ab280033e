// The tuner on the GPU (lavapipe/llvmpipe in CI): a small model tuned into a
// table, the table written and read back, and a delegate given it uses it
// for every dispatch that may change its workgroup, with outputs identical
// to those with the default calculator; the built-in table's entries set
// aside where a user's table changes its convolution settings.
#include "delegate/tune.h"

#include <algorithm>
#include <map>

#include "model/reader.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"

namespace mgd {
namespace {

using testing::GraphBuilder;
using TuneTest = testing::DelegateTest;

// conv 3x3 -> RELU -> depthwise 3x3 -> ADD(input of the depthwise).
Graph SmallModel() {
  GraphBuilder b;
  const int x = b.Input({1, 16, 12, 5});
  ops::Conv2dAttributes conv;
  conv.padding = Padding::kSame;
  const int c = b.Tensor({1, 16, 12, 8}), r = b.Tensor({1, 16, 12, 8}), d = b.Tensor({1, 16, 12, 8}), y = b.Tensor({1, 16, 12, 8});
  b.Op(OpKind::kConv2d, conv,
       {x, b.Constant({8, 3, 3, 5}, testing::Uniform(8 * 9 * 5, 1, 0.2f)), b.Constant({8}, testing::Uniform(8, 2))}, {c});
  b.Op(OpKind::kRelu, {}, {c}, {r});
  ops::DepthwiseConv2dAttributes dw;
  dw.padding = Padding::kSame;
  dw.depth_multiplier = 1;
  b.Op(OpKind::kDepthwiseConv2d, dw,
       {r, b.Constant({1, 3, 3, 8}, testing::Uniform(9 * 8, 3, 0.3f)), b.Constant({8}, testing::Uniform(8, 4))}, {d});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {d, r}, {y});
  b.Output(y);
  return b.Build();
}

std::unique_ptr<GpuDelegate> Make(const testing::Backend& backend, std::optional<tuning::Table> table,
                                  TuningRecorder* recorder = nullptr) {
  GpuDelegateOptions options;
  options.api = backend.api;
  options.precision = Precision::Of(backend.fp16);
  options.validation = true;
  if (recorder != nullptr) options.observers.push_back(recorder);
  options.workgroups = std::move(table);
  auto delegate = GpuDelegate::Create(options);
  EXPECT_TRUE(delegate.ok()) << delegate.status();
  return delegate.ok() ? std::move(*delegate) : nullptr;
}

TEST_P(TuneTest, TunedTableIsUsedAndChangesNoOutput) {
  const Graph graph = SmallModel();
  const std::vector<std::vector<float>> inputs = {testing::Uniform(16 * 12 * 5, 9)};

  const std::vector<std::vector<float>> reference = Run(graph, inputs, Make(GetParam(), std::nullopt).get());
  // The tuner times dispatches of a prepared model: its interpreter stays.
  TuningRecorder recorder;  // outlives the delegate
  auto tuner = Make(GetParam(), std::nullopt, &recorder);
  ASSERT_NE(tuner, nullptr);
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(tuner.get());
  auto prepared = Interpreter::Create(graph, std::move(interpreter_options));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_EQ(recorder.partitions(), 1u);
  const gpu::GpuInfo& info = tuner->device().info();
  tuning::Table table;
  table.gpu = {gpu::ApiName(info.api), info.vendor, info.device_name, ""};
  std::map<std::string, tuning::Entry> done;
  TuneOptions options;
  options.max_candidates = 3;
  options.final_repeats = 4;
  size_t progress_calls = 0;
  options.progress = [&](size_t, size_t) { ++progress_calls; };
  auto summary = TunePrepared(recorder, info, 0, options, done, table);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_GT(summary->dispatches, 0u);
  EXPECT_EQ(summary->tuned, table.entries.size());
  EXPECT_EQ(progress_calls, summary->dispatches);
  EXPECT_LE(summary->tuned_us, summary->default_us);  // a winner is kept only when faster
  for (const tuning::Entry& e : table.entries) {
    EXPECT_TRUE(tuning::Fits(e.workgroup, info.limits));
    EXPECT_GT(e.time_us, 0);
  }
  EXPECT_THAT(tuner->device().validation_messages(), ::testing::IsEmpty());

  // Written and read back, as `mgd tune` and `mgd run --workgroups` do.
  auto parsed = tuning::ParseTable(tuning::SerializeTable(table), "tuned.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto user = Make(GetParam(), *parsed);
  ASSERT_NE(user, nullptr);
  const std::vector<std::vector<float>> outputs = Run(graph, inputs, user.get());
  ASSERT_EQ(user->dispatch_infos().size(), 1u);
  for (const GpuDelegate::DispatchInfo& d : user->dispatch_infos()[0]) {
    if (d.grid == std::array<uint32_t, 3>{0, 0, 0}) continue;
    EXPECT_EQ(d.source, "table") << d.name;
    EXPECT_EQ(d.workgroup, done.at(d.key.ToString()).workgroup) << d.name;
  }
  ASSERT_EQ(outputs.size(), reference.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    EXPECT_EQ(std::memcmp(outputs[k].data(), reference[k].data(), outputs[k].size() * 4), 0) << "output " << k;
  }
}

// The built-in table's entries were tuned for the grids of its own
// convolution settings: a user's table that changes those settings sets
// them aside (each dispatch then takes the default calculator's workgroup or
// its generator's), one that leaves or restates them keeps them.
TEST_P(TuneTest, BuiltinEntriesStepAsideForOtherConvolutionSettings) {
  auto probe = Make(GetParam(), std::nullopt);
  ASSERT_NE(probe, nullptr);
  const tuning::Table* builtin = tuning::BuiltinTableFor(probe->device().info());
  const bool has_entries = builtin != nullptr && std::any_of(builtin->entries.begin(), builtin->entries.end(), [&](const auto& e) {
    return e.key.fp16 == GetParam().fp16;
  });
  if (!has_entries) GTEST_SKIP() << "no built-in entries for " << probe->device().info().device_name << " in this precision";
  auto graph = ReadModelFile(testing::DataPath("models/face_detection_short_range.tflite"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto sources = [&](const tuning::Table& table) {
    std::map<std::string, int> count;
    auto delegate = Make(GetParam(), table);
    if (delegate == nullptr) return count;
    InterpreterOptions interpreter_options;
    interpreter_options.delegates.push_back(delegate.get());
    auto interpreter = Interpreter::Create(*graph, std::move(interpreter_options));
    EXPECT_TRUE(interpreter.ok()) << interpreter.status();
    for (const auto& partition : delegate->dispatch_infos()) {
      for (const GpuDelegate::DispatchInfo& d : partition) ++count[d.source];
    }
    return count;
  };
  tuning::Table silent;  // says nothing of the settings
  silent.name = "silent.json";
  const std::map<std::string, int> kept = sources(silent);
  EXPECT_GT(kept.count("table") + kept.count("bucket"), 0u);
  tuning::Table restated = silent;
  tuning::SetConvSettings(restated, probe->conv_settings());
  EXPECT_EQ(sources(restated), kept);
  // A gate's workgroup and a fused pair's split sums are none of the
  // entries' business.
  tuning::Table gates = silent;
  tuning::ConvSettings other_gates = probe->conv_settings();
  other_gates.gate_invocations = other_gates.gate_invocations == 256 ? 512 : 256;
  other_gates.split_fused = !other_gates.split_fused;
  tuning::SetConvSettings(gates, other_gates);
  EXPECT_EQ(sources(gates), kept);
  tuning::Table other = silent;
  tuning::ConvSettings settings = probe->conv_settings();
  settings.flat = !settings.flat;
  settings.block_x = settings.block_x == 1 ? 2 : 1;
  tuning::SetConvSettings(other, settings);
  const std::map<std::string, int> aside = sources(other);
  EXPECT_FALSE(aside.empty());
  EXPECT_EQ(aside.count("table") + aside.count("bucket") + aside.count("op_rule"), 0u);
}

TEST_P(TuneTest, ATableForAnotherGpuIsRefused) {
  tuning::Table other;
  other.name = "adreno.json";
  other.gpu = {"", "Qualcomm", "Adreno", ""};
  GpuDelegateOptions options;
  options.api = GetParam().api;
  options.workgroups = other;
  auto delegate = GpuDelegate::Create(options);
  ASSERT_FALSE(delegate.ok());
  EXPECT_THAT(std::string(delegate.status().message()),
              ::testing::HasSubstr("adreno.json: the table is for vendor 'Qualcomm', device 'Adreno'; this device is"));
}

INSTANTIATE_TEST_SUITE_P(Backends, TuneTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, true}),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
