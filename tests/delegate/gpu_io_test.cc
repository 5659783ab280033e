// Apps' GPU buffers bound to a model's inputs and outputs (zero-copy I/O)
// and fenced invokes (issue 21): on both APIs and precisions, bound buffers
// in BHWC give the host copies' outputs bit for bit, PHWC4 ones skip the
// conversions and give them too, and a chain of an app's producer, mgd and
// an app's consumer linked only by GPU sync objects (Vulkan binary and
// timeline semaphores, EGL fence syncs) gives each frame's outputs.
#include "tests/delegate/app_gpu.h"

#include <gmock/gmock.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "layout/phwc4.h"
#include "model/reader.h"
#include "shaders/dialect.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/graph_builder.h"
#include "ops/elementwise/elementwise.h"

namespace mgd {
namespace {

using testing::AppGlContext;
using testing::AppVkBuffer;
using testing::AppVkQueue;
using Bytes = std::vector<uint8_t>;

constexpr const char* kModel = "face_detection_short_range";

class GpuIoTest : public testing::DelegateTest {
 public:  // to the chains and runs below
  void SetUp() override {
    DelegateTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto graph = ReadModelFile(testing::DataPath(std::string("models/") + kModel + ".tflite"));
    ASSERT_TRUE(graph.ok()) << graph.status();
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    auto made = Interpreter::Create(std::move(*graph), std::move(options));
    ASSERT_TRUE(made.ok()) << made.status();
    interpreter_ = std::move(*made);
    const std::vector<float> image = testing::ReadF32(testing::DataPath(std::string("reference/") + kModel + "/image/input_0.f32"));
    frames_ = {image, std::vector<float>(image.rbegin(), image.rend())};
    for (const std::vector<float>& frame : frames_) expected_.push_back(HostRun(frame));
    ASSERT_NE(expected_[0], expected_[1]);
  }
  void TearDown() override {
    interpreter_.reset();  // before the delegate
    DelegateTest::TearDown();
  }

  bool Vulkan() const { return GetParam().api == gpu::Api::kVulkan; }
  gpu::Device& device() { return delegate_->device(); }
  gpu::Interop interop() { return delegate_->device().interop(); }
  const TensorRef& In() const { return interpreter_->tensor(interpreter_->graph().inputs[0]); }
  size_t Outputs() const { return interpreter_->num_outputs(); }

  // The outputs of a run through host memory.
  std::vector<Bytes> HostRun(const std::vector<float>& input) {
    std::vector<Bytes> out;
    std::vector<OutputBytes> targets;
    for (size_t k = 0; k < Outputs(); ++k) out.emplace_back(interpreter_->output(k).bytes);
    for (Bytes& o : out) targets.push_back({o.data(), o.size()});
    const absl::Status s = interpreter_->Invoke({{input.data(), input.size() * 4}}, targets);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }
  // Invoke with the bound tensors' host buffers left out.
  std::vector<InputBytes> NoInputs() const { return {{nullptr, 0}}; }
  std::vector<OutputBytes> NoOutputs() const { return std::vector<OutputBytes>(Outputs()); }

  layout::Bhwc ShapeOf(int tensor) const {
    auto s = shaders::ToBhwc(interpreter_->graph().tensors[static_cast<size_t>(tensor)].shape);
    EXPECT_TRUE(s.ok());
    return s.ok() ? *s : layout::Bhwc{};
  }
  // The BHWC float32 bytes of `tensor` as `layout` lays them out.
  Bytes Encode(const std::vector<float>& bhwc, int tensor, GpuLayout layout) {
    const Bytes plain(reinterpret_cast<const uint8_t*>(bhwc.data()), reinterpret_cast<const uint8_t*>(bhwc.data() + bhwc.size()));
    if (layout == GpuLayout::kBhwc) return plain;
    auto needs = interpreter_->BufferNeeds(tensor);
    EXPECT_TRUE(needs.ok()) << needs.status();
    Bytes out(needs->phwc4_bytes);
    if (needs->phwc4_half) {
      layout::BhwcToPhwc4Half(bhwc.data(), ShapeOf(tensor), reinterpret_cast<uint16_t*>(out.data()));
    } else {
      layout::BhwcToPhwc4(bhwc.data(), ShapeOf(tensor), reinterpret_cast<float*>(out.data()));
    }
    return out;
  }
  Bytes Decode(const Bytes& bytes, int tensor, GpuLayout layout) {
    if (layout == GpuLayout::kBhwc) return bytes;
    const layout::Bhwc shape = ShapeOf(tensor);
    Bytes out(static_cast<size_t>(shape.elements()) * 4);
    auto needs = interpreter_->BufferNeeds(tensor);
    if (needs->phwc4_half) {
      layout::Phwc4HalfToBhwc(reinterpret_cast<const uint16_t*>(bytes.data()), shape, reinterpret_cast<float*>(out.data()));
    } else {
      layout::Phwc4ToBhwc(reinterpret_cast<const float*>(bytes.data()), shape, reinterpret_cast<float*>(out.data()));
    }
    return out;
  }
  size_t BytesFor(int tensor, GpuLayout layout) {
    auto needs = interpreter_->BufferNeeds(tensor);
    EXPECT_TRUE(needs.ok()) << needs.status();
    return layout == GpuLayout::kBhwc ? needs->bhwc_bytes : needs->phwc4_bytes;
  }
  // PHWC4 input through the host's rounding to fp16 may differ from the
  // GPU's conversion in the last bit; the outputs then differ within fp16's
  // bounds. Everything else is bit-identical.
  void ExpectOutputs(const std::vector<Bytes>& actual, size_t frame, GpuLayout layout) {
    ASSERT_EQ(actual.size(), expected_[frame].size());
    for (size_t k = 0; k < actual.size(); ++k) {
      if (layout == GpuLayout::kBhwc || !GetParam().fp16) {
        EXPECT_EQ(actual[k], expected_[frame][k]) << "output " << k << " of frame " << frame;
        continue;
      }
      const auto* a = reinterpret_cast<const float*>(actual[k].data());
      const auto* e = reinterpret_cast<const float*>(expected_[frame][k].data());
      for (size_t i = 0; i < actual[k].size() / 4; ++i) {
        ASSERT_NEAR(a[i], e[i], testing::OpBound(e[i], true, 4)) << "output " << k << " element " << i;
      }
    }
  }

  std::unique_ptr<Interpreter> interpreter_;
  std::vector<std::vector<float>> frames_;
  std::vector<std::vector<Bytes>> expected_;  // per frame, per output
};

// The app's buffers, bound; each frame written into the input's and read
// from the outputs' on the host (Vulkan: mapped memory; GL: the app's
// context), with plain invokes between.
void RunBound(GpuIoTest& t, GpuLayout layout, bool memory_fd);

TEST_P(GpuIoTest, BoundBhwcBuffersGiveTheHostCopiesOutputs) { RunBound(*this, GpuLayout::kBhwc, false); }
TEST_P(GpuIoTest, BoundPhwc4BuffersSkipTheConversions) { RunBound(*this, GpuLayout::kPhwc4, false); }
TEST_P(GpuIoTest, MemoryImportedFromAnFdIsBound) {
  if (!Vulkan()) GTEST_SKIP() << "Vulkan external memory";
  if (!interop().memory_fd_import) GTEST_SKIP() << "no VK_KHR_external_memory_fd";
  RunBound(*this, GpuLayout::kBhwc, true);
}

void RunBound(GpuIoTest& t, GpuLayout layout, bool memory_fd) {
  Interpreter& in = *t.interpreter_;
  const Graph& g = in.graph();
  std::vector<int> tensors = {g.inputs[0]};
  for (int o : g.outputs) tensors.push_back(o);
  auto run_frames = [&](const std::function<void(size_t, const Bytes&)>& write, const std::function<Bytes(size_t)>& read) {
    for (size_t f = 0; f < t.frames_.size(); ++f) {
      write(0, t.Encode(t.frames_[f], g.inputs[0], layout));
      const absl::Status s = in.Invoke(t.NoInputs(), t.NoOutputs());
      ASSERT_TRUE(s.ok()) << s;
      std::vector<Bytes> outputs;
      for (size_t k = 0; k < t.Outputs(); ++k) outputs.push_back(t.Decode(read(k + 1), g.outputs[k], layout));
      t.ExpectOutputs(outputs, f, layout);
    }
  };
  if (t.Vulkan()) {
    std::vector<std::unique_ptr<AppVkBuffer>> buffers;
    for (int tensor : tensors) {
      buffers.push_back(std::make_unique<AppVkBuffer>(t.interop(), t.BytesFor(tensor, layout), memory_fd));
      const GpuBuffer b = memory_fd ? buffers.back()->AsMemoryFd() : buffers.back()->AsGpuBuffer();
      const absl::Status bound = in.BindBuffer(tensor, b, layout);
      ASSERT_TRUE(bound.ok()) << bound;
    }
    run_frames([&](size_t i, const Bytes& b) { std::memcpy(buffers[i]->data(), b.data(), b.size()); },
               [&](size_t i) {
                 const auto* p = static_cast<const uint8_t*>(buffers[i]->data());
                 return Bytes(p, p + buffers[i]->bytes());
               });
    for (int tensor : tensors) ASSERT_TRUE(in.BindBuffer(tensor, std::nullopt).ok());
  } else {
    AppGlContext app(t.interop());
    std::vector<GLuint> buffers;
    std::vector<size_t> sizes;
    for (int tensor : tensors) {
      sizes.push_back(t.BytesFor(tensor, layout));
      buffers.push_back(app.Buffer(sizes.back()));
      GpuBuffer b;
      b.type = GpuBuffer::Type::kGlBuffer;
      b.handle = buffers.back();
      b.bytes = sizes.back();
      glFinish();  // the buffer exists for mgd's context too
      const absl::Status bound = in.BindBuffer(tensor, b, layout);
      ASSERT_TRUE(bound.ok()) << bound;
    }
    run_frames([&](size_t i, const Bytes& b) { app.Write(buffers[i], b.data(), b.size()); glFinish(); },
               [&](size_t i) { return app.Read(buffers[i], sizes[i]); });
    for (int tensor : tensors) ASSERT_TRUE(in.BindBuffer(tensor, std::nullopt).ok());
  }
  // Unbound, the host's buffers are used again.
  std::vector<Bytes> out(t.Outputs());
  std::vector<OutputBytes> targets;
  for (size_t k = 0; k < t.Outputs(); ++k) {
    out[k].resize(in.output(k).bytes);
    targets.push_back({out[k].data(), out[k].size()});
  }
  ASSERT_TRUE(in.Invoke({{t.frames_[1].data(), t.frames_[1].size() * 4}}, targets).ok());
  t.ExpectOutputs(out, 1, GpuLayout::kBhwc);
}

// Producer -> mgd -> consumer, linked by Vulkan semaphores on the GPU: the
// producer copies a frame into the bound input and signals; mgd waits,
// runs and signals; the consumer waits and copies the bound outputs into
// readback buffers. Only the consumer's fence is waited for on the host.
void RunVulkanChain(GpuIoTest& t, bool timeline) {
  Interpreter& in = *t.interpreter_;
  const Graph& g = in.graph();
  AppVkQueue queue(t.interop(), t.device());
  AppVkBuffer input(t.interop(), t.BytesFor(g.inputs[0], GpuLayout::kBhwc));
  ASSERT_TRUE(in.BindBuffer(g.inputs[0], input.AsGpuBuffer()).ok());
  std::vector<std::unique_ptr<AppVkBuffer>> outputs, readback;
  std::vector<AppVkQueue::CopyRegion> consume;
  for (int o : g.outputs) {
    outputs.push_back(std::make_unique<AppVkBuffer>(t.interop(), t.BytesFor(o, GpuLayout::kBhwc)));
    readback.push_back(std::make_unique<AppVkBuffer>(t.interop(), t.BytesFor(o, GpuLayout::kBhwc)));
    ASSERT_TRUE(in.BindBuffer(o, outputs.back()->AsGpuBuffer()).ok());
    consume.push_back({outputs.back()->handle(), readback.back()->handle(), outputs.back()->bytes()});
  }
  std::vector<std::unique_ptr<AppVkBuffer>> staging;
  const VkSemaphore produced = queue.Semaphore(timeline), computed = queue.Semaphore(timeline);
  const GpuSync::Type type = timeline ? GpuSync::Type::kVulkanTimelineSemaphore : GpuSync::Type::kVulkanSemaphore;
  for (size_t round = 0; round < 2; ++round) {
    for (size_t f = 0; f < t.frames_.size(); ++f) {
      const uint64_t value = round * t.frames_.size() + f + 1;  // timelines count frames
      staging.push_back(std::make_unique<AppVkBuffer>(t.interop(), input.bytes()));
      std::memcpy(staging.back()->data(), t.frames_[f].data(), input.bytes());
      queue.Copy({{staging.back()->handle(), input.handle(), input.bytes()}}, VK_NULL_HANDLE, 0, produced, value, false);
      InvokeOptions options;
      options.fences.wait = {{type, reinterpret_cast<uint64_t>(produced), value, -1}};
      options.fences.signal = {{type, reinterpret_cast<uint64_t>(computed), value, -1}};
      auto event = in.InvokeAsync(t.NoInputs(), t.NoOutputs(), nullptr, options);
      ASSERT_TRUE(event.ok()) << event.status();
      queue.Copy(consume, computed, value, VK_NULL_HANDLE, 0, true);
      queue.WaitForFence();
      std::vector<Bytes> got;
      for (const auto& r : readback) {
        const auto* p = static_cast<const uint8_t*>(r->data());
        got.emplace_back(p, p + r->bytes());
      }
      t.ExpectOutputs(got, f, GpuLayout::kBhwc);
      (*event)->Wait();
      ASSERT_TRUE((*event)->status().ok()) << (*event)->status();
    }
  }
  ASSERT_TRUE(in.BindBuffer(g.inputs[0], std::nullopt).ok());
  for (int o : g.outputs) ASSERT_TRUE(in.BindBuffer(o, std::nullopt).ok());
}

// The same on GL: the app's context writes the frame and makes a fence; mgd
// waits for it on the GPU and makes one of its own, which the app's context
// waits for on the GPU before it reads the outputs.
void RunGlChain(GpuIoTest& t) {
  Interpreter& in = *t.interpreter_;
  const Graph& g = in.graph();
  AppGlContext app(t.interop());
  const size_t input_bytes = t.BytesFor(g.inputs[0], GpuLayout::kBhwc);
  const GLuint input = app.Buffer(input_bytes);
  std::vector<GLuint> outputs;
  std::vector<size_t> sizes;
  glFinish();
  ASSERT_TRUE(in.BindBuffer(g.inputs[0], GpuBuffer{GpuBuffer::Type::kGlBuffer, input, -1, 0, input_bytes, 0, 0}).ok());
  for (int o : g.outputs) {
    sizes.push_back(t.BytesFor(o, GpuLayout::kBhwc));
    outputs.push_back(app.Buffer(sizes.back()));
    glFinish();
    ASSERT_TRUE(in.BindBuffer(o, GpuBuffer{GpuBuffer::Type::kGlBuffer, outputs.back(), -1, 0, sizes.back(), 0, 0}).ok());
  }
  for (size_t f = 0; f < t.frames_.size(); ++f) {
    app.Write(input, t.frames_[f].data(), input_bytes);
    const EGLSyncKHR written = app.Fence();
    GpuSync made{GpuSync::Type::kEglSync, 0, 0, -1};
    InvokeOptions options;
    options.fences.wait = {{GpuSync::Type::kEglSync, reinterpret_cast<uint64_t>(written), 0, -1}};
    options.fences.signal_new = &made;
    auto event = in.InvokeAsync(t.NoInputs(), t.NoOutputs(), nullptr, options);
    ASSERT_TRUE(event.ok()) << event.status();
    ASSERT_NE(made.handle, 0u) << "mgd made no EGL sync";
    app.WaitAndDestroy(reinterpret_cast<EGLSyncKHR>(made.handle));
    std::vector<Bytes> got;
    for (size_t k = 0; k < outputs.size(); ++k) got.push_back(app.Read(outputs[k], sizes[k]));
    t.ExpectOutputs(got, f, GpuLayout::kBhwc);
    (*event)->Wait();
    ASSERT_TRUE((*event)->status().ok()) << (*event)->status();
    app.Destroy(written);
  }
  ASSERT_TRUE(in.BindBuffer(g.inputs[0], std::nullopt).ok());
  for (int o : g.outputs) ASSERT_TRUE(in.BindBuffer(o, std::nullopt).ok());
}

TEST_P(GpuIoTest, FencedChainWithBinarySemaphoresOrEglSyncs) {
  if (Vulkan()) {
    RunVulkanChain(*this, false);
  } else {
    if (!interop().egl_fence_sync) GTEST_SKIP() << "no EGL_KHR_fence_sync / EGL_KHR_wait_sync";
    RunGlChain(*this);
  }
}

TEST_P(GpuIoTest, FencedChainWithTimelineSemaphores) {
  if (!Vulkan()) GTEST_SKIP() << "Vulkan timeline semaphores";
  if (!interop().timeline_semaphores) GTEST_SKIP() << "no timeline semaphores";
  RunVulkanChain(*this, true);
}

// mgd -> mgd through sync fds where the driver exports and imports them:
// each invoke exports one, and the next waits on it (taking the fd).
TEST_P(GpuIoTest, SyncFdsChainInvokes) {
  const gpu::Interop i = interop();
  if (!i.sync_fd_signal || !i.sync_fd_wait) GTEST_SKIP() << "no sync fds to export and import here";
  std::vector<Bytes> out(Outputs());
  std::vector<OutputBytes> targets;
  for (size_t k = 0; k < Outputs(); ++k) {
    out[k].resize(interpreter_->output(k).bytes);
    targets.push_back({out[k].data(), out[k].size()});
  }
  int previous = -1;  // signalled already
  for (size_t n = 0; n < 4; ++n) {
    const size_t f = n % frames_.size();
    GpuSync made{GpuSync::Type::kSyncFd, 0, 0, -1};
    InvokeOptions options;
    options.fences.wait = {{GpuSync::Type::kSyncFd, 0, 0, previous}};
    options.fences.signal_new = &made;
    auto event = interpreter_->InvokeAsync({{frames_[f].data(), frames_[f].size() * 4}}, targets, nullptr, options);
    ASSERT_TRUE(event.ok()) << event.status();
    ASSERT_GE(made.fd, 0);
    (*event)->Wait();
    ASSERT_TRUE((*event)->status().ok()) << (*event)->status();
    ExpectOutputs(out, f, GpuLayout::kBhwc);
    previous = made.fd;  // the next invoke takes it
  }
  close(previous);
}

TEST_P(GpuIoTest, BadBuffersAndSyncObjectsAreClearErrors) {
  const int input = interpreter_->graph().inputs[0];
  const size_t bytes = BytesFor(input, GpuLayout::kBhwc);
  // Too small: says how many bytes the layout needs.
  GpuBuffer small{Vulkan() ? GpuBuffer::Type::kVulkanBuffer : GpuBuffer::Type::kGlBuffer, 1, -1, 0, bytes - 4, 0, 0};
  absl::Status s = interpreter_->BindBuffer(input, small);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(std::to_string(bytes)));
  // The other API's objects.
  GpuBuffer foreign{Vulkan() ? GpuBuffer::Type::kGlBuffer : GpuBuffer::Type::kVulkanBuffer, 1, -1, 0, bytes, 0, 0};
  s = interpreter_->BindBuffer(input, foreign);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  InvokeOptions options;
  options.fences.wait = {{Vulkan() ? GpuSync::Type::kEglSync : GpuSync::Type::kVulkanSemaphore, 1, 0, -1}};
  s = interpreter_->Invoke({{frames_[0].data(), frames_[0].size() * 4}}, std::vector<OutputBytes>(), options);
  EXPECT_FALSE(s.ok());
  std::vector<Bytes> out(Outputs());
  std::vector<OutputBytes> targets;
  for (size_t k = 0; k < Outputs(); ++k) {
    out[k].resize(interpreter_->output(k).bytes);
    targets.push_back({out[k].data(), out[k].size()});
  }
  s = interpreter_->Invoke({{frames_[0].data(), frames_[0].size() * 4}}, targets, options);
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  // Not an input or output; a GL buffer name that is not one.
  s = interpreter_->BindBuffer(interpreter_->graph().nodes[0].outputs[0], small);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  if (!Vulkan()) {
    GpuBuffer missing{GpuBuffer::Type::kGlBuffer, 987654, -1, 0, bytes, 0, 0};
    s = interpreter_->BindBuffer(input, missing);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("shares objects"));
  }
  // The interpreter still runs.
  EXPECT_EQ(HostRun(frames_[0]), expected_[0]);
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuIoTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

// Priorities (NNAPI's): a low and a high priority delegate say what the
// driver granted, and both run correctly at once. How much the high one's
// invokes are delayed by the low one's work is measured, not asserted
// (gpu_io_bench --priority; docs/perf.md).
using PriorityTest = testing::DelegateTest;

TEST_P(PriorityTest, LowAndHighPriorityDelegatesSayWhatWasGrantedAndRunTogether) {
  auto graph = ReadModelFile(testing::DataPath(std::string("models/") + kModel + ".tflite"));
  ASSERT_TRUE(graph.ok());
  const std::vector<float> image = testing::ReadF32(testing::DataPath(std::string("reference/") + kModel + "/image/input_0.f32"));
  auto run = [&](Interpreter& in) {
    std::memcpy(in.input(0).data, image.data(), image.size() * 4);
    EXPECT_TRUE(in.Invoke().ok());
    const TensorRef& t = in.output(0);
    return Bytes(t.data, t.data + t.bytes);
  };
  InterpreterOptions medium_options;
  medium_options.delegates.push_back(delegate_.get());
  auto medium = Interpreter::Create(*graph, std::move(medium_options));
  ASSERT_TRUE(medium.ok());
  const Bytes expected = run(**medium);
  std::vector<std::unique_ptr<GpuDelegate>> delegates;
  std::vector<std::unique_ptr<Interpreter>> interpreters;
  for (gpu::Priority p : {gpu::Priority::kLow, gpu::Priority::kHigh}) {
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.validation = true;
    options.priority = p;
    auto d = GpuDelegate::Create(options);
    ASSERT_TRUE(d.ok()) << d.status();
    const std::string granted = (*d)->device().info().priority;
    // The level asked for with the mechanism named, or medium saying why not.
    EXPECT_THAT(granted, ::testing::AnyOf(::testing::StartsWith(std::string(gpu::PriorityName(p)) + " ("),
                                          ::testing::StartsWith("medium (")))
        << granted;
    EXPECT_THAT(granted, ::testing::Not(::testing::HasSubstr("default"))) << "a priority was asked for";
    InterpreterOptions io;
    io.delegates.push_back(d->get());
    auto in = Interpreter::Create(*graph, std::move(io));
    ASSERT_TRUE(in.ok()) << in.status();
    delegates.push_back(std::move(*d));
    interpreters.push_back(std::move(*in));
  }
  Bytes low_out, high_out;
  std::thread low([&] {
    for (int i = 0; i < 3; ++i) low_out = run(*interpreters[0]);
  });
  for (int i = 0; i < 3; ++i) high_out = run(*interpreters[1]);
  low.join();
  EXPECT_EQ(low_out, expected);
  EXPECT_EQ(high_out, expected);
  interpreters.clear();
  for (const auto& d : delegates) EXPECT_THAT(d->device().validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, PriorityTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

// Without a delegate nothing can be bound or fenced, and the errors say why.
TEST(GpuIo, CpuGraphsSayWhyNothingIsBoundOrFenced) {
  auto graph = ReadModelFile(testing::DataPath(std::string("models/") + kModel + ".tflite"));
  ASSERT_TRUE(graph.ok());
  auto interpreter = Interpreter::Create(std::move(*graph), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok());
  absl::Status s = (*interpreter)->BindBuffer((*interpreter)->graph().inputs[0], GpuBuffer{});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("delegated partition"));
  InvokeOptions options;
  options.fences.wait = {GpuSync{}};
  s = (*interpreter)->Invoke(options);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("one delegated GPU partition"));
}

}  // namespace
}  // namespace mgd

namespace mgd {
namespace {

// The app's own EGL display and context, as a window system gives an app
// (here Mesa's surfaceless platform, or the first EGL device on NVIDIA).
struct AppDisplay {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  AppDisplay() {
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (client != nullptr && std::string(client).find("EGL_MESA_platform_surfaceless") != std::string::npos) {
      display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    } else if (auto query = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"))) {
      EGLDeviceEXT device = nullptr;
      EGLint count = 0;
      if (query(1, &device, &count) && count > 0) display = eglGetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
    }
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr)) return;
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION_KHR, 3, EGL_CONTEXT_MINOR_VERSION_KHR, 1, EGL_NONE};
    context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    if (context != EGL_NO_CONTEXT) eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context);
  }
  ~AppDisplay() {
    if (context != EGL_NO_CONTEXT) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display, context);
    }
    // The display stays initialized, as an app's does until it exits
    // (Mesa leaks a little at each initialize/terminate cycle).
    eglReleaseThread();
  }
};

// A delegate made on the app's display and context (a window's, as `mgd
// view` does) reads the app's buffers in place, and leaves the app's
// display initialized when it goes; a display that is not initialized is
// a clear error.
TEST(AppDisplayTest, DelegateOnTheAppsDisplayReadsItsBuffers) {
  AppDisplay app;
  if (app.context == EGL_NO_CONTEXT) {
    if (testing::GpuBackendsRequired()) FAIL() << "no EGL display with an OpenGL ES 3.1 context";
    GTEST_SKIP() << "no EGL display with an OpenGL ES 3.1 context";
  }
  {
    GpuDelegateOptions options;
    options.api = gpu::Api::kGles;
    options.egl_display = reinterpret_cast<uint64_t>(app.display);
    options.egl_share_context = reinterpret_cast<uint64_t>(app.context);
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    EXPECT_EQ((*delegate)->device().interop().egl_display, reinterpret_cast<uint64_t>(app.display));

    testing::GraphBuilder b;
    const int x = b.Input({1, 4, 4, 3}), y = b.Tensor({1, 4, 4, 3});
    b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {x, b.Constant({1}, {1.5f})}, {y});
    b.Output(y);
    InterpreterOptions interpreter_options;
    interpreter_options.delegates.push_back(delegate->get());
    auto interpreter = Interpreter::Create(b.Build(), std::move(interpreter_options));
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    std::vector<float> frame(48);
    for (size_t i = 0; i < frame.size(); ++i) frame[i] = 0.25f * static_cast<float>(i);
    // The app's buffer, made in the app's context: no sharing set up by hand.
    GLuint buffer = 0;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffer);
    glBufferData(GL_SHADER_STORAGE_BUFFER, sizeof(float) * frame.size(), frame.data(), GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    glFinish();
    GpuBuffer bound;
    bound.type = GpuBuffer::Type::kGlBuffer;
    bound.handle = buffer;
    bound.bytes = sizeof(float) * frame.size();
    Interpreter& in = **interpreter;
    ASSERT_TRUE(in.BindBuffer(in.graph().inputs[0], bound).ok());
    ASSERT_TRUE(in.Invoke().ok());
    const auto* out = reinterpret_cast<const float*>(in.output(0).data);
    for (size_t i = 0; i < frame.size(); ++i) EXPECT_EQ(out[i], frame[i] + 1.5f) << i;
    ASSERT_TRUE(in.BindBuffer(in.graph().inputs[0], std::nullopt).ok());
    interpreter->reset();
    glDeleteBuffers(1, &buffer);
  }
  EXPECT_NE(eglQueryString(app.display, EGL_VERSION), nullptr) << "mgd terminated the app's display";

  int not_a_display = 0;
  GpuDelegateOptions bad;
  bad.api = gpu::Api::kGles;
  bad.egl_display = reinterpret_cast<uint64_t>(&not_a_display);
  auto refused = GpuDelegate::Create(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("not an initialized EGLDisplay"));
}

}  // namespace
}  // namespace mgd
