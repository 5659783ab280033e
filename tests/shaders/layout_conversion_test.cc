// The BHWC <-> PHWC4 conversion shaders on both APIs (lavapipe/llvmpipe in
// CI, with Vulkan validation), bit-exact against the CPU conversion, in the
// clamped-limits mode a phone would impose; bool bytes to 0.0/1.0 and back.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "backends/gpu/gpu.h"
#include "layout/phwc4.h"
#include "shaders/layout_conversion.h"
#include "tests/test_util.h"

namespace mgd::shaders {
namespace {

using gpu::Access;

Dialect DialectOf(gpu::Api api) { return api == gpu::Api::kVulkan ? Dialect::kVulkan : Dialect::kGles; }

class LayoutConversionTest : public ::testing::TestWithParam<gpu::Api> {
 protected:
  void SetUp() override {
    auto devices = gpu::ListDevices(GetParam());
    ASSERT_TRUE(devices.ok());
    if (devices->empty()) {
      if (mgd::testing::GpuBackendsRequired()) FAIL() << "no device";
      GTEST_SKIP() << "no device";
    }
    gpu::DeviceOptions options;
    options.validation = true;
    options.clamp_limits = true;  // what a phone allows
    auto device = gpu::CreateDevice(GetParam(), options);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }
  void TearDown() override {
    if (device_) {
      EXPECT_TRUE(device_->validation_messages().empty());
    }
  }

  // Runs one conversion shader from `in` (uploaded) to a buffer of `out_bytes`
  // pre-filled with a garbage pattern, and returns what it holds after.
  std::vector<float> Convert(const ConversionShader& shader, const std::vector<float>& in, size_t out_floats) {
    auto program = device_->CreateProgram(
        {shader.code.name, Emit(DialectOf(GetParam()), shader.code), 2, ParamsBytes(shader.code), 0});
    EXPECT_TRUE(program.ok()) << program.status();
    if (!program.ok()) return {};
    auto src = device_->CreateBuffer(in.size() * 4);
    auto dst = device_->CreateBuffer(out_floats * 4);
    EXPECT_TRUE(src.ok() && dst.ok());
    EXPECT_TRUE(device_->Upload(**src, in.data(), in.size() * 4).ok());
    const std::vector<float> garbage(out_floats, 12345.0f);
    EXPECT_TRUE(device_->Upload(**dst, garbage.data(), out_floats * 4).ok());
    auto recording = device_->Record({{program->get(), {{src->get(), Access::kRead}, {dst->get(), Access::kWrite}}, {}, shader.groups}});
    EXPECT_TRUE(recording.ok()) << recording.status();
    EXPECT_TRUE(device_->Run(**recording).ok());
    std::vector<float> out(out_floats);
    EXPECT_TRUE(device_->Download(**dst, out.data(), out_floats * 4).ok());
    return out;
  }

  std::unique_ptr<gpu::Device> device_;
};

TEST_P(LayoutConversionTest, MatchesTheCpuConversionForEveryChannelCount) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int channels = 1; channels <= 17; ++channels) {
    const layout::Bhwc shape{2, 3, 5, channels};
    std::vector<float> bhwc(shape.elements());
    for (float& v : bhwc) v = dist(rng);
    std::vector<float> expected(shape.phwc4_elements());
    layout::BhwcToPhwc4(bhwc.data(), shape, expected.data());
    const std::vector<float> phwc4 = Convert(BhwcToPhwc4Shader(shape), bhwc, shape.phwc4_elements());
    ASSERT_EQ(phwc4, expected) << "channels " << channels;  // padding included: zeros
    const std::vector<float> back = Convert(Phwc4ToBhwcShader(shape), phwc4, shape.elements());
    ASSERT_EQ(back, bhwc) << "channels " << channels;
  }
}

TEST_P(LayoutConversionTest, BoolsRoundTripForEveryChannelCount) {
  std::mt19937 rng(6);
  for (int channels = 1; channels <= 9; ++channels) {
    const layout::Bhwc shape{2, 3, 5, channels};
    // Bytes 0..3, any nonzero one true, in words as the GPU reads them.
    std::vector<uint8_t> bytes(static_cast<size_t>(shape.elements()));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng() % 4);
    std::vector<float> words((bytes.size() + 3) / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    std::vector<float> truths(bytes.size()), expected(shape.phwc4_elements());
    for (size_t i = 0; i < bytes.size(); ++i) truths[i] = bytes[i] != 0 ? 1.0f : 0.0f;
    layout::BhwcToPhwc4(truths.data(), shape, expected.data());
    const std::vector<float> phwc4 = Convert(BoolBhwcToPhwc4Shader(shape), words, shape.phwc4_elements());
    ASSERT_EQ(phwc4, expected) << "channels " << channels;
    const std::vector<float> back = Convert(Phwc4ToBoolBhwcShader(shape), phwc4, words.size());
    std::vector<uint8_t> back_bytes(words.size() * 4), expected_bytes(words.size() * 4, 0);
    std::memcpy(back_bytes.data(), back.data(), back_bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) expected_bytes[i] = bytes[i] != 0;
    ASSERT_EQ(back_bytes, expected_bytes) << "channels " << channels;  // the last word's spare bytes: zeros
  }
}

TEST_P(LayoutConversionTest, LargeImageInOneDispatch) {
  const layout::Bhwc shape{1, 129, 67, 3};  // sizes that do not divide the workgroup
  std::vector<float> bhwc(shape.elements());
  for (size_t i = 0; i < bhwc.size(); ++i) bhwc[i] = static_cast<float>(i);
  std::vector<float> expected(shape.phwc4_elements());
  layout::BhwcToPhwc4(bhwc.data(), shape, expected.data());
  EXPECT_EQ(Convert(BhwcToPhwc4Shader(shape), bhwc, shape.phwc4_elements()), expected);
}

INSTANTIATE_TEST_SUITE_P(BothApis, LayoutConversionTest, ::testing::Values(gpu::Api::kVulkan, gpu::Api::kGles),
                         [](const ::testing::TestParamInfo<gpu::Api>& info) { return std::string(gpu::ApiName(info.param)); });

}  // namespace
}  // namespace mgd::shaders
