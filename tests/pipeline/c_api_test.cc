// The pipeline C API (include/mgd/pipeline.h): what a C app sees of a
// solution, rows with padding, the GPU delegate, and errors that are
// reported, not crashes.
#include "mgd/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mgd/gpu_delegate.h"
#include "pipeline/image.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

struct Reported {
  std::vector<std::string> messages;
  static void Report(void* self, const char* message) { static_cast<Reported*>(self)->messages.emplace_back(message); }
};

MgdPipeline* Create(const char* solution, Reported* reported, MgdDelegate* delegate = nullptr) {
  static const std::string models = testing::DataPath("models");
  MgdPipelineOptions o = MgdPipelineOptionsDefault();
  o.solution = solution;
  o.models_dir = models.c_str();
  o.delegate = delegate;
  o.reporter = Reported::Report;
  o.reporter_data = reported;
  return MgdPipelineCreate(&o);
}

TEST(PipelineCApiTest, HandsFromAFileAndFromPaddedRows) {
  Reported reported;
  MgdPipeline* p = Create("hands", &reported);
  ASSERT_NE(p, nullptr) << ::testing::PrintToString(reported.messages);
  const std::string path = testing::DataPath("images/hand.jpg");
  MgdPipelineResult* first = MgdPipelineProcessFile(p, path.c_str());
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(MgdPipelineResultDetectionCount(first), 1);
  EXPECT_EQ(MgdPipelineResultDetectorRan(first), 1);
  EXPECT_EQ(MgdPipelineResultSubmissions(first), 2);
  MgdPipelineDetection d;
  ASSERT_EQ(MgdPipelineResultGetDetection(first, 0, &d), kMgdOk);
  EXPECT_EQ(d.num_landmarks, 21);
  EXPECT_EQ(d.num_keypoints, 7);
  EXPECT_GT(d.score, 0.9f);
  EXPECT_THAT(std::string(d.label), ::testing::AnyOf("left", "right"));
  EXPECT_EQ(d.visibility, nullptr);
  int32_t w = -1, h = -1;
  EXPECT_EQ(MgdPipelineResultMask(first, &w, &h), nullptr);
  EXPECT_EQ(w, 0);
  const float wrist_x = d.landmarks[0], wrist_y = d.landmarks[1];

  // The same pixels as RGBA rows 3000 bytes apart, after a reset: the same hand.
  auto image = pipeline::ReadImage(path);
  ASSERT_TRUE(image.ok());
  const size_t row_bytes = 3000;
  std::vector<uint8_t> rgba(row_bytes * static_cast<size_t>(image->height), 77);
  for (int y = 0; y < image->height; ++y)
    for (int x = 0; x < image->width; ++x) {
      for (int c = 0; c < 3; ++c) rgba[row_bytes * y + 4 * x + c] = image->pixels[(static_cast<size_t>(y) * image->width + x) * 3 + c];
      rgba[row_bytes * y + 4 * x + 3] = 255;
    }
  ASSERT_EQ(MgdPipelineResetTracking(p), kMgdOk);
  MgdPipelineResult* padded = MgdPipelineProcess(p, rgba.data(), image->width, image->height, 4, row_bytes);
  ASSERT_NE(padded, nullptr);
  EXPECT_EQ(MgdPipelineResultDetectorRan(padded), 1);
  ASSERT_EQ(MgdPipelineResultGetDetection(padded, 0, &d), kMgdOk);
  EXPECT_NEAR(d.landmarks[0], wrist_x, 0.5f);
  EXPECT_NEAR(d.landmarks[1], wrist_y, 0.5f);
  EXPECT_GT(MgdPipelineResultInvokeMilliseconds(padded), 0.0);
  // The hand's skeleton: pairs of its 21 landmarks, the wrist among them.
  const int32_t* pairs = nullptr;
  const int32_t connections = MgdPipelineGetConnections(p, &pairs);
  ASSERT_GE(connections, 20);
  for (int32_t i = 0; i < 2 * connections; ++i) ASSERT_TRUE(pairs[i] >= 0 && pairs[i] < 21) << i;
  EXPECT_EQ(*std::min_element(pairs, pairs + 2 * connections), 0);
  MgdPipelineResultDelete(first);
  MgdPipelineResultDelete(padded);
  MgdPipelineDelete(p);
  EXPECT_TRUE(reported.messages.empty()) << ::testing::PrintToString(reported.messages);
}

TEST(PipelineCApiTest, SelfieMaskOnTheGpu) {
  Reported reported;
  MgdGpuDelegateOptions gpu_options = MgdGpuDelegateOptionsDefault();
  MgdDelegate* gpu = MgdGpuDelegateCreate(&gpu_options, Reported::Report, &reported);
  if (gpu == nullptr) GTEST_SKIP() << "no GPU";
  MgdPipeline* p = Create("selfie", &reported, gpu);
  ASSERT_NE(p, nullptr) << ::testing::PrintToString(reported.messages);
  const std::string path = testing::DataPath("images/astronaut.png");
  MgdPipelineResult* r = MgdPipelineProcessFile(p, path.c_str());
  ASSERT_NE(r, nullptr) << ::testing::PrintToString(reported.messages);
  EXPECT_EQ(MgdPipelineResultDetectionCount(r), 0);
  EXPECT_EQ(MgdPipelineResultSubmissions(r), 1);
  int32_t w = 0, h = 0;
  const float* mask = MgdPipelineResultMask(r, &w, &h);
  ASSERT_NE(mask, nullptr);
  ASSERT_EQ(w, 512);
  ASSERT_EQ(h, 512);
  EXPECT_GT(mask[300 * 512 + 200], 0.9f);  // the suit
  EXPECT_LT(mask[20 * 512 + 490], 0.1f);   // the wall, top right
  MgdPipelineResultDelete(r);
  MgdPipelineDelete(p);
  MgdGpuDelegateDelete(gpu);
}

// Image files as an app reads and saves frames: a PNG written and read back
// is the same image; bad files and bad images are reported.
TEST(PipelineCApiTest, ImagesAreReadAndWritten) {
  Reported reported;
  const std::string path = testing::DataPath("images/hand.jpg");
  MgdImage* image = MgdImageReadFile(path.c_str(), Reported::Report, &reported);
  ASSERT_NE(image, nullptr) << ::testing::PrintToString(reported.messages);
  auto expected = pipeline::ReadImage(path);
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(image->width, expected->width);
  ASSERT_EQ(image->height, expected->height);
  ASSERT_EQ(image->channels, 3);
  const std::string png = ::testing::TempDir() + "/c_api_image.png";
  ASSERT_EQ(MgdImageWritePng(image, png.c_str(), Reported::Report, &reported), kMgdOk);
  MgdImage* again = MgdImageReadFile(png.c_str(), Reported::Report, &reported);
  ASSERT_NE(again, nullptr);
  const size_t bytes = static_cast<size_t>(image->width) * image->height * 3;
  EXPECT_TRUE(std::equal(image->pixels, image->pixels + bytes, again->pixels));
  EXPECT_TRUE(std::equal(image->pixels, image->pixels + bytes, expected->pixels.begin()));
  EXPECT_EQ(MgdPipelineGetConnections(nullptr, nullptr), 0);

  EXPECT_EQ(MgdImageReadFile("/no/such.png", Reported::Report, &reported), nullptr);
  EXPECT_EQ(MgdImageReadFile(nullptr, Reported::Report, &reported), nullptr);
  MgdImage two_channels{4, 4, 2, again->pixels};
  EXPECT_EQ(MgdImageWritePng(&two_channels, png.c_str(), Reported::Report, &reported), kMgdError);
  EXPECT_EQ(MgdImageWritePng(again, "/no/such/folder/x.png", Reported::Report, &reported), kMgdError);
  ASSERT_EQ(reported.messages.size(), 4u);
  EXPECT_EQ(reported.messages[0], "MgdImageReadFile: /no/such.png: cannot open the image");
  EXPECT_EQ(reported.messages[1], "MgdImageReadFile: path is NULL");
  EXPECT_EQ(reported.messages[2], "MgdImageWritePng: an image of 4x4 pixels, 2 channels");
  EXPECT_THAT(reported.messages[3], ::testing::StartsWith("MgdImageWritePng: /no/such/folder/x.png"));
  MgdImageDelete(image);
  MgdImageDelete(again);
  MgdImageDelete(nullptr);
}

TEST(PipelineCApiTest, BadArgumentsAreReported) {
  Reported reported;
  EXPECT_EQ(Create("faces", &reported), nullptr);
  ASSERT_EQ(reported.messages.size(), 1u);
  EXPECT_THAT(reported.messages[0], ::testing::HasSubstr("MgdPipelineCreate: unknown solution 'faces'"));
  MgdPipelineOptions no_solution = MgdPipelineOptionsDefault();
  no_solution.solution = nullptr;
  no_solution.reporter = Reported::Report;
  no_solution.reporter_data = &reported;
  EXPECT_EQ(MgdPipelineCreate(&no_solution), nullptr);
  EXPECT_EQ(reported.messages.back(), "MgdPipelineCreate: options->solution is NULL");
  MgdDelegate bad{};
  EXPECT_EQ(Create("face", &reported, &bad), nullptr);
  EXPECT_THAT(reported.messages.back(), ::testing::StartsWith("MgdPipelineCreate: "));

  MgdPipeline* p = Create("face", &reported);
  ASSERT_NE(p, nullptr);
  reported.messages.clear();
  std::vector<uint8_t> pixels(64 * 64 * 3, 0);
  EXPECT_EQ(MgdPipelineProcess(p, nullptr, 64, 64, 3, 192), nullptr);
  EXPECT_EQ(MgdPipelineProcess(p, pixels.data(), 64, 64, 2, 192), nullptr);
  EXPECT_EQ(MgdPipelineProcess(p, pixels.data(), 64, 64, 3, 100), nullptr);
  EXPECT_EQ(MgdPipelineProcess(p, pixels.data(), 0, 64, 3, 192), nullptr);
  EXPECT_EQ(MgdPipelineProcess(p, pixels.data(), 1 << 20, 1, 3, 3 << 20), nullptr);
  EXPECT_EQ(MgdPipelineProcessFile(p, "/nonexistent.png"), nullptr);
  EXPECT_THAT(reported.messages,
              ::testing::ElementsAre("MgdPipelineProcess: pixels is NULL", "MgdPipelineProcess: 2 channels (3: RGB, 4: RGBA)",
                                     "MgdPipelineProcess: row_bytes 100 is less than a row's 192 bytes",
                                     "MgdPipelineProcess: an image of 0x64 pixels", "MgdPipelineProcess: an image of 1048576x1 pixels",
                                     "MgdPipelineProcessFile: /nonexistent.png: cannot open the image"));
  // Frames in GPU buffers: checked, and refused without a GPU delegate.
  reported.messages.clear();
  MgdGpuBuffer buffer{};
  buffer.type = kMgdGpuBufferVulkan;
  buffer.bytes = 64 * 64 * 3;
  buffer.layout = kMgdGpuLayoutBhwc;
  EXPECT_EQ(MgdPipelineProcessGpuBuffer(p, nullptr, 64, 64, 3), nullptr);
  buffer.type = static_cast<MgdGpuBufferType>(7);
  EXPECT_EQ(MgdPipelineProcessGpuBuffer(p, &buffer, 64, 64, 3), nullptr);
  buffer.type = kMgdGpuBufferVulkan;
  buffer.layout = kMgdGpuLayoutPhwc4;
  EXPECT_EQ(MgdPipelineProcessGpuBuffer(p, &buffer, 64, 64, 3), nullptr);
  buffer.layout = kMgdGpuLayoutBhwc;
  EXPECT_EQ(MgdPipelineProcessGpuBuffer(p, &buffer, 64, 64, 3), nullptr);
  EXPECT_THAT(reported.messages,
              ::testing::ElementsAre("MgdPipelineProcessGpuBuffer: buffer is NULL",
                                     "MgdPipelineProcessGpuBuffer: type 7 is not an MgdGpuBufferType",
                                     "MgdPipelineProcessGpuBuffer: an image's buffer is laid out as its rows (kMgdGpuLayoutBhwc)",
                                     "MgdPipelineProcessGpuBuffer: a frame in a GPU buffer needs the pipeline to run on a GPU delegate"));
  // A blank frame: nothing found, not an error.
  MgdPipelineResult* none = MgdPipelineProcess(p, pixels.data(), 64, 64, 3, 192);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(MgdPipelineResultDetectionCount(none), 0);
  MgdPipelineDetection d;
  EXPECT_EQ(MgdPipelineResultGetDetection(none, 0, &d), kMgdError);
  MgdPipelineResultDelete(none);
  MgdPipelineDelete(p);
  // NULLs everywhere are harmless.
  MgdPipelineDelete(nullptr);
  MgdPipelineResultDelete(nullptr);
  EXPECT_EQ(MgdPipelineResultDetectionCount(nullptr), 0);
  EXPECT_EQ(MgdPipelineResultMask(nullptr, nullptr, nullptr), nullptr);
  EXPECT_EQ(MgdPipelineResetTracking(nullptr), kMgdError);
}

}  // namespace
}  // namespace mgd
