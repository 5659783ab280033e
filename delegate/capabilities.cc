#include "delegate/capabilities.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/conv/conv.h"

namespace mgd {
namespace {

constexpr int kSize = 56, kChannels = 32, kWide = 64;
// Runs in turns of kBlock per delegate: the first of a turn pays for the
// switch between devices (0.1-0.2 ms on the H200), the median does not.
constexpr int kWarmUp = 3, kRounds = 3, kBlock = 5;

}  // namespace

// Input [1,56,56,32] -> conv 3x3 (32) -> conv 1x1 (64) -> conv 1x1 (32),
// RELU6 between; weights deterministic and small enough to stay finite.
Graph ReferenceWorkload() {
  Graph g;
  auto tensor = [&](Shape shape) {
    g.tensors.push_back(Tensor{});
    g.tensors.back().shape = std::move(shape);
    return static_cast<int>(g.tensors.size()) - 1;
  };
  auto constant = [&](Shape shape) {
    const int t = tensor(shape);
    std::vector<float> values(static_cast<size_t>(NumElements(shape)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.05f * std::sin(0.37f * static_cast<float>(i));
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    g.tensors[static_cast<size_t>(t)].data = std::move(bytes);
    g.tensors[static_cast<size_t>(t)].is_constant = true;
    return t;
  };
  int x = tensor({1, kSize, kSize, kChannels});
  g.inputs = {x};
  auto conv = [&](int in_channels, int out_channels, int kernel, Activation act) {
    ops::Conv2dAttributes a;
    a.activation = act;
    const int w = constant({out_channels, kernel, kernel, in_channels}), b = constant({out_channels});
    const int y = tensor({1, kSize, kSize, out_channels});
    Node n;
    n.op = OpKind::kConv2d;
    n.attributes = OpAttributes(a);
    n.inputs = {x, w, b};
    n.outputs = {y};
    g.nodes.push_back(std::move(n));
    x = y;
  };
  conv(kChannels, kChannels, 3, Activation::kRelu6);
  conv(kChannels, kWide, 1, Activation::kRelu6);
  conv(kWide, kChannels, 1, Activation::kNone);
  g.outputs = {x};
  g.description = "mgd's reference workload (capabilities)";
  return g;
}

absl::StatusOr<std::vector<double>> MeasureSideBySide(const std::vector<GpuDelegateOptions>& options,
                                                      gpu::Interop* interop) {
  std::vector<std::unique_ptr<GpuDelegate>> delegates;
  std::vector<std::unique_ptr<Interpreter>> interpreters;
  for (GpuDelegateOptions o : options) {
    o.cache_dir.clear();
    o.observers.clear();
    absl::StatusOr<std::unique_ptr<GpuDelegate>> delegate = GpuDelegate::Create(o);
    if (!delegate.ok()) return delegate.status();
    InterpreterOptions io;
    io.delegates.push_back(delegate->get());
    io.logger = [](LogLevel, const std::string&) {};
    absl::StatusOr<std::unique_ptr<Interpreter>> in = Interpreter::Create(ReferenceWorkload(), std::move(io));
    if (!in.ok()) return in.status();
    if ((*in)->partitions().size() != 1) return absl::InternalError("the reference workload did not run on the GPU");
    delegates.push_back(std::move(*delegate));
    interpreters.push_back(std::move(*in));
  }
  if (interop != nullptr && !delegates.empty()) *interop = delegates[0]->device().interop();
  // In turns, so that a GPU's clocks, still rising at the first runs,
  // favour none of them.
  std::vector<std::vector<double>> ms(interpreters.size());
  for (size_t k = 0; k < interpreters.size(); ++k) {
    for (int i = 0; i < kWarmUp; ++i) {
      if (absl::Status s = interpreters[k]->Invoke(); !s.ok()) return s;
    }
  }
  for (int round = 0; round < kRounds; ++round) {
    for (size_t k = 0; k < interpreters.size(); ++k) {
      for (int i = 0; i < kBlock; ++i) {
        const auto start = std::chrono::steady_clock::now();
        if (absl::Status s = interpreters[k]->Invoke(); !s.ok()) return s;
        ms[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& m : ms) {
    std::sort(m.begin(), m.end());
    medians.push_back(m[m.size() / 2]);
  }
  interpreters.clear();  // before their delegates
  return medians;
}

double ReferenceWorkloadFlops() {
  const double pixels = kSize * kSize;
  return 2 * pixels * (9.0 * kChannels * kChannels + kChannels * kWide + kWide * kChannels);
}

absl::StatusOr<Capabilities> MeasureCapabilities(GpuDelegateOptions options) {
  Capabilities c;
  GpuDelegateOptions fp32 = options, fp16 = options;
  fp32.precision = Precision::Fp32();
  fp16.precision = Precision::Fp16();
  absl::StatusOr<std::vector<double>> ms = MeasureSideBySide({fp32, fp16}, &c.interop);
  if (!ms.ok()) return ms.status();
  c.fp32_ms = (*ms)[0];
  c.fp16_ms = (*ms)[1];
  c.fp32_gflops = ReferenceWorkloadFlops() / (c.fp32_ms * 1e6);
  c.fp16_gflops = ReferenceWorkloadFlops() / (c.fp16_ms * 1e6);
  return c;
}

}  // namespace mgd
