// Invokes from several threads and invokes in flight (issue 21): N threads
// x M invokes on one interpreter, interpreters sharing a delegate invoked
// together, and async invokes with 1, 2 and 4 in flight, through the C++
// and the C API. Two different inputs alternate, so that one invoke's data
// showing up in another's outputs is caught: every output must be
// bit-identical to a single-threaded synchronous run on the same input.
// Also under ThreadSanitizer (scripts/test --tsan).
#include <atomic>
#include <latch>
#include <thread>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"
#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

using InvokeThreadsTest = testing::DelegateTest;
using Bytes = std::vector<uint8_t>;
using Outputs = std::vector<Bytes>;

constexpr int kThreads = 3;
constexpr int kInvokesPerThread = 3;

std::unique_ptr<Interpreter> Make(const std::string& model, Delegate* delegate, int max_in_flight = 2) {
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  InterpreterOptions options;
  if (delegate != nullptr) options.delegates.push_back(delegate);
  options.max_in_flight = max_in_flight;
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  return interpreter.ok() ? std::move(*interpreter) : nullptr;
}

// Input 0: the reference image; input 1: the same reversed (another frame).
std::vector<Bytes> TwoInputs(const std::string& model) {
  const std::vector<float> image = testing::ReadF32(testing::DataPath("reference/" + model + "/image/input_0.f32"));
  std::vector<float> reversed(image.rbegin(), image.rend());
  auto bytes = [](const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    return Bytes(p, p + v.size() * sizeof(float));
  };
  return {bytes(image), bytes(reversed)};
}

Outputs EmptyOutputs(const Interpreter& interpreter) {
  Outputs outputs;
  for (size_t k = 0; k < interpreter.num_outputs(); ++k) outputs.emplace_back(interpreter.output(k).bytes, 0xEE);
  return outputs;
}

std::vector<OutputBytes> Targets(Outputs& outputs) {
  std::vector<OutputBytes> targets;
  for (Bytes& o : outputs) targets.push_back({o.data(), o.size()});
  return targets;
}

// The synchronous single-threaded outputs for each input.
std::vector<Outputs> Expected(Interpreter& interpreter, const std::vector<Bytes>& inputs) {
  std::vector<Outputs> expected;
  for (const Bytes& in : inputs) {
    std::memcpy(interpreter.input(0).data, in.data(), in.size());
    EXPECT_TRUE(interpreter.Invoke().ok());
    Outputs out;
    for (size_t k = 0; k < interpreter.num_outputs(); ++k) {
      const TensorRef& t = interpreter.output(k);
      out.emplace_back(t.data, t.data + t.bytes);
    }
    expected.push_back(std::move(out));
  }
  EXPECT_FALSE(expected[0] == expected[1]) << "the two inputs must give different outputs";
  return expected;
}

// `invoke(thread, i)` on kThreads threads started together.
template <typename F>
void OnThreads(const F& invoke) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kInvokesPerThread; ++i) invoke(t, i);
    });
  }
  for (std::thread& th : threads) th.join();
}

TEST_P(InvokeThreadsTest, ThreadsInvokingOneInterpreter) {
  const std::string model = "face_detection_short_range";
  auto interpreter = Make(model, delegate_.get());
  ASSERT_NE(interpreter, nullptr);
  const std::vector<Bytes> inputs = TwoInputs(model);
  const std::vector<Outputs> expected = Expected(*interpreter, inputs);
  std::atomic<int> wrong{0}, failed{0};
  OnThreads([&](int t, int i) {
    const size_t which = static_cast<size_t>(t + i) % 2;
    Outputs out = EmptyOutputs(*interpreter);
    const absl::Status s = interpreter->Invoke({{inputs[which].data(), inputs[which].size()}}, Targets(out));
    if (!s.ok()) ++failed;
    if (out != expected[which]) ++wrong;
  });
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "outputs differ from the single-threaded run";
}

TEST_P(InvokeThreadsTest, InterpretersSharingADelegateInvokedTogether) {
  const std::vector<std::string> models = {"face_detection_short_range", "hand_landmark_lite"};
  std::vector<std::unique_ptr<Interpreter>> interpreters;
  std::vector<std::vector<Bytes>> inputs;
  std::vector<std::vector<Outputs>> expected;
  for (const std::string& model : models) {
    interpreters.push_back(Make(model, delegate_.get()));
    ASSERT_NE(interpreters.back(), nullptr);
    inputs.push_back(TwoInputs(model));
    expected.push_back(Expected(*interpreters.back(), inputs.back()));
  }
  std::atomic<int> wrong{0};
  OnThreads([&](int t, int i) {
    const size_t m = static_cast<size_t>(t) % models.size();
    const size_t which = static_cast<size_t>(i) % 2;
    Interpreter& interpreter = *interpreters[m];
    Outputs out = EmptyOutputs(interpreter);
    const absl::Status s = interpreter.Invoke({{inputs[m][which].data(), inputs[m][which].size()}}, Targets(out));
    if (!s.ok() || out != expected[m][which]) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
}

// Async invokes with `in_flight` pending at most equal synchronous ones, and
// complete (callbacks and events) in the order they were made.
void CheckAsync(Interpreter& interpreter, const std::vector<Bytes>& inputs, const std::vector<Outputs>& expected) {
  constexpr int kInvokes = 6;
  std::vector<Outputs> outs;
  for (int i = 0; i < kInvokes; ++i) outs.push_back(EmptyOutputs(interpreter));
  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<std::shared_ptr<InvokeEvent>> events;
  for (int i = 0; i < kInvokes; ++i) {
    const Bytes& in = inputs[static_cast<size_t>(i) % 2];
    auto event = interpreter.InvokeAsync({{in.data(), in.size()}}, Targets(outs[static_cast<size_t>(i)]),
                                         [&, i](const absl::Status& s) {
                                           EXPECT_TRUE(s.ok()) << s;
                                           std::lock_guard<std::mutex> lock(order_mutex);
                                           order.push_back(i);
                                         });
    ASSERT_TRUE(event.ok()) << event.status();
    events.push_back(*event);
  }
  for (int i = 0; i < kInvokes; ++i) {
    events[static_cast<size_t>(i)]->Wait();
    EXPECT_TRUE(events[static_cast<size_t>(i)]->status().ok()) << events[static_cast<size_t>(i)]->status();
    EXPECT_TRUE(outs[static_cast<size_t>(i)] == expected[static_cast<size_t>(i) % 2]) << "invoke " << i;
  }
  std::lock_guard<std::mutex> lock(order_mutex);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST_P(InvokeThreadsTest, AsyncInFlightEqualsSync) {
  const std::string model = "face_detection_short_range";
  for (int in_flight : {1, 2, 4}) {
    SCOPED_TRACE("in flight: " + std::to_string(in_flight));
    auto interpreter = Make(model, delegate_.get(), in_flight);
    ASSERT_NE(interpreter, nullptr);
    const std::vector<Bytes> inputs = TwoInputs(model);
    CheckAsync(*interpreter, inputs, Expected(*interpreter, inputs));
    // A synchronous invoke between async ones still gives its own outputs.
    std::memcpy(interpreter->input(0).data, inputs[1].data(), inputs[1].size());
    ASSERT_TRUE(interpreter->Invoke().ok());
  }
}

// A graph with CPU steps: async invokes run one after another, still equal.
TEST(InvokeThreadsCpuTest, AsyncOnTheCpuToo) {
  const std::string model = "face_detection_short_range";
  auto interpreter = Make(model, nullptr, 2);
  ASSERT_NE(interpreter, nullptr);
  const std::vector<Bytes> inputs = TwoInputs(model);
  CheckAsync(*interpreter, inputs, Expected(*interpreter, inputs));
}

TEST_P(InvokeThreadsTest, AsyncBadBuffersAreRefusedAtOnce) {
  auto interpreter = Make("face_detection_short_range", delegate_.get());
  ASSERT_NE(interpreter, nullptr);
  Outputs out = EmptyOutputs(*interpreter);
  std::vector<uint8_t> small(16);
  auto event = interpreter->InvokeAsync({{small.data(), small.size()}}, Targets(out));
  ASSERT_FALSE(event.ok());
  EXPECT_THAT(std::string(event.status().message()), ::testing::HasSubstr("input 0"));
  event = interpreter->InvokeAsync({}, Targets(out));
  EXPECT_FALSE(event.ok());
}

// A deadline shorter than the work fails cleanly, whether it passes before
// the GPU starts or while it works (then the work is abandoned), and the
// next invoke succeeds with the right outputs; likewise in flight.
TEST_P(InvokeThreadsTest, MissedDeadlinesFailCleanly) {
  const std::string model = "face_detection_short_range";
  auto interpreter = Make(model, delegate_.get());
  ASSERT_NE(interpreter, nullptr);
  const std::vector<Bytes> inputs = TwoInputs(model);
  const std::vector<Outputs> expected = Expected(*interpreter, inputs);
  // A quarter of the quickest of three runs: passes while the GPU works.
  double quickest_ms = 1e9;
  for (int i = 0; i < 3; ++i) {
    InvokeTiming timing;
    Outputs out = EmptyOutputs(*interpreter);
    ASSERT_TRUE(interpreter->Invoke({{inputs[0].data(), inputs[0].size()}}, Targets(out), {.timeout = std::nullopt, .timing = &timing, .fences = {}}).ok());
    quickest_ms = std::min(quickest_ms, timing.total_ms);
  }
  const auto during = std::chrono::nanoseconds(static_cast<int64_t>(quickest_ms * 1e6 / 4));
  for (auto timeout : {std::chrono::nanoseconds(1), during}) {
    Outputs out = EmptyOutputs(*interpreter);
    InvokeOptions options;
    options.timeout = timeout;
    const absl::Status missed = interpreter->Invoke({{inputs[0].data(), inputs[0].size()}}, Targets(out), options);
    EXPECT_TRUE(absl::IsDeadlineExceeded(missed)) << "timeout " << timeout.count() << " ns: " << missed;
    EXPECT_THAT(std::string(missed.message()), ::testing::HasSubstr("deadline exceeded"));
    options.timeout = std::chrono::seconds(120);
    ASSERT_TRUE(interpreter->Invoke({{inputs[1].data(), inputs[1].size()}}, Targets(out), options).ok());
    EXPECT_TRUE(out == expected[1]) << "after a missed deadline";
  }
  InvokeOptions tight;
  tight.timeout = during;
  Outputs out = EmptyOutputs(*interpreter);
  auto event = interpreter->InvokeAsync({{inputs[0].data(), inputs[0].size()}}, Targets(out), nullptr, tight);
  ASSERT_TRUE(event.ok());
  (*event)->Wait();
  EXPECT_TRUE(absl::IsDeadlineExceeded((*event)->status())) << (*event)->status();
  event = interpreter->InvokeAsync({{inputs[1].data(), inputs[1].size()}}, Targets(out));
  ASSERT_TRUE(event.ok());
  (*event)->Wait();
  EXPECT_TRUE((*event)->status().ok()) << (*event)->status();
  EXPECT_TRUE(out == expected[1]) << "async after a missed deadline";
}

// Timing per invoke: wall times always, the device's time with
// measure_timing where the device has timestamps.
TEST_P(InvokeThreadsTest, TimingPerInvoke) {
  const std::string model = "face_detection_short_range";
  auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
  ASSERT_TRUE(graph.ok());
  InterpreterOptions options;
  options.delegates.push_back(delegate_.get());
  options.measure_timing = true;
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const std::vector<Bytes> inputs = TwoInputs(model);
  const bool timestamps = delegate_->device().info().timestamps;
  InvokeTiming timing;
  Outputs out = EmptyOutputs(**interpreter);
  ASSERT_TRUE((*interpreter)->Invoke({{inputs[0].data(), inputs[0].size()}}, Targets(out), {.timeout = std::nullopt, .timing = &timing, .fences = {}}).ok());
  EXPECT_GT(timing.in_delegates_ms, 0);
  EXPECT_GE(timing.total_ms, timing.in_delegates_ms);
  EXPECT_EQ(timing.device_ms.has_value(), timestamps);
  if (timing.device_ms) {
    EXPECT_GT(*timing.device_ms, 0);
    EXPECT_LE(*timing.device_ms, timing.in_delegates_ms * 1.05 + 0.1) << "the GPU's time within the delegate's";
  }
  auto event = (*interpreter)->InvokeAsync({{inputs[1].data(), inputs[1].size()}}, Targets(out));
  ASSERT_TRUE(event.ok());
  (*event)->Wait();
  const InvokeTiming async = (*event)->timing();
  EXPECT_GT(async.in_delegates_ms, 0);
  EXPECT_GE(async.total_ms, async.in_delegates_ms);
  EXPECT_EQ(async.device_ms.has_value(), timestamps);
  // Without measure_timing the device's time is unknown.
  auto plain = Make(model, delegate_.get());
  ASSERT_NE(plain, nullptr);
  ASSERT_TRUE(plain->Invoke({{inputs[0].data(), inputs[0].size()}}, Targets(out), {.timeout = std::nullopt, .timing = &timing, .fences = {}}).ok());
  EXPECT_FALSE(timing.device_ms.has_value());
}

struct CallbackLog {
  std::mutex mutex;
  std::vector<int> order;
  int failures = 0;
};
struct CallbackArg {
  CallbackLog* log;
  int index;
};
void OnDone(void* user_data, MgdStatus status) {
  auto* arg = static_cast<CallbackArg*>(user_data);
  std::lock_guard<std::mutex> lock(arg->log->mutex);
  arg->log->order.push_back(arg->index);
  if (status != kMgdOk) ++arg->log->failures;
}

TEST_P(InvokeThreadsTest, TheCApi) {
  const std::string model = "face_detection_short_range";
  MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
  o.api = GetParam().api == gpu::Api::kVulkan ? kMgdGpuApiVulkan : kMgdGpuApiGles;
  o.precision_loss_allowed = GetParam().fp16 ? 1 : 0;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&o, nullptr, nullptr);
  ASSERT_NE(gpu, nullptr);
  const std::string path = testing::DataPath("models/" + model + ".tflite");
  MgdModel* m = MgdModelCreateFromFile(path.c_str());
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsAddDelegate(options, gpu);
  MgdInterpreterOptionsSetMaxInFlight(options, 3);
  MgdInterpreter* interpreter = MgdInterpreterCreate(m, options);
  ASSERT_NE(interpreter, nullptr);
  const std::vector<Bytes> inputs = TwoInputs(model);
  const int32_t num_outputs = MgdInterpreterGetOutputTensorCount(interpreter);
  std::vector<size_t> output_sizes;
  for (int32_t k = 0; k < num_outputs; ++k) output_sizes.push_back(MgdTensorByteSize(MgdInterpreterGetOutputTensor(interpreter, k)));
  auto run = [&](const Bytes& in, Outputs& out, bool async, CallbackArg* arg) -> MgdInvokeEvent* {
    out.clear();
    std::vector<void*> targets;
    for (size_t size : output_sizes) out.emplace_back(size, 0xEE);
    for (Bytes& o : out) targets.push_back(o.data());
    const void* in_data = in.data();
    const size_t in_size = in.size();
    if (!async) {
      EXPECT_EQ(MgdInterpreterInvokeWithBuffers(interpreter, &in_data, &in_size, 1, targets.data(), output_sizes.data(),
                                                num_outputs),
                kMgdOk);
      return nullptr;
    }
    return MgdInterpreterInvokeAsync(interpreter, &in_data, &in_size, 1, targets.data(), output_sizes.data(), num_outputs,
                                     OnDone, arg);
  };
  std::vector<Outputs> expected(2);
  run(inputs[0], expected[0], false, nullptr);
  run(inputs[1], expected[1], false, nullptr);
  ASSERT_FALSE(expected[0] == expected[1]);

  std::atomic<int> wrong{0};
  OnThreads([&](int t, int i) {
    const size_t which = static_cast<size_t>(t + i) % 2;
    Outputs out;
    run(inputs[which], out, false, nullptr);
    if (out != expected[which]) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);

  CallbackLog log;
  std::vector<CallbackArg> args;
  for (int i = 0; i < 5; ++i) args.push_back({&log, i});
  std::vector<Outputs> outs(5);
  std::vector<MgdInvokeEvent*> events;
  for (size_t i = 0; i < 5; ++i) {
    events.push_back(run(inputs[i % 2], outs[i], true, &args[i]));
    ASSERT_NE(events.back(), nullptr);
  }
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(MgdInvokeEventWait(events[i], -1), kMgdOk);
    EXPECT_EQ(MgdInvokeEventIsDone(events[i]), 1);
    EXPECT_TRUE(outs[i] == expected[i % 2]) << "invoke " << i;
    MgdInvokeEventDelete(events[i]);
  }
  EXPECT_EQ(log.order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(log.failures, 0);
  // Bad arguments: NULL arrays, a wrong size.
  const size_t wrong_size = 4;
  const void* in_data = inputs[0].data();
  EXPECT_EQ(MgdInterpreterInvokeAsync(interpreter, nullptr, nullptr, 1, nullptr, nullptr, 0, nullptr, nullptr), nullptr);
  EXPECT_EQ(MgdInterpreterInvokeWithBuffers(interpreter, &in_data, &wrong_size, 1, nullptr, nullptr, 0), kMgdError);
  EXPECT_EQ(MgdInvokeEventWait(nullptr, 0), kMgdError);

  // A timeout too short fails; the next invoke without one succeeds.
  MgdInterpreterSetInvokeTimeout(interpreter, 1);
  Outputs out = expected[0];
  std::vector<void*> targets;
  for (Bytes& o : out) targets.push_back(o.data());
  const size_t in_size = inputs[0].size();
  EXPECT_EQ(MgdInterpreterInvokeWithBuffers(interpreter, &in_data, &in_size, 1, targets.data(), output_sizes.data(),
                                            num_outputs),
            kMgdError);
  MgdInterpreterSetInvokeTimeout(interpreter, 0);
  run(inputs[1], out, false, nullptr);
  EXPECT_TRUE(out == expected[1]);
  MgdTiming timing{};
  ASSERT_EQ(MgdInterpreterGetLastTiming(interpreter, &timing), kMgdOk);
  EXPECT_GT(timing.in_delegates_ms, 0);
  EXPECT_GE(timing.total_ms, timing.in_delegates_ms);
  EXPECT_EQ(timing.gpu_ms, -1.0) << "timing was not asked for";

  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(m);
  MgdGpuDelegateDelete(gpu);
}

INSTANTIATE_TEST_SUITE_P(Backends, InvokeThreadsTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd
