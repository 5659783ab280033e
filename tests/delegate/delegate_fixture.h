// A GPU delegate per (API, precision) and the comparison of GPU against CPU
// results with the bounds of docs/design.md section 5.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"

namespace mgd::testing {

struct Backend {
  gpu::Api api;
  bool fp16;
};

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return std::string(gpu::ApiName(info.param.api)) + (info.param.fp16 ? "_fp16" : "_fp32");
}

inline std::vector<Backend> AllBackends() {
  return {{gpu::Api::kVulkan, false}, {gpu::Api::kVulkan, true}, {gpu::Api::kGles, false}, {gpu::Api::kGles, true}};
}

inline std::vector<float> Uniform(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The op bound for one element, widened `widen` times (graph depth).
inline double OpBound(double expected, bool fp16, double widen = 1.0) {
  return widen * (fp16 ? 5 * std::ldexp(1.0, -10) * (1 + std::abs(expected))
                       : 1e-5 + 5 * std::ldexp(1.0, -23) * std::abs(expected));
}

// One node of `op` over `inputs` (graph inputs: activations; the rest
// constants already in the builder) with output shapes `outs`.
struct OneOp {
  GraphBuilder b;
  std::vector<std::vector<float>> data;
  uint32_t seed = 1000;
  int Input(const Shape& shape, float scale = 1.0f) {
    data.push_back(Uniform(static_cast<size_t>(NumElements(shape)), seed++, scale));
    return b.Input(shape);
  }
  int Const(const Shape& shape, float scale = 1.0f) {
    return b.Constant(shape, Uniform(static_cast<size_t>(NumElements(shape)), seed++, scale));
  }
  std::vector<int> Op(OpKind op, Attributes a, std::vector<int> inputs, const std::vector<Shape>& outs) {
    std::vector<int> outputs;
    for (const Shape& s : outs) outputs.push_back(b.Tensor(s));
    b.Op(op, std::move(a), std::move(inputs), outputs);
    return outputs;
  }
  void Out(const std::vector<int>& ts) {
    for (int t : ts) b.Output(t);
  }
};

// Runs `graph` (every node delegated or folded at load, unless not
// `all_delegated`) with each input given as its bytes (any dtype) and
// returns its outputs as their bytes.
inline std::vector<std::vector<uint8_t>> RunToBytes(const Graph& graph, const std::vector<std::vector<uint8_t>>& inputs,
                                                   Delegate* delegate, bool all_delegated = true) {
  InterpreterOptions options;
  if (delegate) options.delegates.push_back(delegate);
  std::vector<std::string> log;
  options.logger = [&](LogLevel, const std::string& m) { log.push_back(m); };
  auto interpreter = Interpreter::Create(graph, std::move(options));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok()) return {};
  EXPECT_THAT(log, ::testing::IsEmpty());
  if (delegate && all_delegated) {
    // The graph as the interpreter runs it (an int8 one rewritten as float).
    const Graph& ran = (*interpreter)->graph();
    for (size_t n = 0; n < ran.nodes.size(); ++n) {
      const NodePlacement& p = (*interpreter)->placements()[n];
      EXPECT_NE(p.where, NodePlacement::Where::kCpu) << NodeLabel(ran, static_cast<int>(n)) << ": " << p.reason;
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ((*interpreter)->input(i).bytes, inputs[i].size()) << "input " << i;
    std::memcpy((*interpreter)->input(i).data, inputs[i].data(), std::min(inputs[i].size(), (*interpreter)->input(i).bytes));
  }
  const absl::Status invoked = (*interpreter)->Invoke();
  EXPECT_TRUE(invoked.ok()) << invoked;
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const TensorRef& t = (*interpreter)->output(k);
    outputs.emplace_back(t.data, t.data + t.bytes);
  }
  return outputs;
}

// RunToBytes with float32 outputs, as floats.
inline std::vector<std::vector<float>> RunWithBytes(const Graph& graph, const std::vector<std::vector<uint8_t>>& inputs,
                                                   Delegate* delegate, bool all_delegated = true) {
  std::vector<std::vector<float>> outputs;
  for (const std::vector<uint8_t>& bytes : RunToBytes(graph, inputs, delegate, all_delegated)) {
    outputs.emplace_back(bytes.size() / sizeof(float));
    std::memcpy(outputs.back().data(), bytes.data(), outputs.back().size() * sizeof(float));
  }
  return outputs;
}

// A vector's bytes, as an input of RunToBytes.
template <typename T>
std::vector<uint8_t> BytesOf(const std::vector<T>& values) {
  const auto* begin = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(begin, begin + values.size() * sizeof(T));
}

// A delegate for `backend` with the validation layer on, for tests whose
// parameters are more than a Backend (DelegateTest makes its own); null
// where there is no such device. Check its validation_messages() at the end.
inline std::unique_ptr<GpuDelegate> ValidatedDelegate(const Backend& backend) {
  GpuDelegateOptions options;
  options.api = backend.api;
  options.precision = Precision::Of(backend.fp16);
  options.validation = true;
  auto delegate = GpuDelegate::Create(options);
  return delegate.ok() ? std::move(*delegate) : nullptr;
}

class DelegateTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam().api);
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    delegate_ = MakeDelegate(true);
    ASSERT_NE(delegate_, nullptr);  // say so, rather than crash in the test (no validation layer, say)
  }
  void TearDown() override {
    for (auto* d : {delegate_.get(), unfused_.get()}) {
      if (d) {
        EXPECT_THAT(d->device().validation_messages(), ::testing::IsEmpty());
      }
    }
  }

  std::unique_ptr<GpuDelegate> MakeDelegate(bool fusion, bool share_programs = false) {
    GpuDelegateOptions options;
    options.api = GetParam().api;
    options.precision = Precision::Of(GetParam().fp16);
    options.fusion = fusion;
    options.share_programs = share_programs;
    options.validation = true;
    auto delegate = GpuDelegate::Create(options);
    EXPECT_TRUE(delegate.ok()) << delegate.status();
    return delegate.ok() ? std::move(*delegate) : nullptr;
  }
  GpuDelegate& Unfused() {
    if (!unfused_) unfused_ = MakeDelegate(false);
    return *unfused_;
  }

  // Runs `graph` (every node delegated or folded at load) and returns its outputs.
  static std::vector<std::vector<float>> Run(const Graph& graph, const std::vector<std::vector<float>>& inputs,
                                             Delegate* delegate) {
    std::vector<std::vector<uint8_t>> bytes;
    for (const std::vector<float>& input : inputs) bytes.push_back(BytesOf(input));
    return RunWithBytes(graph, bytes, delegate);
  }


  void ExpectNear(const std::vector<std::vector<float>>& actual, const std::vector<std::vector<float>>& expected,
                  double widen = 1.0) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      ASSERT_EQ(actual[k].size(), expected[k].size());
      for (size_t i = 0; i < expected[k].size(); ++i) {
        const double e = expected[k][i], a = actual[k][i];
        ASSERT_LE(std::abs(a - e), OpBound(e, GetParam().fp16, widen))
            << "output " << k << " element " << i << ": gpu " << a << " cpu " << e;
      }
    }
  }

  // GPU (with fusion, and without when `also_unfused`) against the CPU
  // reference kernels, within the op bounds.
  void ExpectSameAsCpu(const Graph& graph, const std::vector<std::vector<float>>& inputs, double widen = 1.0) {
    const auto cpu = Run(graph, inputs, nullptr);
    ExpectNear(Run(graph, inputs, delegate_.get()), cpu, widen);
  }

  std::unique_ptr<GpuDelegate> delegate_, unfused_;
};

}  // namespace mgd::testing
