// A frame already in an app's GPU buffer (Pipeline::Process(GpuImage)):
// every stage binds it to its image input instead of uploading pixels, and
// finds what the same pixels from host memory give; host frames after it
// unbind again. Vulkan (a VkBuffer of the delegate's device) and GLES (a
// buffer of a context sharing the delegate's), fp32 and fp16.
#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/image.h"
#include "pipeline/pipeline.h"
#include "tests/delegate/app_gpu.h"
#include "tests/delegate/delegate_fixture.h"

namespace mgd::pipeline {
namespace {

using GpuFrameTest = testing::DelegateTest;

void ExpectSame(const Result& a, const Result& b) {
  EXPECT_EQ(a.submissions, b.submissions);
  ASSERT_EQ(a.detections.size(), b.detections.size());
  for (size_t k = 0; k < a.detections.size(); ++k) {
    ASSERT_EQ(a.detections[k].landmarks.size(), b.detections[k].landmarks.size());
    for (size_t i = 0; i < a.detections[k].landmarks.size(); ++i) {
      EXPECT_NEAR(a.detections[k].landmarks[i][0], b.detections[k].landmarks[i][0], 1e-3) << i;
      EXPECT_NEAR(a.detections[k].landmarks[i][1], b.detections[k].landmarks[i][1], 1e-3) << i;
    }
  }
  ASSERT_EQ(a.mask.has_value(), b.mask.has_value());
  if (a.mask) {
    EXPECT_EQ(a.mask->values, b.mask->values);
  }
}

TEST_P(GpuFrameTest, BoundFrameGivesTheHostFramesResult) {
  auto image = ReadImage(testing::DataPath("images/football.jpg"));
  ASSERT_TRUE(image.ok()) << image.status();
  const PipelineOptions options{testing::DataPath("models"), {delegate_.get()}, nullptr};
  auto host = Pipeline::Create("pose", options);
  auto bound = Pipeline::Create("pose", options);
  ASSERT_TRUE(host.ok() && bound.ok());
  const size_t bytes = (image->pixels.size() + 3) / 4 * 4;
  std::vector<uint8_t> padded(image->pixels);
  padded.resize(bytes, 0);
  auto run = [&](const GpuBuffer& buffer) {
    const GpuImage frame{image->width, image->height, image->channels, buffer};
    for (int f = 0; f < 2; ++f) {  // detected, then tracked
      auto expected = (*host)->Process(*image);
      auto actual = (*bound)->Process(frame);
      ASSERT_TRUE(expected.ok()) << expected.status();
      ASSERT_TRUE(actual.ok()) << actual.status();
      ASSERT_EQ(actual->detections.size(), 1u);
      EXPECT_EQ(actual->detector_ran, f == 0);
      ExpectSame(*actual, *expected);
    }
    // From host memory again: the binding is undone, the same body found.
    (*bound)->ResetTracking();
    (*host)->ResetTracking();
    auto expected = (*host)->Process(*image);
    auto again = (*bound)->Process(*image);
    ASSERT_TRUE(expected.ok() && again.ok());
    ExpectSame(*again, *expected);
  };
  if (GetParam().api == gpu::Api::kVulkan) {
    testing::AppVkBuffer buffer(delegate_->device().interop(), bytes);
    std::memcpy(buffer.data(), padded.data(), bytes);
    run(buffer.AsGpuBuffer());
  } else {
    testing::AppGlContext app(delegate_->device().interop());
    GpuBuffer b;
    b.type = GpuBuffer::Type::kGlBuffer;
    b.handle = app.Buffer(bytes, padded.data());
    b.bytes = bytes;
    glFinish();  // the buffer exists for mgd's context too
    run(b);
  }
}

TEST_P(GpuFrameTest, TooSmallABufferIsAClearError) {
  auto p = Pipeline::Create("selfie", {testing::DataPath("models"), {delegate_.get()}, nullptr});
  ASSERT_TRUE(p.ok());
  GpuBuffer b;
  b.type = GetParam().api == gpu::Api::kVulkan ? GpuBuffer::Type::kVulkanBuffer : GpuBuffer::Type::kGlBuffer;
  b.handle = 1;
  b.bytes = 16;
  auto r = (*p)->Process(GpuImage{64, 64, 3, b});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "binding a GPU buffer to tensor 360 'image': the buffer holds 16 bytes; input 0 in BHWC needs 12288 (the "
            "tensor's elements as they are, rounded up to 4 bytes)");
  auto cpu = Pipeline::Create("selfie", {testing::DataPath("models"), {}, nullptr});
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->Process(GpuImage{64, 64, 3, b}).status().message(),
            "a frame in a GPU buffer needs the pipeline to run on a GPU delegate");
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuFrameTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

}  // namespace
}  // namespace mgd::pipeline
