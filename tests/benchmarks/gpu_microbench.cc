// What one dispatch and one transfer cost on each backend: the floor under
// any whole-model time. Results for the H200 are in docs/perf.md.
//   gpu_microbench [--benchmark_filter=...]   (MGD_DEVICE selects the device)
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "backends/gpu/gpu.h"

namespace mgd::gpu {
namespace {

std::string Glsl(Api api, const std::string& body) {
  return (api == Api::kVulkan ? "#version 450\n" : "#version 310 es\nprecision highp float;\n") + body;
}

const char* const kTouch = R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { float v[]; };
void main() { if (gl_GlobalInvocationID.x == 0u) v[0] += 1.0; }
)";

Device* Get(Api api) {
  static std::unique_ptr<Device> devices[2];
  auto& d = devices[api == Api::kVulkan ? 0 : 1];
  if (d == nullptr) {
    auto created = CreateDevice(api);
    if (created.ok()) d = std::move(*created);
  }
  return d.get();
}

void Dispatches(benchmark::State& state, Api api, int count) {
  Device* device = Get(api);
  if (device == nullptr) return state.SkipWithError("no device");
  auto program = device->CreateProgram({"touch", Glsl(api, kTouch), 1, 0, 0});
  auto buffer = device->CreateBuffer(256);
  if (!program.ok() || !buffer.ok()) return state.SkipWithError("setup failed");
  std::vector<Dispatch> dispatches(static_cast<size_t>(count),
                                   Dispatch{program->get(), {{buffer->get(), Access::kReadWrite}}, {}, {1, 1, 1}});
  auto recording = device->Record(dispatches);
  if (!recording.ok()) return state.SkipWithError("record failed");
  for (auto _ : state) {
    if (!device->Run(**recording).ok()) return state.SkipWithError("run failed");
  }
  // Wall time per dispatch in microseconds (the unit suffix benchmark prints is "s").
  state.counters["us_per_dispatch"] =
      benchmark::Counter(static_cast<double>(count) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                                               benchmark::Counter::kInvert);
  state.SetLabel(device->info().device_name);
}

void Transfer(benchmark::State& state, Api api, bool upload) {
  Device* device = Get(api);
  if (device == nullptr) return state.SkipWithError("no device");
  const auto bytes = static_cast<size_t>(state.range(0));
  auto buffer = device->CreateBuffer(bytes);
  if (!buffer.ok()) return state.SkipWithError("buffer failed");
  std::vector<uint8_t> host(bytes, 1);
  for (auto _ : state) {
    const absl::Status s = upload ? device->Upload(**buffer, host.data(), bytes) : device->Download(**buffer, host.data(), bytes);
    if (!s.ok()) return state.SkipWithError("transfer failed");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  state.SetLabel(device->info().device_name);
}

void BM_SingleDispatch(benchmark::State& state, Api api) { Dispatches(state, api, 1); }
void BM_ReplayedSequence100(benchmark::State& state, Api api) { Dispatches(state, api, 100); }
void BM_Upload(benchmark::State& state, Api api) { Transfer(state, api, true); }
void BM_Download(benchmark::State& state, Api api) { Transfer(state, api, false); }

BENCHMARK_CAPTURE(BM_SingleDispatch, vulkan, Api::kVulkan)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_SingleDispatch, gl, Api::kGles)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayedSequence100, vulkan, Api::kVulkan)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayedSequence100, gl, Api::kGles)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Upload, vulkan, Api::kVulkan)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Upload, gl, Api::kGles)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Download, vulkan, Api::kVulkan)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Download, gl, Api::kGles)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace mgd::gpu

BENCHMARK_MAIN();
