// Create, invoke and delete a GPU delegate and its interpreter over and
// over (issue 21): memory and file descriptors stay flat. 40 cycles per API
// by default (after 20 to warm up); MGD_SOAK=1 runs 1000.
#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "delegate/gpu_delegate.h"
#include "model/reader.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd {
namespace {

size_t OpenFiles() {
  size_t n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++n;
    closedir(dir);
  }
  return n;
}

double ResidentMib() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

class CyclesTest : public ::testing::TestWithParam<gpu::Api> {};

TEST_P(CyclesTest, CreateInvokeDeleteLeavesMemoryAndFilesFlat) {
  auto devices = gpu::ListDevices(GetParam());
  ASSERT_TRUE(devices.ok());
  if (devices->empty()) {
    if (testing::GpuBackendsRequired()) FAIL() << "no device";
    GTEST_SKIP() << "no device";
  }
  const char* soak = std::getenv("MGD_SOAK");
  const int cycles = soak != nullptr && std::string(soak) == "1" ? 1000 : 40;
  const std::string model = "face_detection_short_range";
  const std::vector<float> input = testing::ReadF32(testing::DataPath("reference/" + model + "/image/input_0.f32"));
  const std::string cache = ::testing::TempDir() + "/mgd_cycles_cache_" + gpu::ApiName(GetParam());
  auto cycle = [&]() {
    GpuDelegateOptions options;
    options.api = GetParam();
    options.cache_dir = cache;  // prepares from the cache after the first: the cycle, not the compiler, is tested
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    auto graph = ReadModelFile(testing::DataPath("models/" + model + ".tflite"));
    ASSERT_TRUE(graph.ok());
    InterpreterOptions interpreter_options;
    interpreter_options.delegates.push_back(delegate->get());
    auto interpreter = Interpreter::Create(std::move(*graph), std::move(interpreter_options));
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    std::memcpy((*interpreter)->input(0).data, input.data(), input.size() * 4);
    ASSERT_TRUE((*interpreter)->Invoke().ok());
    std::vector<std::vector<uint8_t>> outs;
    std::vector<OutputBytes> targets;
    for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) outs.emplace_back((*interpreter)->output(k).bytes);
    for (auto& o : outs) targets.push_back({o.data(), o.size()});
    auto event = (*interpreter)->InvokeAsync({{input.data(), input.size() * 4}}, targets);  // slots made and freed too
    ASSERT_TRUE(event.ok()) << event.status();
    (*event)->Wait();
    ASSERT_TRUE((*event)->status().ok()) << (*event)->status();
  };
  // Warm-up: the drivers' caches, and malloc's per-thread arenas (each new
  // thread may get one, which keeps what it freed): resident memory grows
  // in steps for the first cycles, then stays.
  for (int i = 0; i < 20; ++i) ASSERT_NO_FATAL_FAILURE(cycle());
  const size_t files = OpenFiles();
  const double mib = ResidentMib();
  for (int i = 0; i < cycles; ++i) ASSERT_NO_FATAL_FAILURE(cycle()) << "cycle " << i;
  EXPECT_EQ(OpenFiles(), files) << "file descriptors after " << cycles << " cycles";
  // Allocators keep some memory (a step of 20-40 MiB now and then on this
  // 2-core machine, as arenas fill); a leak of one model's buffers per
  // cycle would be hundreds.
  EXPECT_LT(ResidentMib() - mib, 64.0) << "resident memory after " << cycles << " cycles (from " << mib << " MiB)";
}

INSTANTIATE_TEST_SUITE_P(Apis, CyclesTest, ::testing::Values(gpu::Api::kVulkan, gpu::Api::kGles),
                         [](const ::testing::TestParamInfo<gpu::Api>& info) { return std::string(gpu::ApiName(info.param)); });

}  // namespace
}  // namespace mgd
