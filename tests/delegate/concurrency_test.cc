// Interpreters created at the same moment on one shared GPU delegate, from
// several threads (issue 18): every prepare succeeds (no partition falls
// back to the CPU, nothing is logged), nothing crashes, and each
// interpreter's outputs are bit-identical to those of one created alone.
// Through the C++ API and through the C API's shared MgdDelegate. Several
// rounds, so that a race shows up in one of them.
#include <latch>
#include <mutex>
#include <thread>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"
#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

using ConcurrencyTest = testing::DelegateTest;
using Outputs = std::vector<std::vector<float>>;

// The same model twice among them: two prepares of one partition at once.
const std::vector<std::string> kModels = {"face_detection_short_range", "hand_landmark_lite", "face_detection_short_range"};
constexpr int kRounds = 2;

std::vector<float> InputOf(const std::string& model) {
  return testing::ReadF32(testing::DataPath("reference/" + model + "/image/input_0.f32"));
}

// Creates an interpreter of `model` on `delegate`, runs it once and returns
// its outputs; any message logged, any node left on the CPU is a failure.
Outputs RunCpp(const std::string& model, Delegate* delegate, std::string& problems) {
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  if (!graph.ok()) return problems += std::string(graph.status().message()) + "\n", Outputs{};
  InterpreterOptions options;
  options.delegates.push_back(delegate);
  std::string log;
  options.logger = [&](LogLevel, const std::string& m) { log += m + "\n"; };
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  if (!interpreter.ok()) return problems += std::string(interpreter.status().message()) + "\n", Outputs{};
  problems += log;
  for (const NodePlacement& p : (*interpreter)->placements()) {
    if (p.where == NodePlacement::Where::kCpu) problems += model + ": a node runs on the CPU: " + p.reason + "\n";
  }
  const std::vector<float> input = InputOf(model);
  std::memcpy((*interpreter)->input(0).data, input.data(), (*interpreter)->input(0).bytes);
  if (absl::Status s = (*interpreter)->Invoke(); !s.ok()) return problems += std::string(s.message()) + "\n", Outputs{};
  Outputs outputs;
  for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
    const TensorRef& t = (*interpreter)->output(k);
    outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  return outputs;
}

// `run(model, problems)` on one thread per model, all started together.
template <typename Run>
std::vector<Outputs> RunTogether(const Run& run, std::vector<std::string>& problems) {
  std::vector<Outputs> results(kModels.size());
  problems.assign(kModels.size(), "");
  std::latch start(static_cast<std::ptrdiff_t>(kModels.size()));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < kModels.size(); ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = run(kModels[i], problems[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

TEST_P(ConcurrencyTest, InterpretersCreatedTogetherOnOneDelegate) {
  std::map<std::string, Outputs> alone;
  for (const std::string& model : kModels) {
    std::string problems;
    alone[model] = RunCpp(model, delegate_.get(), problems);
    ASSERT_EQ(problems, "") << model;
  }
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::string> problems;
    const auto together = RunTogether(
        [&](const std::string& model, std::string& p) { return RunCpp(model, delegate_.get(), p); }, problems);
    for (size_t i = 0; i < kModels.size(); ++i) {
      EXPECT_EQ(problems[i], "") << kModels[i];
      EXPECT_TRUE(together[i] == alone[kModels[i]]) << kModels[i] << ": outputs differ from a run alone";
    }
  }
}

struct Messages {
  std::mutex mutex;
  std::string text;
};
void Collect(void* user_data, const char* message) {
  auto* m = static_cast<Messages*>(user_data);
  const std::lock_guard<std::mutex> lock(m->mutex);
  m->text += std::string(message) + "\n";
}

Outputs RunC(const std::string& model, MgdDelegate* gpu, std::string& problems) {
  Messages messages;
  const std::string path = testing::DataPath("models/" + model + ".tflite");
  MgdModel* m = MgdModelCreateFromFileWithErrorReporter(path.c_str(), Collect, &messages);
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, Collect, &messages);
  MgdInterpreterOptionsAddDelegate(options, gpu);
  MgdInterpreter* interpreter = MgdInterpreterCreate(m, options);
  Outputs outputs;
  if (interpreter != nullptr) {
    const std::vector<float> input = InputOf(model);
    if (MgdTensorCopyFromBuffer(MgdInterpreterGetInputTensor(interpreter, 0), input.data(), input.size() * 4) == kMgdOk &&
        MgdInterpreterInvoke(interpreter) == kMgdOk) {
      for (int32_t k = 0; k < MgdInterpreterGetOutputTensorCount(interpreter); ++k) {
        const MgdTensor* t = MgdInterpreterGetOutputTensor(interpreter, k);
        outputs.emplace_back(MgdTensorByteSize(t) / 4);
        MgdTensorCopyToBuffer(t, outputs.back().data(), MgdTensorByteSize(t));
      }
    }
  }
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(m);
  problems += messages.text;  // a partition left on the CPU is reported as a warning
  return outputs;
}

TEST_P(ConcurrencyTest, TheCApisSharedDelegateToo) {
  MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
  o.api = GetParam().api == gpu::Api::kVulkan ? kMgdGpuApiVulkan : kMgdGpuApiGles;
  o.precision_loss_allowed = GetParam().fp16 ? 1 : 0;
  Messages messages;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&o, Collect, &messages);
  ASSERT_NE(gpu, nullptr) << messages.text;
  std::map<std::string, Outputs> alone;
  for (const std::string& model : kModels) {
    std::string problems;
    alone[model] = RunC(model, gpu, problems);
    ASSERT_EQ(problems, "") << model;
    ASSERT_FALSE(alone[model].empty()) << model;
  }
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::string> problems;
    const auto together = RunTogether([&](const std::string& model, std::string& p) { return RunC(model, gpu, p); }, problems);
    for (size_t i = 0; i < kModels.size(); ++i) {
      EXPECT_EQ(problems[i], "") << kModels[i];
      EXPECT_TRUE(together[i] == alone[kModels[i]]) << kModels[i] << ": outputs differ from a run alone";
    }
  }
  MgdGpuDelegateDelete(gpu);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConcurrencyTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
