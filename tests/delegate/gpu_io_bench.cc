// Latency of invokes whose inputs and outputs are the app's GPU buffers
// (bound, zero-copy) against invokes through host memory, per API and
// precision, for docs/perf.md (issue 21). Not a test: run by hand.
//   gpu_io_bench [MODEL.tflite...] [--runs N]
//   gpu_io_bench --priority FOREGROUND.tflite BACKGROUND.tflite [--runs N]
// Prints per model, API and precision the median and 90th percentile of
// one Invoke through host memory and of one with every input and output
// bound (in the GPU's own memory where the API says where memory is).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "delegate/gpu_delegate.h"
#include "model/reader.h"
#include "tests/delegate/app_gpu.h"

namespace mgd {
namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double p50 = 0, p90 = 0;
};

template <typename F>
Stats Time(int runs, F&& invoke) {
  for (int i = 0; i < 5; ++i) invoke();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    invoke();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10]};
}

int Bench(const std::string& path, gpu::Api api, bool fp16, int runs) {
  GpuDelegateOptions options;
  options.api = api;
  options.precision = Precision::Of(fp16);
  auto delegate = GpuDelegate::Create(options);
  auto graph = ReadModelFile(path);
  if (!delegate.ok() || !graph.ok()) {
    std::fprintf(stderr, "%s\n", std::string((delegate.ok() ? graph.status() : delegate.status()).message()).c_str());
    return 1;
  }
  InterpreterOptions io;
  io.delegates.push_back(delegate->get());
  auto made = Interpreter::Create(std::move(*graph), std::move(io));
  if (!made.ok()) return 1;
  Interpreter& in = **made;
  const Graph& g = in.graph();
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<InputBytes> in_bytes;
  std::vector<OutputBytes> out_bytes;
  for (size_t i = 0; i < in.num_inputs(); ++i) {
    inputs.emplace_back(in.input(i).bytes, 0);
    in_bytes.push_back({inputs.back().data(), inputs.back().size()});
  }
  for (size_t k = 0; k < in.num_outputs(); ++k) {
    outputs.emplace_back(in.output(k).bytes, 0);
    out_bytes.push_back({outputs.back().data(), outputs.back().size()});
  }
  const Stats host = Time(runs, [&] { (void)in.Invoke(in_bytes, out_bytes); });
  std::vector<int> tensors(g.inputs.begin(), g.inputs.end());
  tensors.insert(tensors.end(), g.outputs.begin(), g.outputs.end());
  const gpu::Interop interop = (*delegate)->device().interop();
  std::vector<std::unique_ptr<testing::AppVkBuffer>> vk;
  std::unique_ptr<testing::AppGlContext> gl;
  if (api == gpu::Api::kGles) gl = std::make_unique<testing::AppGlContext>(interop);
  for (int t : tensors) {
    auto needs = in.BufferNeeds(t);
    if (!needs.ok()) return 1;
    GpuBuffer b;
    if (api == gpu::Api::kVulkan) {
      vk.push_back(std::make_unique<testing::AppVkBuffer>(interop, needs->bhwc_bytes, false, /*device_local=*/true));
      b = vk.back()->AsGpuBuffer();
    } else {
      b = {GpuBuffer::Type::kGlBuffer, gl->Buffer(needs->bhwc_bytes), -1, 0, needs->bhwc_bytes, 0, 0};
      glFinish();
    }
    if (absl::Status s = in.BindBuffer(t, b); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  const std::vector<InputBytes> no_inputs(in.num_inputs());
  const std::vector<OutputBytes> no_outputs(in.num_outputs());
  const Stats bound = Time(runs, [&] { (void)in.Invoke(no_inputs, no_outputs); });
  for (int t : tensors) (void)in.BindBuffer(t, std::nullopt);
  made->reset();
  std::string name = path.substr(path.find_last_of('/') + 1);
  std::printf("%-34s %-6s %s  host copies p50 %.3f p90 %.3f ms   bound buffers p50 %.3f p90 %.3f ms   (%.2fx)\n",
              name.c_str(), gpu::ApiName(api), fp16 ? "fp16" : "fp32", host.p50, host.p90, bound.p50, bound.p90,
              host.p50 / bound.p50);
  return 0;
}

struct Loaded {
  std::unique_ptr<GpuDelegate> delegate;
  std::unique_ptr<Interpreter> interpreter;
};

Loaded Load(const std::string& path, gpu::Api api, gpu::Priority priority) {
  GpuDelegateOptions options;
  options.api = api;
  options.precision = Precision::Fp16();
  options.priority = priority;
  auto delegate = GpuDelegate::Create(options);
  auto graph = ReadModelFile(path);
  if (!delegate.ok() || !graph.ok()) return {};
  InterpreterOptions io;
  io.delegates.push_back(delegate->get());
  auto in = Interpreter::Create(std::move(*graph), std::move(io));
  if (!in.ok()) return {};
  return {std::move(*delegate), std::move(*in)};
}

// The foreground model's invoke latency alone, beside the background model
// invoked without pause on another thread (both at medium priority), and
// at high priority beside the background at low.
int PriorityBench(const std::string& foreground, const std::string& background, gpu::Api api, int runs) {
  struct Mode {
    const char* name;
    bool busy;
    gpu::Priority fg, bg;
  };
  for (const Mode& m : {Mode{"alone", false, gpu::Priority::kMedium, gpu::Priority::kMedium},
                        Mode{"beside background, both medium", true, gpu::Priority::kMedium, gpu::Priority::kMedium},
                        Mode{"high beside low background", true, gpu::Priority::kHigh, gpu::Priority::kLow}}) {
    Loaded fg = Load(foreground, api, m.fg), bg = Load(background, api, m.bg);
    if (!fg.interpreter || !bg.interpreter) return 1;
    std::atomic<bool> stop{false};
    std::atomic<int> background_runs{0};
    std::thread busy([&] {
      while (m.busy && !stop) {
        (void)bg.interpreter->Invoke();
        ++background_runs;
      }
    });
    const Stats s = Time(runs, [&] { (void)fg.interpreter->Invoke(); });
    stop = true;
    busy.join();
    std::printf("%-6s %-32s foreground p50 %.3f p90 %.3f ms (%d background runs; granted: fg %s, bg %s)\n",
                gpu::ApiName(api), m.name, s.p50, s.p90, background_runs.load(), fg.delegate->device().info().priority.c_str(),
                bg.delegate->device().info().priority.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace mgd

int main(int argc, char** argv) {
  std::vector<std::string> models;
  int runs = 200;
  bool priority = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--priority") == 0) {
      priority = true;
    } else {
      models.push_back(argv[i]);
    }
  }
  if (priority) {
    if (models.size() != 2) return 2;
    int failed = 0;
    for (auto api : {mgd::gpu::Api::kVulkan, mgd::gpu::Api::kGles}) failed += mgd::PriorityBench(models[0], models[1], api, runs);
    return failed == 0 ? 0 : 1;
  }
  int failed = 0;
  for (const std::string& m : models) {
    for (auto api : {mgd::gpu::Api::kVulkan, mgd::gpu::Api::kGles}) {
      for (bool fp16 : {false, true}) failed += mgd::Bench(m, api, fp16, runs);
    }
  }
  return failed == 0 ? 0 : 1;
}
