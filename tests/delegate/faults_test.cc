// What invokes do when the GPU fails (issue 21), with faults injected into
// the delegate's device (backends/gpu/faults.h): out of memory at prepare
// (the partition stays on the CPU) and for the buffers of invokes in flight
// (that call fails, the next succeeds), a fence that never signals (a
// deadline fails the invoke cleanly; once the GPU is back the next invoke
// succeeds), a lost device (every invoke says to recreate the delegate).
// Never a crash or a hang; outputs right whenever an invoke succeeds.
#include "delegate/gpu_delegate.h"
#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

const std::string kModel = "face_detection_short_range";

std::vector<OutputBytes> Targets(std::vector<Bytes>& outputs) {
  std::vector<OutputBytes> targets;
  for (Bytes& o : outputs) targets.push_back({o.data(), o.size()});
  return targets;
}

class FaultsTest : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam().api);
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (testing::GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.faults = switches_;
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    delegate_ = std::move(*delegate);
    input_ = testing::ReadF32(testing::DataPath("reference/" + kModel + "/image/input_0.f32"));
    expected_ = RunOn(nullptr, nullptr);  // the CPU's outputs
  }

  std::unique_ptr<Interpreter> Make(std::string* log = nullptr) {
    auto graph = ReadModelFile(testing::DataPath("models/" + kModel + ".tflite"));
    EXPECT_TRUE(graph.ok());
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    options.logger = [log](LogLevel, const std::string& m) {
      if (log != nullptr) *log += m + "\n";
    };
    auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
    EXPECT_TRUE(interpreter.ok()) << interpreter.status();
    return interpreter.ok() ? std::move(*interpreter) : nullptr;
  }

  // The outputs of one invoke (of a fresh CPU interpreter when `interpreter`
  // is null), or a failed status.
  std::vector<Bytes> RunOn(Interpreter* interpreter, absl::Status* status, const InvokeOptions& options = {}) {
    std::unique_ptr<Interpreter> cpu;
    if (interpreter == nullptr) {
      auto graph = ReadModelFile(testing::DataPath("models/" + kModel + ".tflite"));
      cpu = std::move(*Interpreter::Create(std::move(*graph), InterpreterOptions{}));
      interpreter = cpu.get();
    }
    std::vector<Bytes> outputs;
    for (size_t k = 0; k < interpreter->num_outputs(); ++k) outputs.emplace_back(interpreter->output(k).bytes);
    absl::Status s = interpreter->Invoke({{input_.data(), input_.size() * 4}}, Targets(outputs), options);
    if (status != nullptr) *status = s;
    return outputs;
  }

  // Within the fp32 bound of the CPU's outputs.
  void ExpectRight(const std::vector<Bytes>& got) {
    ASSERT_EQ(got.size(), expected_.size());
    for (size_t k = 0; k < got.size(); ++k) {
      const auto* g = reinterpret_cast<const float*>(got[k].data());
      const auto* e = reinterpret_cast<const float*>(expected_[k].data());
      for (size_t i = 0; i < got[k].size() / 4; i += 7) {
        ASSERT_NEAR(g[i], e[i], testing::OpBound(e[i], false, 100)) << "output " << k << " element " << i;
      }
    }
  }

  std::shared_ptr<gpu::FaultSwitches> switches_ = std::make_shared<gpu::FaultSwitches>();
  std::unique_ptr<GpuDelegate> delegate_;
  std::vector<float> input_;
  std::vector<Bytes> expected_;
};

TEST_P(FaultsTest, OutOfMemoryAtPrepareLeavesThePartitionOnTheCpu) {
  switches_->out_of_memory = true;
  std::string log;
  auto interpreter = Make(&log);
  ASSERT_NE(interpreter, nullptr);
  EXPECT_TRUE(interpreter->partitions().empty() ||
              std::all_of(interpreter->placements().begin(), interpreter->placements().end(),
                          [](const NodePlacement& p) { return p.where != NodePlacement::Where::kDelegate; }));
  EXPECT_THAT(log, HasSubstr("out of device memory"));
  absl::Status s;
  ExpectRight(RunOn(interpreter.get(), &s));
  EXPECT_TRUE(s.ok()) << s;
}

TEST_P(FaultsTest, OutOfMemoryForInvokesInFlightFailsThatCallOnly) {
  auto interpreter = Make();
  ASSERT_NE(interpreter, nullptr);
  switches_->out_of_memory = true;
  std::vector<Bytes> outputs;
  for (size_t k = 0; k < interpreter->num_outputs(); ++k) outputs.emplace_back(interpreter->output(k).bytes);
  const std::vector<OutputBytes> targets = Targets(outputs);
  auto event = interpreter->InvokeAsync({{input_.data(), input_.size() * 4}}, targets);
  ASSERT_FALSE(event.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(event.status())) << event.status();
  EXPECT_THAT(std::string(event.status().message()), HasSubstr("in flight"));
  absl::Status s;
  ExpectRight(RunOn(interpreter.get(), &s));  // the synchronous invoke needs no new memory
  EXPECT_TRUE(s.ok()) << s;
  switches_->out_of_memory = false;
  event = interpreter->InvokeAsync({{input_.data(), input_.size() * 4}}, targets);
  ASSERT_TRUE(event.ok()) << event.status();
  (*event)->Wait();
  EXPECT_TRUE((*event)->status().ok()) << (*event)->status();
  ExpectRight(outputs);
}

TEST_P(FaultsTest, AFenceThatNeverSignalsMeetsTheDeadline) {
  auto interpreter = Make();
  ASSERT_NE(interpreter, nullptr);
  switches_->hang = true;
  // Without a deadline the run timeout ends it (at once, here).
  absl::Status s;
  RunOn(interpreter.get(), &s);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  // With one, the deadline; the work is abandoned (and waited for by the
  // slot's next run, so no other invoke without a deadline until the GPU
  // is back: it would wait the run timeout).
  InvokeOptions options;
  options.timeout = std::chrono::milliseconds(50);
  RunOn(interpreter.get(), &s, options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("deadline exceeded"));
  RunOn(interpreter.get(), &s, options);  // the abandoned work still blocks the slot: the deadline again
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  // In flight too.
  std::vector<Bytes> outputs = expected_;
  const std::vector<OutputBytes> targets = Targets(outputs);
  auto event = interpreter->InvokeAsync({{input_.data(), input_.size() * 4}}, targets, nullptr, options);
  ASSERT_TRUE(event.ok());
  (*event)->Wait();
  EXPECT_TRUE(absl::IsDeadlineExceeded((*event)->status())) << (*event)->status();
  // The GPU recovers: the abandoned work completes, the next invokes succeed.
  switches_->hang = false;
  ExpectRight(RunOn(interpreter.get(), &s));
  EXPECT_TRUE(s.ok()) << s;
  event = interpreter->InvokeAsync({{input_.data(), input_.size() * 4}}, targets);
  ASSERT_TRUE(event.ok());
  (*event)->Wait();
  EXPECT_TRUE((*event)->status().ok()) << (*event)->status();
  ExpectRight(outputs);
}

TEST_P(FaultsTest, ALostDeviceSaysToRecreateTheDelegate) {
  auto interpreter = Make();
  ASSERT_NE(interpreter, nullptr);
  switches_->lose_device = true;
  for (int i = 0; i < 2; ++i) {
    absl::Status s;
    RunOn(interpreter.get(), &s);
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("create them again"));
  }
  std::vector<Bytes> outputs = expected_;
  const std::vector<OutputBytes> targets = Targets(outputs);
  auto event = interpreter->InvokeAsync({{input_.data(), input_.size() * 4}}, targets);
  if (event.ok()) {
    (*event)->Wait();
    EXPECT_TRUE(absl::IsUnavailable((*event)->status())) << (*event)->status();
  } else {
    EXPECT_TRUE(absl::IsUnavailable(event.status())) << event.status();  // its slots could not be made
  }
  interpreter.reset();  // deleting after the loss is clean
}

INSTANTIATE_TEST_SUITE_P(Apis, FaultsTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, false}),
                         testing::BackendName);

}  // namespace
}  // namespace mgd
