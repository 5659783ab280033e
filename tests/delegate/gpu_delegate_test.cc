// The GPU delegate against the CPU reference kernels: single ops with odd
// shapes on both APIs (DESIGN.md section 5 fp32 op bounds), and the test
// models with every supported node on the GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "delegate/gpu_delegate.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "tests/graph_builder.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

using testing::GraphBuilder;

std::vector<float> Uniform(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class GpuDelegateTest : public ::testing::TestWithParam<gpu::Api> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam());
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (mgd::testing::GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    GpuDelegateOptions options;
    options.api = GetParam();
    options.validation = true;
    auto delegate = GpuDelegate::Create(options);
    ASSERT_TRUE(delegate.ok()) << delegate.status();
    delegate_ = std::move(*delegate);
  }
  void TearDown() override {
    if (delegate_) {
      EXPECT_THAT(delegate_->device().validation_messages(), ::testing::IsEmpty());
    }
  }

  // Runs `graph` on the CPU and with the delegate; every node must be
  // delegated and every output within the fp32 op bound.
  void ExpectSameAsCpu(const Graph& graph, const std::vector<std::vector<float>>& inputs) {
    auto cpu = Interpreter::Create(graph, InterpreterOptions{});
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    std::vector<std::string> log;
    options.logger = [&](LogLevel, const std::string& m) { log.push_back(m); };
    auto gpu = Interpreter::Create(graph, std::move(options));
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    ASSERT_THAT(log, ::testing::IsEmpty());
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const NodePlacement& p = (*gpu)->placements()[n];
      ASSERT_EQ(p.where, NodePlacement::Where::kDelegate) << NodeLabel(graph, static_cast<int>(n)) << ": " << p.reason;
    }
    for (auto* interpreter : {cpu->get(), gpu->get()}) {
      for (size_t i = 0; i < inputs.size(); ++i) std::memcpy(interpreter->input(i).data, inputs[i].data(), inputs[i].size() * 4);
      ASSERT_TRUE(interpreter->Invoke().ok());
    }
    for (size_t k = 0; k < graph.outputs.size(); ++k) {
      const TensorRef& e = (*cpu)->output(k);
      const TensorRef& a = (*gpu)->output(k);
      for (int64_t i = 0; i < e.elements(); ++i) {
        const float ev = e.as<float>()[i], av = a.as<float>()[i];
        ASSERT_LE(std::abs(av - ev), 1e-5 + 5 * std::ldexp(1.0, -23) * std::abs(ev))
            << "output " << k << " element " << i << ": gpu " << av << " cpu " << ev;
      }
    }
  }

  std::unique_ptr<GpuDelegate> delegate_;
};

struct ConvCase {
  int h, w, ci, co, k, stride, dilation;
  Padding padding;
  Activation activation;
  bool bias;
};

TEST_P(GpuDelegateTest, Conv2dMatchesTheCpu) {
  const ConvCase cases[] = {
      {7, 9, 5, 6, 3, 1, 1, Padding::kSame, Activation::kNone, true},
      {8, 8, 3, 16, 3, 2, 1, Padding::kSame, Activation::kRelu6, true},
      {9, 7, 4, 5, 3, 2, 2, Padding::kValid, Activation::kRelu, false},
      {5, 6, 17, 9, 1, 1, 1, Padding::kValid, Activation::kNone, true},
      {6, 6, 8, 4, 2, 2, 1, Padding::kSame, Activation::kTanh, true},
      {10, 3, 1, 1, 5, 3, 1, Padding::kSame, Activation::kReluN1To1, true},
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << "x" << c.ci << " -> " << c.co << " k" << c.k << " s" << c.stride);
    GraphBuilder b;
    const int x = b.Input({1, c.h, c.w, c.ci});
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.k * c.k * c.ci));
    const int w = b.Constant({c.co, c.k, c.k, c.ci}, Uniform(static_cast<size_t>(c.co * c.k * c.k * c.ci), seed++, scale));
    std::vector<int> inputs = {x, w};
    if (c.bias) inputs.push_back(b.Constant({c.co}, Uniform(static_cast<size_t>(c.co), seed++)));
    const int eff = (c.k - 1) * c.dilation + 1;
    const int oh = c.padding == Padding::kSame ? (c.h + c.stride - 1) / c.stride : (c.h - eff + c.stride) / c.stride;
    const int ow = c.padding == Padding::kSame ? (c.w + c.stride - 1) / c.stride : (c.w - eff + c.stride) / c.stride;
    const int y = b.Tensor({1, oh, ow, c.co});
    Conv2dAttributes a;
    a.padding = c.padding;
    a.stride_w = a.stride_h = c.stride;
    a.dilation_w = a.dilation_h = c.dilation;
    a.activation = c.activation;
    b.Op(OpKind::kConv2d, a, inputs, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), {Uniform(static_cast<size_t>(c.h * c.w * c.ci), seed++)});
  }
}

TEST_P(GpuDelegateTest, DepthwiseConv2dMatchesTheCpu) {
  uint32_t seed = 100;
  for (int channels : {1, 5, 8, 17}) {
    for (int stride : {1, 2}) {
      GraphBuilder b;
      const int x = b.Input({1, 9, 7, channels});
      const int w = b.Constant({1, 3, 3, channels}, Uniform(static_cast<size_t>(9 * channels), seed++, 1.0f / 3));
      const int bias = b.Constant({channels}, Uniform(static_cast<size_t>(channels), seed++));
      const int y = b.Tensor({1, (9 + stride - 1) / stride, (7 + stride - 1) / stride, channels});
      DepthwiseConv2dAttributes a;
      a.stride_w = a.stride_h = stride;
      a.activation = Activation::kRelu6;
      b.Op(OpKind::kDepthwiseConv2d, a, {x, w, bias}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(static_cast<size_t>(63 * channels), seed++)});
    }
  }
}

TEST_P(GpuDelegateTest, FullyConnectedMatchesTheCpu) {
  GraphBuilder b;
  const int x = b.Input({2, 13});
  const int w = b.Constant({7, 13}, Uniform(91, 5, 0.3f));
  const int bias = b.Constant({7}, Uniform(7, 6));
  const int y = b.Tensor({2, 7});
  b.Op(OpKind::kFullyConnected, FullyConnectedAttributes{Activation::kRelu, false}, {x, w, bias}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {Uniform(26, 7)});
}

TEST_P(GpuDelegateTest, UnaryOpsMatchTheCpu) {
  for (OpKind op : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                    OpKind::kHardSwish, OpKind::kExp, OpKind::kElu, OpKind::kLeakyRelu}) {
    SCOPED_TRACE(OpName(op));
    GraphBuilder b;
    const int x = b.Input({1, 5, 3, 7});
    const int y = b.Tensor({1, 5, 3, 7});
    Attributes a;
    if (op == OpKind::kLeakyRelu) a = LeakyReluAttributes{0.1f};
    b.Op(op, a, {x}, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), {Uniform(105, 11, 4.0f)});
  }
}

TEST_P(GpuDelegateTest, BinaryOpsInTheirBroadcastFormsMatchTheCpu) {
  const Shape full{1, 4, 5, 6};
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kMaximum, OpKind::kMinimum, OpKind::kSquaredDifference}) {
    SCOPED_TRACE(OpName(op));
    const Attributes a = (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul)
                             ? Attributes{ElementwiseAttributes{Activation::kRelu6}}
                             : Attributes{};
    {  // two activations of one shape
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input(full), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 1), Uniform(120, 2)});
    }
    {  // a per-channel constant [C] and a scalar constant
      GraphBuilder b;
      const int x = b.Input(full), t = b.Tensor(full), y = b.Tensor(full);
      b.Op(op, a, {x, b.Constant({6}, Uniform(6, 3))}, {t});
      b.Op(op, a, {b.Constant({1}, {0.75f}), t}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 4)});
    }
    {  // [1,H,W,C] x [1,1,1,C] activation
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input({1, 1, 1, 6}), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {Uniform(120, 5), Uniform(6, 6)});
    }
  }
}

TEST_P(GpuDelegateTest, PreluWithPerChannelAlpha) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 4, 5}), y = b.Tensor({1, 3, 4, 5});
  b.Op(OpKind::kPrelu, {}, {x, b.Constant({1, 1, 5}, Uniform(5, 9))}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {Uniform(60, 10)});
}

TEST_P(GpuDelegateTest, UnsupportedNodesSayWhy) {
  auto graph = ReadModelFile(mgd::testing::DataPath("models/face_detection_short_range.tflite"));
  ASSERT_TRUE(graph.ok());
  InterpreterOptions options;
  options.delegates.push_back(delegate_.get());
  auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  bool pad_reason = false;
  for (size_t n = 0; n < (*interpreter)->placements().size(); ++n) {
    if ((*interpreter)->graph().nodes[n].op == OpKind::kPad) {
      pad_reason = (*interpreter)->placements()[n].reason.find("no GPU shader for PAD") != std::string::npos;
    }
  }
  EXPECT_TRUE(pad_reason);
}

// Whole models, every supported node on the GPU: outputs within the fp32
// whole-model bounds.
TEST_P(GpuDelegateTest, TestModelsMatchLiteRt) {
  // pose_landmark_lite and palm_detection_lite also match (checked by hand),
  // but compiling their ~300 shaders cold takes minutes on a software GPU.
  for (const char* model : {"face_detection_short_range", "selfie_segmentation", "hand_landmark_lite", "face_landmark"}) {
    SCOPED_TRACE(model);
    auto graph = ReadModelFile(mgd::testing::DataPath(std::string("models/") + model + ".tflite"));
    ASSERT_TRUE(graph.ok());
    InterpreterOptions options;
    options.delegates.push_back(delegate_.get());
    auto interpreter = Interpreter::Create(std::move(*graph), std::move(options));
    ASSERT_TRUE(interpreter.ok()) << interpreter.status();
    ASSERT_FALSE((*interpreter)->partitions().empty());
    const std::string dir = mgd::testing::DataPath(std::string("reference/") + model + "/image/");
    const auto input = mgd::testing::ReadF32(dir + "input_0.f32");
    std::memcpy((*interpreter)->input(0).data, input.data(), (*interpreter)->input(0).bytes);
    const absl::Status invoked = (*interpreter)->Invoke();
    ASSERT_TRUE(invoked.ok()) << invoked;
    for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
      const TensorRef& out = (*interpreter)->output(k);
      const std::vector<float> actual(out.as<float>(), out.as<float>() + out.elements());
      const auto expected = mgd::testing::ReadF32(dir + "output_" + std::to_string(k) + ".f32");
      EXPECT_LE(mgd::testing::RelativeRms(actual, expected), 1e-5) << out.name;
      EXPECT_EQ(mgd::testing::FirstOutOfBounds(actual, expected, 1e-3, 1e-3), -1) << out.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothApis, GpuDelegateTest, ::testing::Values(gpu::Api::kVulkan, gpu::Api::kGles),
                         [](const ::testing::TestParamInfo<gpu::Api>& info) { return std::string(gpu::ApiName(info.param)); });

}  // namespace
}  // namespace mgd
