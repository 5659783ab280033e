// The GPU interface's dispatches, recordings, timestamps, threads, limits
// and barriers on both APIs (the suite is instantiated in gpu_test.cc).
#include "tests/backends/gpu_fixture.h"

namespace mgd::gpu {
namespace {

using ::testing::HasSubstr;

TEST_P(GpuTest, DependentDispatchesAreOrderedAndIndependentOnesNotSerialized) {
  auto inc = MakeProgram(*device_, "increment", kIncrement, 1, 4);
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_TRUE(inc && affine);
  const uint32_t n = 4096;
  auto a = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  auto b = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  auto c = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  const std::array<uint32_t, 3> grid{n / 64, 1, 1};
  // a += 1; b = a*2 + i; a += 1; c = b*2 + i. Barriers before 1 (reads a)
  // and 2 (writes a, which 1 read); 3 reads b, written by 1, which the
  // barrier before 2 already ordered: two barriers, not three.
  std::vector<Dispatch> chain = {
      {inc.get(), {{a.get(), Access::kReadWrite}}, Params(n), grid},
      {affine.get(), {{a.get(), Access::kRead}, {b.get(), Access::kWrite}}, Params(n, 2.0f), grid},
      {inc.get(), {{a.get(), Access::kReadWrite}}, Params(n), grid},
      {affine.get(), {{b.get(), Access::kRead}, {c.get(), Access::kWrite}}, Params(n, 2.0f), grid},
  };
  auto recording = device_->Record(chain);
  ASSERT_TRUE(recording.ok()) << recording.status();
  EXPECT_EQ((*recording)->num_barriers(), 2u);
  ASSERT_TRUE(device_->Run(**recording).ok());
  const auto va = Read(*device_, *a), vc = Read(*device_, *c);
  for (uint32_t i = 0; i < n; i += 97) {
    EXPECT_EQ(va[i], 2.0f);
    EXPECT_EQ(vc[i], (1.0f * 2 + static_cast<float>(i)) * 2 + static_cast<float>(i));
  }
  // Three dispatches reading one input into three outputs: no barriers.
  auto d = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  std::vector<Dispatch> fan = {
      {affine.get(), {{a.get(), Access::kRead}, {b.get(), Access::kWrite}}, Params(n, 1.0f), grid},
      {affine.get(), {{a.get(), Access::kRead}, {c.get(), Access::kWrite}}, Params(n, 2.0f), grid},
      {affine.get(), {{a.get(), Access::kRead}, {d.get(), Access::kWrite}}, Params(n, 3.0f), grid},
  };
  auto fan_recording = device_->Record(fan);
  ASSERT_TRUE(fan_recording.ok());
  EXPECT_EQ((*fan_recording)->num_barriers(), 0u);
  ASSERT_TRUE(device_->Run(**fan_recording).ok());
  EXPECT_EQ(Read(*device_, *d)[10], 2.0f * 3 + 10);
}

TEST_P(GpuTest, RecordedSequenceReplays1000Times) {
  auto inc = MakeProgram(*device_, "increment", kIncrement, 1, 4);
  ASSERT_NE(inc, nullptr);
  const uint32_t n = 64;
  auto v = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  std::vector<Dispatch> dispatches(120, Dispatch{inc.get(), {{v.get(), Access::kReadWrite}}, Params(n), {1, 1, 1}});
  auto recording = device_->Record(dispatches);
  ASSERT_TRUE(recording.ok()) << recording.status();
  EXPECT_EQ((*recording)->num_dispatches(), 120u);
  for (int run = 0; run < 1000; ++run) ASSERT_TRUE(device_->Run(**recording).ok()) << "run " << run;
  const auto values = Read(*device_, *v);
  for (float value : values) ASSERT_EQ(value, 120000.0f);
}

// An invoke's round in one call: each run reads what was uploaded just
// before it, and its result is what is downloaded; a download past the end
// of its buffer is refused, naming it.
TEST_P(GpuTest, RunWithTransfersUploadsRunsAndDownloads) {
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(affine, nullptr);
  const uint32_t n = 1000;
  auto x = device_->CreateBuffer(n * 4, Device::Use::kUpload);
  auto y = device_->CreateBuffer(n * 4, Device::Use::kDownload);
  ASSERT_TRUE(x.ok() && y.ok());
  Dispatch d{affine.get(), {{x->get(), Access::kRead}, {y->get(), Access::kWrite}}, Params(n, 3.0f), {(n + 63) / 64, 1, 1}};
  auto recording = device_->Record({d});
  ASSERT_TRUE(recording.ok()) << recording.status();
  std::vector<float> in(n), out(n + 1, -7.0f);
  for (int run = 0; run < 3; ++run) {
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(run * 1000 + static_cast<int>(i % 89)) - 44.0f;
    const absl::Status ran =
        device_->RunWithTransfers({{x->get(), in.data(), n * 4, 0}}, **recording, {{y->get(), out.data(), n * 4, 0}});
    ASSERT_TRUE(ran.ok()) << ran;
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], in[i] * 3.0f + static_cast<float>(i)) << "run " << run << ", element " << i;
    }
  }
  EXPECT_EQ(out[n], -7.0f);  // nothing past the bytes asked for
  const absl::Status past = device_->RunWithTransfers({}, **recording, {{y->get(), out.data(), 8, n * 4 - 4}});
  EXPECT_FALSE(past.ok());
  EXPECT_THAT(std::string(past.message()), HasSubstr("offset " + std::to_string(n * 4 - 4)));
}

// Recordings in flight together (Submit, then Wait in another order) each
// complete with their own results; a ticket is waited for once.
TEST_P(GpuTest, SubmittedRecordingsCompleteInAnyWaitOrder) {
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(affine, nullptr);
  const uint32_t n = 1 << 14;
  auto x = MakeBuffer(*device_, std::vector<float>(n, 1.0f));
  std::vector<std::unique_ptr<Buffer>> outs;
  std::vector<std::unique_ptr<Recording>> recordings;
  for (int k = 0; k < 3; ++k) {
    outs.push_back(MakeBuffer(*device_, std::vector<float>(n, 0.0f)));
    auto r = device_->Record({{affine.get(), {{x.get(), Access::kRead}, {outs.back().get(), Access::kWrite}},
                               Params(n, static_cast<float>(k + 2)), {n / 64, 1, 1}}});
    ASSERT_TRUE(r.ok()) << r.status();
    recordings.push_back(std::move(*r));
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<uint64_t> tickets;
    for (auto& r : recordings) {
      auto ticket = device_->Submit(*r);
      ASSERT_TRUE(ticket.ok()) << ticket.status();
      tickets.push_back(*ticket);
    }
    for (size_t k : {2u, 0u, 1u}) ASSERT_TRUE(device_->Wait(tickets[k]).ok()) << "ticket " << k;
    for (size_t k = 0; k < outs.size(); ++k) {
      const auto v = Read(*device_, *outs[k]);
      EXPECT_EQ(v[100], 1.0f * static_cast<float>(k + 2) + 100) << "recording " << k;
    }
    if (round == 0) {
      EXPECT_FALSE(device_->Wait(tickets[0]).ok()) << "a ticket waited for twice";
    }
  }
  EXPECT_THAT(device_->validation_messages(), ::testing::IsEmpty());
}

// An active wait (polling before it sleeps; software GPUs wait passively by
// default) gives what a passive one does: runs, submissions waited for out
// of order, a whole invoke's round.
TEST_P(GpuTest, ActiveWaitsGiveWhatPassiveOnesDo) {
  auto active = Open(false, WaitMode::kActive);
  ASSERT_NE(active, nullptr);
  CheckAffine(*active, 1000, 3.0f);
  auto affine = MakeProgram(*active, "affine", kAffine, 2, 8);
  ASSERT_NE(affine, nullptr);
  const uint32_t n = 4096;
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 13);
  auto x = MakeBuffer(*active, in);
  auto y = MakeBuffer(*active, std::vector<float>(n, 0.0f));
  auto z = MakeBuffer(*active, std::vector<float>(n, 0.0f));
  auto to_y = active->Record({{affine.get(), {{x.get(), Access::kRead}, {y.get(), Access::kWrite}}, Params(n, 2.0f), {n / 64, 1, 1}}});
  auto to_z = active->Record({{affine.get(), {{x.get(), Access::kRead}, {z.get(), Access::kWrite}}, Params(n, 5.0f), {n / 64, 1, 1}}});
  ASSERT_TRUE(to_y.ok() && to_z.ok());
  auto first = active->Submit(**to_y);
  auto second = active->Submit(**to_z);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(active->Wait(*second).ok());
  ASSERT_TRUE(active->Wait(*first).ok());
  EXPECT_EQ(Read(*active, *y)[100], in[100] * 2.0f + 100.0f);
  EXPECT_EQ(Read(*active, *z)[100], in[100] * 5.0f + 100.0f);
  std::vector<float> out(n, -1.0f);
  ASSERT_TRUE(active->RunWithTransfers({{x.get(), in.data(), n * 4, 0}}, **to_z, {{z.get(), out.data(), n * 4, 0}}).ok());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] * 5.0f + static_cast<float>(i)) << "element " << i;
  // After a run of 2 s, a wait sleeps in the driver until shortly before
  // 2 s have passed (PlanWait), but ends when the GPU finishes; then that
  // run's time is kept, unless it had finished before the wait looked.
  for (const char* how : {"Run", "Submit and Wait", "RunWithTransfers"}) {
    (*to_y)->set_last_run(std::chrono::seconds(2));
    const auto start = std::chrono::steady_clock::now();
    if (how == std::string("Run")) {
      ASSERT_TRUE(active->Run(**to_y).ok());
    } else if (how == std::string("Submit and Wait")) {
      auto ticket = active->Submit(**to_y);
      ASSERT_TRUE(ticket.ok());
      ASSERT_TRUE(active->Wait(*ticket).ok());
    } else {
      ASSERT_TRUE(active->RunWithTransfers({}, **to_y, {{y.get(), out.data(), n * 4, 0}}).ok());
    }
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, std::chrono::seconds(1)) << how << " slept past the GPU's end";
    const auto kept = (*to_y)->last_run();
    EXPECT_TRUE(kept == std::chrono::seconds(2) || (kept.count() > 0 && kept <= took)) << how << ": " << kept.count();
  }
  EXPECT_EQ(out[100], in[100] * 2.0f + 100.0f);
  EXPECT_THAT(active->validation_messages(), ::testing::IsEmpty());
}

TEST(GpuWaitTest, PollsUntilDoneOrTheBudgetIsSpent) {
  int calls = 0;
  EXPECT_FALSE(PollFor(std::chrono::nanoseconds(0), [&] { return ++calls > 0; }));
  EXPECT_EQ(calls, 0) << "a passive wait does not poll";
  EXPECT_TRUE(PollFor(std::chrono::seconds(10), [&] { return ++calls == 3; }));
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(PollFor(std::chrono::microseconds(200), [] { return false; }));
  GpuInfo hardware, software;
  hardware.type = DeviceType::kDiscrete;
  software.type = DeviceType::kCpu;
  EXPECT_EQ(PollTime(WaitMode::kAuto, hardware), std::chrono::nanoseconds(kActiveWaitLimit));
  EXPECT_EQ(PollTime(WaitMode::kAuto, software), std::chrono::nanoseconds(0));
  EXPECT_EQ(PollTime(WaitMode::kActive, software), std::chrono::nanoseconds(kActiveWaitLimit));
  EXPECT_EQ(PollTime(WaitMode::kPassive, hardware), std::chrono::nanoseconds(0));
}

// The sleep asks between slices and ends when the work does, or when its
// time is up.
TEST(GpuWaitTest, SleepsInSlicesUntilDoneOrTheTimeIsUp) {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(SleepFor(std::chrono::seconds(10), [&] { return ++calls == 3; }));
  EXPECT_EQ(calls, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "ended with the work, not its time";
  calls = 0;
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(SleepFor(std::chrono::milliseconds(3), [&] { return ++calls < 0; }));
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(3));
  EXPECT_GE(calls, 2) << "asked between slices";
  EXPECT_FALSE(SleepFor(std::chrono::nanoseconds(0), [] { return false; }));
}

TEST(GpuWaitTest, ALongRunSleepsUntilShortlyBeforeItShouldEnd) {
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  const nanoseconds poll(kActiveWaitLimit);
  const WaitPlan passive = PlanWait(nanoseconds(0), milliseconds(20));
  EXPECT_EQ(passive.sleep, nanoseconds(0));
  EXPECT_EQ(passive.poll, nanoseconds(0));
  // Unknown, or shorter than kWakeLead: polls from the start.
  EXPECT_EQ(PlanWait(poll, nanoseconds(0)).sleep, nanoseconds(0));
  EXPECT_EQ(PlanWait(poll, nanoseconds(0)).poll, poll);
  EXPECT_EQ(PlanWait(poll, std::chrono::microseconds(800)).sleep, nanoseconds(0));
  EXPECT_EQ(PlanWait(poll, std::chrono::microseconds(1500)).sleep, std::chrono::microseconds(500));
  // Longer: sleeps until kWakeLead before it should end, counted from the
  // submission, then polls.
  EXPECT_EQ(PlanWait(poll, milliseconds(20)).sleep, milliseconds(20) - kWakeLead);
  EXPECT_EQ(PlanWait(poll, milliseconds(20), milliseconds(5)).sleep, milliseconds(15) - kWakeLead);
  EXPECT_EQ(PlanWait(poll, milliseconds(20), milliseconds(5)).poll, poll);
  EXPECT_EQ(PlanWait(poll, milliseconds(20), milliseconds(30)).sleep, nanoseconds(0)) << "past the expected end";
}

// A wait that times out leaves the submission to be waited for again.
TEST_P(GpuTest, AWaitThatTimesOutCanBeRepeated) {
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(affine, nullptr);
  const uint32_t n = 1 << 20;
  auto x = MakeBuffer(*device_, std::vector<float>(n, 1.0f));
  auto y = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  std::vector<Dispatch> dispatches(
      64, Dispatch{affine.get(), {{x.get(), Access::kRead}, {y.get(), Access::kWrite}}, Params(n, 3.0f), {n / 64, 1, 1}});
  auto recording = device_->Record(dispatches);
  ASSERT_TRUE(recording.ok()) << recording.status();
  auto ticket = device_->Submit(**recording);
  ASSERT_TRUE(ticket.ok()) << ticket.status();
  const absl::Status early = device_->Wait(*ticket, std::chrono::nanoseconds(0));
  if (early.ok()) {
    // llvmpipe's GL runs dispatches as they are flushed: done at Submit,
    // so the ticket is gone.
    EXPECT_FALSE(device_->Wait(*ticket).ok());
  } else {
    EXPECT_TRUE(absl::IsDeadlineExceeded(early)) << early;
    ASSERT_TRUE(device_->Wait(*ticket).ok());
  }
  EXPECT_EQ(Read(*device_, *y)[7], 3.0f + 7);
  EXPECT_THAT(device_->validation_messages(), ::testing::IsEmpty());
}

TEST_P(GpuTest, TimestampsAreMonotonicAndPlausible) {
  if (!device_->info().timestamps) GTEST_SKIP() << "no timestamps on " << device_->info().device_name;
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(affine, nullptr);
  const uint32_t n = 1 << 18;
  auto x = MakeBuffer(*device_, std::vector<float>(n, 1.0f));
  auto y = MakeBuffer(*device_, std::vector<float>(n, 0.0f));
  std::vector<Dispatch> dispatches(4, Dispatch{affine.get(), {{x.get(), Access::kRead}, {y.get(), Access::kWrite}},
                                               Params(n, 2.0f), {n / 64, 1, 1}});
  auto recording = device_->Record(dispatches, {.timestamps = true});
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(device_->Run(**recording).ok());
  const std::vector<double> ns = (*recording)->dispatch_ns();
  ASSERT_EQ(ns.size(), 4u);
  double total = 0;
  for (double t : ns) {
    EXPECT_GE(t, 0.0);
    EXPECT_LT(t, 10e9);  // under 10 s for 256K elements
    total += t;
  }
  EXPECT_GT(total, 0.0);
}

TEST_P(GpuTest, TwoDevicesInOneProcess) {
  auto second = Open();
  ASSERT_NE(second, nullptr);
  CheckAffine(*device_, 500, 2.0f);
  CheckAffine(*second, 700, 4.0f);
  CheckAffine(*device_, 300, 8.0f);
  EXPECT_THAT(second->validation_messages(), ::testing::IsEmpty());
}

TEST_P(GpuTest, CallsFromSeveralThreads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 5; ++i) CheckAffine(*device_, 256 + static_cast<uint32_t>(t * 100 + i), static_cast<float>(t + 1));
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST_P(GpuTest, ClampedLimitsRejectWhatAPhoneWould) {
  auto clamped = Open(/*clamp=*/true);
  ASSERT_NE(clamped, nullptr);
  const GpuInfo& info = clamped->info();
  EXPECT_TRUE(info.clamped_limits);
  EXPECT_EQ(info.limits.max_workgroup_invocations, 128u);
  EXPECT_EQ(info.limits.max_shared_memory_bytes, 16384u);
  EXPECT_LE(info.limits.max_storage_buffers_per_shader, 8u);
  // 256 invocations: fine on the software GPU, too many for a phone.
  const std::string wide = "layout(local_size_x = 256) in;\nlayout(std430, binding = 0) buffer V { float v[]; };\n"
                           "void main() { v[gl_GlobalInvocationID.x] = 1.0; }\n";
  auto program = clamped->CreateProgram({"wide", Glsl(api(), wide), 1, 0, 0});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("clamped to the GLES 3.1 minimums"));
  EXPECT_TRUE(device_->CreateProgram({"wide", Glsl(api(), wide), 1, 0, 0}).ok());
  // 9 storage buffers: over the clamped 8.
  std::string many = "layout(local_size_x = 1) in;\n";
  for (int b = 0; b < 9; ++b) many += "layout(std430, binding = " + std::to_string(b) + ") buffer B" + std::to_string(b) + " { float v" + std::to_string(b) + "[]; };\n";
  many += "void main() { v0[0] = v8[0]; }\n";
  program = clamped->CreateProgram({"many", Glsl(api(), many), 9, 0, 0});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("storage buffers"));
  // Shared memory over 16 KiB.
  program = clamped->CreateProgram({"shared", Glsl(api(), kIncrement), 1, 4, 32768});
  EXPECT_FALSE(program.ok());
  CheckAffine(*clamped, 1000, 2.0f);  // what fits still runs
  EXPECT_THAT(clamped->validation_messages(), ::testing::IsEmpty());
}

TEST_P(GpuTest, DispatchMisuseIsAnError) {
  auto affine = MakeProgram(*device_, "affine", kAffine, 2, 8);
  auto x = MakeBuffer(*device_, std::vector<float>(4, 0.0f));
  Dispatch wrong_bindings{affine.get(), {{x.get(), Access::kRead}}, Params(4u, 1.0f), {1, 1, 1}};
  auto r = device_->Record({wrong_bindings});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("dispatch 0 ('affine'): 1 bindings given, the program has 2"));
  Dispatch wrong_params{affine.get(), {{x.get(), Access::kRead}, {x.get(), Access::kWrite}}, Params(4u), {1, 1, 1}};
  EXPECT_FALSE(device_->Record({wrong_params}).ok());
  Dispatch no_groups{affine.get(), {{x.get(), Access::kRead}, {x.get(), Access::kWrite}}, Params(4u, 1.0f), {0, 1, 1}};
  EXPECT_FALSE(device_->Record({no_groups}).ok());
  EXPECT_FALSE(device_->Record({}).ok());
}

TEST_P(GpuTest, Fp16ArithmeticWhereSupported) {
  const GpuInfo& info = device_->info();
  if (!info.fp16_arithmetic || !info.storage_16bit) GTEST_SKIP() << "no fp16 on " << info.device_name;
  const std::string ext = api() == Api::kVulkan ? "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
                                                  "#extension GL_EXT_shader_16bit_storage : require\n"
                                                : "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
                                                  "#extension GL_EXT_shader_16bit_storage : require\n";
  const std::string body = ext +
                           "layout(local_size_x = 64) in;\n"
                           "layout(std430, binding = 0) readonly buffer X { float16_t x[]; };\n"
                           "layout(std430, binding = 1) writeonly buffer Y { float y[]; };\n"
                           "void main() { uint i = gl_GlobalInvocationID.x; float16_t h = x[i] * float16_t(0.5) + float16_t(1.0); y[i] = float(h); }\n";
  auto program = device_->CreateProgram({"fp16", Glsl(api(), body), 2, 0, 0});
  ASSERT_TRUE(program.ok()) << program.status();
  // 64 halves: 0, 1, ..., 63 (exact in fp16), as raw bits.
  std::vector<uint16_t> halves(64);
  for (int i = 0; i < 64; ++i) {
    // Small integers in binary16: exponent from the bit length.
    if (i == 0) { halves[0] = 0; continue; }
    int e = 31 - __builtin_clz(static_cast<unsigned>(i));
    halves[static_cast<size_t>(i)] = static_cast<uint16_t>(((e + 15) << 10) | ((i << (10 - e)) & 0x3ff));
  }
  auto x = device_->CreateBuffer(128);
  ASSERT_TRUE(x.ok());
  ASSERT_TRUE(device_->Upload(**x, halves.data(), 128).ok());
  auto y = MakeBuffer(*device_, std::vector<float>(64, 0.0f));
  auto recording = device_->Record({{program->get(), {{x->get(), Access::kRead}, {y.get(), Access::kWrite}}, {}, {1, 1, 1}}});
  ASSERT_TRUE(recording.ok()) << recording.status();
  ASSERT_TRUE(device_->Run(**recording).ok());
  const auto values = Read(*device_, *y);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(values[static_cast<size_t>(i)], static_cast<float>(i) * 0.5f + 1.0f);
}

TEST(GpuSelectTest, SelectorsPickByIndexOrName) {
  std::vector<GpuInfo> devices(2);
  devices[0].device_name = "NVIDIA H200";
  devices[1].device_name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  EXPECT_EQ(*SelectDevice(devices, ""), 0u);
  EXPECT_EQ(*SelectDevice(devices, "1"), 1u);
  EXPECT_EQ(*SelectDevice(devices, "LLVMPIPE"), 1u);
  EXPECT_FALSE(SelectDevice(devices, "7").ok());
  const auto missing = SelectDevice(devices, "mali");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("'NVIDIA H200'"));
}

// Two tensors in one buffer at aligned offsets, as the memory planner's
// arena places them: x -> arena[first] -> arena[second], nothing else touched.
TEST_P(GpuTest, DispatchesBindPartsOfABuffer) {
  const uint32_t n = 100;
  const size_t align = std::max<size_t>(device_->info().limits.storage_buffer_offset_alignment, 4);
  ASSERT_EQ(align & (align - 1), 0u) << "alignment " << align << " is not a power of two";
  const size_t first = align, second = first + ((n * 4 + align - 1) / align) * align;
  const size_t floats = (second + n * 4 + align) / 4;  // a sentinel tail after the second part
  auto program = MakeProgram(*device_, "affine", kAffine, 2, 8);
  ASSERT_NE(program, nullptr);
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f;
  auto bx = MakeBuffer(*device_, x);
  auto arena = MakeBuffer(*device_, std::vector<float>(floats, -7.0f));
  const Dispatch to_first{program.get(), {{bx.get(), Access::kRead}, {arena.get(), Access::kWrite, first, n * 4}},
                          Params(n, 2.0f), {(n + 63) / 64, 1, 1}};
  const Dispatch to_second{program.get(),
                           {{arena.get(), Access::kRead, first, n * 4}, {arena.get(), Access::kWrite, second, n * 4}},
                           Params(n, 3.0f), {(n + 63) / 64, 1, 1}};
  auto recording = device_->Record({to_first, to_second});
  ASSERT_TRUE(recording.ok()) << recording.status();
  EXPECT_EQ((*recording)->num_barriers(), 1u);
  ASSERT_TRUE(device_->Run(**recording).ok());
  const std::vector<float> out = Read(*device_, *arena);
  for (size_t i = 0; i < floats; ++i) {
    float expected = -7.0f;
    if (i >= first / 4 && i < first / 4 + n) {
      const size_t k = i - first / 4;
      expected = x[k] * 2.0f + static_cast<float>(k);
    } else if (i >= second / 4 && i < second / 4 + n) {
      const size_t k = i - second / 4;
      expected = (x[k] * 2.0f + static_cast<float>(k)) * 3.0f + static_cast<float>(k);
    }
    ASSERT_EQ(out[i], expected) << "float " << i;
  }
}

TEST_P(GpuTest, BindingRangesAreChecked) {
  auto program = MakeProgram(*device_, "increment", kIncrement, 1, 4);
  ASSERT_NE(program, nullptr);
  auto buffer = MakeBuffer(*device_, std::vector<float>(256, 0.0f));
  const size_t align = device_->info().limits.storage_buffer_offset_alignment;
  auto error = [&](size_t offset, size_t bytes) {
    auto r = device_->Record({Dispatch{program.get(), {{buffer.get(), Access::kReadWrite, offset, bytes}}, Params(1u), {1, 1, 1}}});
    return r.ok() ? std::string("accepted") : std::string(r.status().message());
  };
  EXPECT_THAT(error(0, 2048), HasSubstr("2048 bytes at offset 0 do not fit the 1024-byte buffer"));
  EXPECT_THAT(error(1024, 0), HasSubstr("do not fit"));
  if (align > 1) {
    EXPECT_THAT(error(align / 2, 16), HasSubstr("is not a multiple of the device's"));
  }
  EXPECT_EQ(error(0, 16), "accepted");
}

// A stand-in buffer: PlanBarriers only looks at identities and sizes.
class FakeBuffer : public Buffer {
 public:
  size_t size() const override { return 1024; }
};

TEST(GpuBarrierTest, BarriersOnlyWhereADispatchDependsOnAnEarlierOne) {
  FakeBuffer buffers[3];
  Buffer* a = &buffers[0];
  Buffer* b = &buffers[1];
  Buffer* c = &buffers[2];
  auto at = [](Buffer* buf, Access acc) { return Binding{buf, acc}; };
  std::vector<Dispatch> d(5);
  d[0].bindings = {at(a, Access::kRead), at(b, Access::kWrite)};   // b = f(a)
  d[1].bindings = {at(a, Access::kRead), at(c, Access::kWrite)};   // c = f(a): independent
  d[2].bindings = {at(b, Access::kRead), at(c, Access::kRead)};    // reads b, c: barrier
  d[3].bindings = {at(a, Access::kWrite)};                         // writes a read by 2? no; read by 0,1 before the barrier
  d[4].bindings = {at(a, Access::kRead)};                          // reads a written by 3: barrier
  EXPECT_EQ(PlanBarriers(d), (std::vector<bool>{false, false, true, false, true}));
  std::vector<Dispatch> war(2);
  war[0].bindings = {at(a, Access::kRead)};
  war[1].bindings = {at(a, Access::kWrite)};  // write after read
  EXPECT_EQ(PlanBarriers(war), (std::vector<bool>{false, true}));
}

TEST(GpuBarrierTest, PartsOfOneBufferAreApartUnlessTheirBytesOverlap) {
  FakeBuffer arena;
  auto part = [&](Access acc, size_t offset, size_t bytes) { return Binding{&arena, acc, offset, bytes}; };
  std::vector<Dispatch> d(4);
  d[0].bindings = {part(Access::kRead, 0, 256), part(Access::kWrite, 256, 256)};
  d[1].bindings = {part(Access::kRead, 0, 256), part(Access::kWrite, 512, 256)};  // apart from 0's output
  d[2].bindings = {part(Access::kRead, 256, 16)};                                  // inside 0's output: barrier
  d[3].bindings = {part(Access::kWrite, 768, 0)};                                  // 768 to the end: apart
  EXPECT_EQ(PlanBarriers(d), (std::vector<bool>{false, false, true, false}));
  std::vector<Dispatch> war(2);
  war[0].bindings = {part(Access::kRead, 0, 512)};
  war[1].bindings = {part(Access::kWrite, 496, 32)};  // overwrites the last bytes just read
  EXPECT_EQ(PlanBarriers(war), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace mgd::gpu
