// What the GPU interface tests share: shader text in both dialects, small
// parameter blocks, and the fixture with a device per API.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>

#include "backends/gpu/gpu.h"
#include "tests/test_util.h"

namespace mgd::gpu {


// The same shader text in both dialects: PARAMS declares the small parameter
// block (push constants on Vulkan, a std140 uniform block on GL).
inline std::string Glsl(Api api, const std::string& body) {
  const std::string prelude = api == Api::kVulkan
                                  ? "#version 450\n#define PARAMS layout(push_constant) uniform\n"
                                  : "#version 310 es\nprecision highp float;\nprecision highp int;\n"
                                    "#define PARAMS layout(std140, binding = 0) uniform\n";
  return prelude + body;
}

// y[i] = x[i] * scale + float(i)
const char* const kAffine = R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
PARAMS Params { uint n; float scale; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n) y[i] = x[i] * p.scale + float(i);
}
)";

// v[i] += 1 in place.
const char* const kIncrement = R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer V { float v[]; };
PARAMS Params { uint n; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n) v[i] += 1.0;
}
)";

// The bytes of a parameter block of 4-byte scalars.
template <typename... T>
inline std::vector<uint8_t> Params(T... values) {
  static_assert(((sizeof(T) == 4) && ...));
  std::vector<uint8_t> bytes(4 * sizeof...(T));
  size_t offset = 0;
  ((std::memcpy(bytes.data() + offset, &values, 4), offset += 4), ...);
  return bytes;
}

class GpuTest : public ::testing::TestWithParam<Api> {
 protected:
  void SetUp() override {
    auto devices = ListDevices(api());
    ASSERT_TRUE(devices.ok()) << devices.status();
    if (devices->empty()) {
      if (mgd::testing::GpuBackendsRequired()) FAIL() << ApiName(api()) << ": no device, and MGD_REQUIRE_GPU_BACKENDS=1";
      GTEST_SKIP() << ApiName(api()) << ": no device on this machine";
    }
    device_ = Open();
    ASSERT_NE(device_, nullptr) << "no device to test on (its error above)";  // the test body would dereference it
  }

  void TearDown() override {
    if (device_ != nullptr) {
      EXPECT_THAT(device_->validation_messages(), ::testing::IsEmpty());
    }
  }

  std::unique_ptr<Device> Open(bool clamp = false, WaitMode wait = WaitMode::kAuto) {
    DeviceOptions options;
    options.validation = true;
    options.clamp_limits = clamp;
    options.wait = wait;
    auto device = CreateDevice(api(), options);
    EXPECT_TRUE(device.ok()) << device.status();
    return device.ok() ? std::move(*device) : nullptr;
  }

  Api api() const { return GetParam(); }

  std::unique_ptr<Program> MakeProgram(Device& device, const std::string& name, const char* body, uint32_t bindings,
                                       uint32_t push_bytes) {
    auto program = device.CreateProgram({name, Glsl(api(), body), bindings, push_bytes, 0});
    EXPECT_TRUE(program.ok()) << program.status();
    return program.ok() ? std::move(*program) : nullptr;
  }

  std::unique_ptr<Buffer> MakeBuffer(Device& device, const std::vector<float>& values, Device::Use use = Device::Use::kDevice) {
    auto buffer = device.CreateBuffer(values.size() * sizeof(float), use);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    EXPECT_TRUE(device.Upload(**buffer, values.data(), values.size() * sizeof(float)).ok());
    return std::move(*buffer);
  }

  std::vector<float> Read(Device& device, const Buffer& buffer) {
    std::vector<float> values(buffer.size() / sizeof(float));
    EXPECT_TRUE(device.Download(buffer, values.data(), values.size() * sizeof(float)).ok());
    return values;
  }

  // Runs y = x * scale + i on `device` (with `given`, or a program built
  // here) and checks the result exactly.
  void CheckAffine(Device& device, uint32_t n, float scale, Program* given = nullptr) {
    std::unique_ptr<Program> made = given ? nullptr : MakeProgram(device, "affine", kAffine, 2, 8);
    Program* program = given ? given : made.get();
    ASSERT_NE(program, nullptr);
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) - 40.0f;
    auto bx = MakeBuffer(device, x);
    auto by = MakeBuffer(device, std::vector<float>(n, -1.0f));
    Dispatch d{program, {{bx.get(), Access::kRead}, {by.get(), Access::kWrite}}, Params(n, scale),
               {(n + 63) / 64, 1, 1}};
    auto recording = device.Record({d});
    ASSERT_TRUE(recording.ok()) << recording.status();
    ASSERT_TRUE(device.Run(**recording).ok());
    const std::vector<float> y = Read(device, *by);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * scale + static_cast<float>(i)) << "element " << i;
  }

  std::unique_ptr<Device> device_;
};

}  // namespace mgd::gpu
