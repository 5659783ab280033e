// The memory plan of whole models: every strategy places every activation
// of the six test models apart from those alive at the same time, within
// its buffer and at aligned offsets (no GPU needed); and on both APIs the
// outputs are bit-identical with every strategy to those without reuse.
#include <algorithm>

#include "delegate/compile_only.h"
#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

const char* const kModels[] = {"face_detection_short_range", "face_landmark", "hand_landmark_lite",
                               "palm_detection_lite",        "pose_landmark_lite", "selfie_segmentation"};

// Each (strategy, problem) pair that exists, forced.
std::vector<MemoryOptions> EveryPlan(size_t alignment) {
  std::vector<MemoryOptions> plans;
  for (memory::Strategy s : memory::kStrategies) {
    for (memory::Problem p : {memory::Problem::kOffsets, memory::Problem::kSharedObjects}) {
      const bool exists = p == memory::Problem::kSharedObjects || memory::PlanOffsets(s, {}).has_value();
      if (exists) plans.push_back({s, p, alignment, UINT64_MAX});
    }
  }
  plans.push_back({memory::Strategy::kBest, std::nullopt, alignment, UINT64_MAX});
  return plans;
}

std::string Describe(const MemoryOptions& m) {
  return std::string(memory::StrategyName(m.strategy)) + ":" + (m.problem ? memory::ProblemName(*m.problem) : "any");
}

// The partitions `model` compiles to with `memory` (no GPU involved).
std::vector<CompiledModel> Compile(const std::string& model, const MemoryOptions& memory, bool fp16) {
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  CompileOptions options;
  options.precision = Precision::Of(fp16);
  options.memory = memory;
  CompileOnlyDelegate delegate(options);
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(&delegate);
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(interpreter_options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  return delegate.compiled();
}

uint64_t Total(const CompiledModel& m) {
  uint64_t total = 0;
  for (uint64_t b : m.memory_objects) total += b;
  return total;
}

TEST(MemoryPlan, EveryStrategyPlacesEveryModelsActivationsApart) {
  const size_t alignment = 64;
  for (const char* model : kModels) {
    for (bool fp16 : {false, true}) {
      uint64_t naive = 0, best = 0, bound = 0;
      std::vector<uint64_t> totals;
      for (const MemoryOptions& memory : EveryPlan(alignment)) {
        SCOPED_TRACE(std::string(model) + (fp16 ? " fp16 " : " fp32 ") + Describe(memory));
        const std::vector<CompiledModel> partitions = Compile(model, memory, fp16);
        ASSERT_EQ(partitions.size(), 1u);
        const CompiledModel& m = partitions[0];
        bound = memory::LowerBound(ActivationUsagesOf(m, alignment).usages);
        const uint64_t total = Total(m);
        if (memory.strategy == memory::Strategy::kNaive) naive = std::max(naive, total);
        if (memory.strategy == memory::Strategy::kBest) best = total;
        else totals.push_back(total);
        EXPECT_GE(total, bound);
        if (memory.problem == memory::Problem::kOffsets) {
          EXPECT_EQ(m.memory_objects.size(), 1u);
        }
        std::vector<const CompiledBuffer*> activations;
        for (const CompiledBuffer& b : m.buffers) {
          if (b.role != BufferRole::kActivation) {
            EXPECT_EQ(b.object, -1);
            continue;
          }
          ASSERT_GE(b.object, 0);
          ASSERT_LT(static_cast<size_t>(b.object), m.memory_objects.size());
          EXPECT_EQ(b.offset % alignment, 0u);
          EXPECT_LE(b.offset + b.bytes, m.memory_objects[static_cast<size_t>(b.object)]);
          activations.push_back(&b);
        }
        for (size_t i = 0; i < activations.size(); ++i) {
          for (size_t j = 0; j < i; ++j) {
            const CompiledBuffer& a = *activations[i];
            const CompiledBuffer& b = *activations[j];
            const bool alive_together = a.first_use <= b.last_use && b.first_use <= a.last_use;
            const bool share_bytes = a.object == b.object && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
            ASSERT_FALSE(alive_together && share_bytes) << "tensors " << a.tensor << " and " << b.tensor;
          }
        }
      }
      SCOPED_TRACE(model);
      EXPECT_EQ(best, *std::min_element(totals.begin(), totals.end()));
      EXPECT_LT(best, naive);
    }
  }
}

TEST(MemoryPlan, AnArenaTooLargeForTheDeviceGivesWayToSharedObjects) {
  MemoryOptions memory;
  memory.max_object_bytes = 512 << 10;  // more than any face_detection tensor, less than the best arena
  const CompiledModel best = Compile("face_detection_short_range", memory, false)[0];
  EXPECT_EQ(best.memory_problem, memory::Problem::kSharedObjects);
  EXPECT_GT(best.memory_objects.size(), 1u);
  for (uint64_t bytes : best.memory_objects) EXPECT_LE(bytes, memory.max_object_bytes);
  // Forced: the plan cannot fit, and prepare says so (the partition then
  // stays on the CPU).
  memory.strategy = memory::Strategy::kNaive;
  memory.problem = memory::Problem::kOffsets;
  CompileOptions options;
  options.memory = memory;
  CompileOnlyDelegate delegate(options);
  auto graph = ReadModelFile(testing::DataPath("models/face_detection_short_range.tflite"));
  ASSERT_TRUE(graph.ok());
  std::vector<std::string> log;
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(&delegate);
  interpreter_options.logger = [&](LogLevel, const std::string& m) { log.push_back(m); };
  ASSERT_TRUE(Interpreter::Create(std::move(*graph), std::move(interpreter_options)).ok());
  EXPECT_TRUE(delegate.compiled().empty());
  EXPECT_THAT(log, ::testing::Contains(::testing::HasSubstr("memory strategy naive (offsets): a buffer of")));
}

using MemoryPlanGpuTest = testing::DelegateTest;

TEST_P(MemoryPlanGpuTest, OutputsAreIdenticalWithEveryStrategy) {
  for (const char* model : {"face_detection_short_range", "hand_landmark_lite"}) {
    SCOPED_TRACE(model);
    auto graph = ReadModelFile(testing::DataPath(std::string("models/") + model + ".tflite"));
    ASSERT_TRUE(graph.ok()) << graph.status();
    const auto input = testing::ReadF32(testing::DataPath(std::string("reference/") + model + "/image/input_0.f32"));
    std::vector<std::vector<float>> reference;
    uint64_t naive_bytes = 0;
    for (const MemoryOptions& memory : EveryPlan(0)) {
      SCOPED_TRACE(Describe(memory));
      GpuDelegateOptions options;
      options.api = GetParam().api;
      options.precision = Precision::Of(GetParam().fp16);
      options.validation = true;
      options.memory_strategy = memory.strategy;
      options.memory_problem = memory.problem;
      auto delegate = GpuDelegate::Create(options);
      ASSERT_TRUE(delegate.ok()) << delegate.status();
      const auto outputs = Run(*graph, {input}, delegate->get());
      EXPECT_THAT((*delegate)->device().validation_messages(), ::testing::IsEmpty());
      ASSERT_EQ((*delegate)->memory_uses().size(), 1u);
      const GpuDelegate::MemoryUse& use = (*delegate)->memory_uses()[0];
      if (memory.strategy != memory::Strategy::kBest) {
        EXPECT_EQ(use.strategy, memory.strategy);
        EXPECT_EQ(use.problem, *memory.problem);
      }
      if (reference.empty()) {  // naive offsets come first: no reuse at all
        ASSERT_EQ(memory.strategy, memory::Strategy::kNaive);
        reference = outputs;
        naive_bytes = use.bytes;
        continue;
      }
      if (memory.strategy != memory::Strategy::kNaive) {
        EXPECT_LT(use.bytes, naive_bytes);
      }
      ASSERT_EQ(outputs.size(), reference.size());
      for (size_t k = 0; k < outputs.size(); ++k) {
        ASSERT_EQ(outputs[k].size(), reference[k].size());
        EXPECT_EQ(std::memcmp(outputs[k].data(), reference[k].data(), outputs[k].size() * 4), 0) << "output " << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MemoryPlanGpuTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, true}),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
