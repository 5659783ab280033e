// Whole pipelines: mgd pipeline's face detection against MediaPipe's
// decoding written once here, independently of ops/pipeline (anchors,
// TensorsToDetections, weighted NMS, projection), on the CPU and on every
// GPU backend; and image files, good and bad.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "delegate/gpu_delegate.h"
#include "model/reader.h"
#include "pipeline/geometry.h"
#include "pipeline/image.h"
#include "pipeline/pipeline.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/test_util.h"

namespace mgd::pipeline {
namespace {

struct Face {
  float score, xmin, ymin, xmax, ymax;
  std::vector<float> keypoints;  // x0, y0, x1, y1, ...
};

// MediaPipe's face_detection_short_range.pbtxt, decoded as its
// calculators do, from the model's raw outputs [896 x 16] and [896].
std::vector<Face> MediaPipeFaces(const std::vector<float>& boxes, const std::vector<float>& scores) {
  // SsdAnchorsCalculator: strides 8, 16, 16, 16 at 128: 16x16x2 + 8x8x6 anchors of size 1 (fixed).
  std::vector<std::array<float, 2>> centers;
  const int grid[2] = {16, 8}, per_cell[2] = {2, 6};
  for (int layer = 0; layer < 2; ++layer)
    for (int y = 0; y < grid[layer]; ++y)
      for (int x = 0; x < grid[layer]; ++x)
        for (int k = 0; k < per_cell[layer]; ++k) {
          centers.push_back({(static_cast<float>(x) + 0.5f) / static_cast<float>(grid[layer]),
                             (static_cast<float>(y) + 0.5f) / static_cast<float>(grid[layer])});
        }
  EXPECT_EQ(centers.size(), 896u);
  std::vector<Face> faces;
  for (size_t i = 0; i < centers.size(); ++i) {
    const float* r = &boxes[i * 16];
    const float score = 1.0f / (1.0f + std::exp(-std::clamp(scores[i], -100.0f, 100.0f)));
    if (score < 0.5f) continue;
    const float cx = r[0] / 128 + centers[i][0], cy = r[1] / 128 + centers[i][1], w = r[2] / 128, h = r[3] / 128;
    Face f{score, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, {}};
    for (int k = 0; k < 6; ++k) {
      f.keypoints.push_back(r[4 + 2 * k] / 128 + centers[i][0]);
      f.keypoints.push_back(r[5 + 2 * k] / 128 + centers[i][1]);
    }
    faces.push_back(f);
  }
  std::stable_sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) { return a.score > b.score; });
  auto iou = [](const Face& a, const Face& b) {
    const float iw = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin), ih = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
    if (iw < 0 || ih < 0) return 0.0f;
    const float inter = iw * ih;
    return inter / ((a.xmax - a.xmin) * (a.ymax - a.ymin) + (b.xmax - b.xmin) * (b.ymax - b.ymin) - inter);
  };
  std::vector<Face> out;
  while (!faces.empty()) {
    const Face best = faces[0];
    std::vector<Face> rest;
    Face sum{best.score, 0, 0, 0, 0, std::vector<float>(12, 0.0f)};
    float total = 0;
    for (const Face& f : faces) {
      if (iou(f, best) > 0.3f) {
        total += f.score;
        sum.xmin += f.xmin * f.score;
        sum.ymin += f.ymin * f.score;
        sum.xmax += f.xmax * f.score;
        sum.ymax += f.ymax * f.score;
        for (int k = 0; k < 12; ++k) sum.keypoints[k] += f.keypoints[k] * f.score;
      } else {
        rest.push_back(f);
      }
    }
    sum.xmin /= total, sum.ymin /= total, sum.xmax /= total, sum.ymax /= total;
    for (float& v : sum.keypoints) v /= total;
    out.push_back(sum);
    faces = rest;
  }
  return out;
}

// A 512x512 photo fills the 128x128 tensor: normalized -> pixels is x 512.
Face InPixels(Face f, float size) {
  f.xmin *= size, f.ymin *= size, f.xmax *= size, f.ymax *= size;
  for (float& v : f.keypoints) v *= size;
  return f;
}

float Distance(const Face& expected, const Detection& d) {
  float worst = std::max({std::abs(d.box[0] - expected.xmin), std::abs(d.box[1] - expected.ymin),
                          std::abs(d.box[0] + d.box[2] - expected.xmax), std::abs(d.box[1] + d.box[3] - expected.ymax)});
  for (size_t k = 0; k < d.keypoints.size(); ++k) {
    worst = std::max({worst, std::abs(d.keypoints[k][0] - expected.keypoints[2 * k]),
                      std::abs(d.keypoints[k][1] - expected.keypoints[2 * k + 1])});
  }
  return worst;
}

std::string Models() { return testing::DataPath("models"); }
std::string Photo() { return testing::DataPath("images/astronaut.png"); }

// The model's own outputs on the pipeline's input tensor, from the
// pipeline's graph on the CPU with the model's outputs exposed too.
std::vector<Face> FacesFromPipelineInput(const Image& image) {
  auto spec = FindSolution("face");
  auto model = ReadModelFile(Models() + "/" + spec->detector->model_file);
  auto anchors = GenerateAnchors(spec->detector->anchors);
  EXPECT_TRUE(model.ok() && anchors.ok());
  auto graph = DetectorGraph(*model, *spec->detector, *anchors, image.width, image.height, image.channels);
  EXPECT_TRUE(graph.ok()) << graph.status();
  graph->outputs.insert(graph->outputs.end(), model->outputs.begin(), model->outputs.end());
  auto interpreter = Interpreter::Create(*graph, {});
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  std::memcpy((*interpreter)->input(0).data, image.pixels.data(), image.pixels.size());
  EXPECT_TRUE((*interpreter)->Invoke().ok());
  auto floats = [&](size_t k) {
    const TensorRef& t = (*interpreter)->output(k);
    return std::vector<float>(t.as<float>(), t.as<float>() + t.elements());
  };
  return MediaPipeFaces(floats(1), floats(2));
}

TEST(PipelineTest, FaceOnTheCpuIsMediaPipesDecodeOfTheModelsOutputs) {
  auto image = ReadImage(Photo());
  ASSERT_TRUE(image.ok()) << image.status();
  ASSERT_EQ(image->width, 512);
  const std::vector<Face> expected = FacesFromPipelineInput(*image);
  ASSERT_EQ(expected.size(), 1u);
  auto p = Pipeline::Create("face", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  auto result = (*p)->Process(*image);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->detections.size(), 1u);
  EXPECT_NEAR(result->detections[0].score, expected[0].score, 1e-5);
  EXPECT_LT(Distance(InPixels(expected[0], 512), result->detections[0]), 0.01);

  // LiteRT's outputs for the photo resized by PIL (a box filter where the
  // pipeline samples bilinearly): the same face within a few pixels.
  const std::string ref = testing::DataPath("reference/face_detection_short_range/image/");
  const std::vector<Face> litert = MediaPipeFaces(testing::ReadF32(ref + "output_0.f32"), testing::ReadF32(ref + "output_1.f32"));
  ASSERT_EQ(litert.size(), 1u);
  const float apart = Distance(InPixels(litert[0], 512), result->detections[0]);
  EXPECT_LT(apart, 4.0) << "pixels from LiteRT's";
  std::printf("face: %.2f px from the decode of LiteRT's outputs (its input resized by PIL)\n", apart);
}

// The GPU delegate of the test's backend, or null (the test then skips).
using PipelineGpuTest = testing::DelegateTest;

// Every node on the GPU in one partition, and the face within 1.5 pixels
// of the CPU decode of the model's outputs (fp16: the model's own fp16
// error moves the keypoints a little more).
TEST_P(PipelineGpuTest, FaceMatchesTheCpuInOneSubmission) {
  GpuDelegate* delegate = delegate_.get();
  auto image = ReadImage(Photo());
  ASSERT_TRUE(image.ok());
  const std::vector<Face> expected = FacesFromPipelineInput(*image);
  ASSERT_EQ(expected.size(), 1u);
  auto p = Pipeline::Create("face", {Models(), {delegate}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  for (int frame = 0; frame < 2; ++frame) {
    auto result = (*p)->Process(*image);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->detections.size(), 1u);
    EXPECT_NEAR(result->detections[0].score, expected[0].score, GetParam().fp16 ? 1e-2 : 1e-4);
    EXPECT_LT(Distance(InPixels(expected[0], 512), result->detections[0]), GetParam().fp16 ? 2.0 : 1.5);
  }
  const Interpreter* interpreter = (*p)->interpreter();
  EXPECT_EQ(interpreter->partitions().size(), 1u);
  for (size_t n = 0; n < interpreter->graph().nodes.size(); ++n) {
    EXPECT_NE(interpreter->placements()[n].where, NodePlacement::Where::kCpu)
        << NodeLabel(interpreter->graph(), static_cast<int>(n)) << ": " << interpreter->placements()[n].reason;
  }
}

// A letterboxed, RGBA frame: the face where it is in the wider image.
TEST_P(PipelineGpuTest, LetterboxedRgbaFrameFindsTheFaceInPlace) {
  GpuDelegate* delegate = delegate_.get();
  auto photo = ReadImage(Photo());
  ASSERT_TRUE(photo.ok());
  Image wide;
  wide.width = 600;
  wide.height = 512;
  wide.channels = 4;
  wide.pixels.assign(static_cast<size_t>(wide.width) * wide.height * 4, 255);
  const int left = 44;
  for (int y = 0; y < 512; ++y)
    for (int x = 0; x < 512; ++x)
      for (int c = 0; c < 3; ++c) {
        wide.pixels[(static_cast<size_t>(y) * wide.width + left + x) * 4 + c] = photo->pixels[(static_cast<size_t>(y) * 512 + x) * 3 + c];
      }
  auto cpu = Pipeline::Create("face", {Models(), {}, nullptr});
  auto gpu = Pipeline::Create("face", {Models(), {delegate}, nullptr});
  ASSERT_TRUE(cpu.ok() && gpu.ok());
  auto a = (*cpu)->Process(wide), b = (*gpu)->Process(wide), square = (*cpu)->Process(*photo);
  ASSERT_TRUE(a.ok() && b.ok() && square.ok());
  ASSERT_EQ(a->detections.size(), 1u);
  ASSERT_EQ(b->detections.size(), 1u);
  ASSERT_EQ(square->detections.size(), 1u);
  // The wide frame's tensor is letterboxed (600 wide -> 128, the face a
  // little smaller than in the square photo's): the same face, shifted.
  for (size_t k = 0; k < 4; ++k) {  // eyes, nose, mouth
    EXPECT_NEAR(a->detections[0].keypoints[k][0], square->detections[0].keypoints[k][0] + left, 8.0) << k;
    EXPECT_NEAR(a->detections[0].keypoints[k][1], square->detections[0].keypoints[k][1], 8.0) << k;
  }
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_NEAR(b->detections[0].keypoints[k][0], a->detections[0].keypoints[k][0], 2.0) << k;
    EXPECT_NEAR(b->detections[0].keypoints[k][1], a->detections[0].keypoints[k][1], 2.0) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PipelineGpuTest, ::testing::ValuesIn(testing::AllBackends()), testing::BackendName);

std::vector<uint8_t> FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(ImageFileTest, ReadsPngAndJpegAndRefusesBadFiles) {
  const std::vector<uint8_t> png = FileBytes(Photo());
  auto image = DecodeImage(png, "astronaut.png");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->channels, 3);
  // A JPEG of it decodes to nearly the same pixels.
  tjhandle tj = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long jpeg_size = 0;
  ASSERT_EQ(tjCompress2(tj, image->pixels.data(), 512, 0, 512, TJPF_RGB, &jpeg, &jpeg_size, TJSAMP_444, 95, 0), 0);
  std::vector<uint8_t> jpeg_bytes(jpeg, jpeg + jpeg_size);
  tjFree(jpeg);
  tjDestroy(tj);
  auto decoded = DecodeImage(jpeg_bytes, "astronaut.jpg");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->pixels.size(), image->pixels.size());
  double error = 0;
  for (size_t i = 0; i < image->pixels.size(); ++i) error += std::abs(decoded->pixels[i] - image->pixels[i]);
  EXPECT_LT(error / static_cast<double>(image->pixels.size()), 4.0);

  auto message = [](const absl::StatusOr<Image>& r) { return r.ok() ? std::string("ok") : std::string(r.status().message()); };
  EXPECT_EQ(message(DecodeImage({png.begin(), png.begin() + 2000}, "cut.png")),
            "cut.png: not a readable PNG (read beyond end of data)");
  EXPECT_THAT(message(DecodeImage({png.begin(), png.begin() + static_cast<long>(png.size() / 2)}, "half.png")),
              ::testing::StartsWith("half.png: the PNG is damaged"));
  EXPECT_THAT(message(DecodeImage({jpeg_bytes.begin(), jpeg_bytes.begin() + 100}, "cut.jpg")),
              ::testing::StartsWith("cut.jpg: "));
  EXPECT_EQ(message(DecodeImage({'G', 'I', 'F', '8', '9', 'a'}, "x.gif")), "x.gif: not a PNG or JPEG file (6 bytes)");
  EXPECT_EQ(message(DecodeImage({}, "empty.png")), "empty.png: not a PNG or JPEG file (0 bytes)");
  EXPECT_EQ(message(ReadImage("/nonexistent/x.png")), "/nonexistent/x.png: cannot open the image");
  // Too wide to take: refused by its header, before its pixels.
  Image wide{kMaxImageSide + 1, 1, 3, std::vector<uint8_t>(static_cast<size_t>(kMaxImageSide + 1) * 3, 7)};
  const std::string path = ::testing::TempDir() + "/wide.png";
  ASSERT_TRUE(WritePng(wide, path).ok());
  EXPECT_THAT(message(ReadImage(path)), ::testing::HasSubstr("the image is 16385x1, larger than mgd takes"));
  // A 0x0 PNG header is refused by libpng itself.
  std::vector<uint8_t> zero = png;
  std::fill(zero.begin() + 16, zero.begin() + 24, 0);
  EXPECT_THAT(message(DecodeImage(zero, "zero.png")), ::testing::StartsWith("zero.png: not a readable PNG"));
}

TEST(PipelineTest, UnknownSolutionAndMissingModelAreClearErrors) {
  auto unknown = Pipeline::Create("faces", {Models(), {}, nullptr});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown solution 'faces' (one of: face, face_full_range, face_mesh, hands, pose, selfie)");
  auto missing = Pipeline::Create("face", {"/nonexistent", {}, nullptr});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), ::testing::HasSubstr("/nonexistent/face_detection_short_range.tflite"));
}

TEST(PipelineTest, FullRangeFindsTheFace) {
  auto p = Pipeline::Create("face_full_range", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  auto image = ReadImage(Photo());
  auto result = (*p)->Process(*image);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->detections.size(), 1u);
  auto short_range = Pipeline::Create("face", {Models(), {}, nullptr});
  auto near = (*short_range)->Process(*image);
  for (size_t k = 0; k < 4; ++k) {  // eyes, nose, mouth (the two models place the ears differently)
    EXPECT_NEAR(result->detections[0].keypoints[k][0], near->detections[0].keypoints[k][0], 8.0) << k;
    EXPECT_NEAR(result->detections[0].keypoints[k][1], near->detections[0].keypoints[k][1], 8.0) << k;
  }
}

// Images of many sizes (a gallery) keep at most kMaxPrepared graphs, the
// least recently used dropped; a size seen again is prepared again and gives
// the same answer.
TEST(PipelineTest, GraphsOfManySizesAreBounded) {
  auto p = Pipeline::Create("face", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  auto photo = ReadImage(Photo());
  ASSERT_TRUE(photo.ok()) << photo.status();
  auto first = (*p)->Process(*photo);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->detections.size(), 1u);
  for (int i = 0; i < static_cast<int>(Pipeline::kMaxPrepared) + 3; ++i) {
    const Image gray{40 + i, 30 + 2 * i, 3, std::vector<uint8_t>(static_cast<size_t>(40 + i) * (30 + 2 * i) * 3, 128)};
    auto r = (*p)->Process(gray);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LE((*p)->prepared_graphs(), Pipeline::kMaxPrepared);
    ASSERT_NE((*p)->interpreter(), nullptr);
    EXPECT_EQ((*p)->interpreter()->graph().tensors[(*p)->interpreter()->graph().inputs[0]].shape[2], 40 + i);
  }
  EXPECT_EQ((*p)->prepared_graphs(), Pipeline::kMaxPrepared);
  auto again = (*p)->Process(*photo);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->detections.size(), 1u);
  EXPECT_EQ(again->detections[0].box, first->detections[0].box);
  EXPECT_EQ((*p)->prepared_graphs(), Pipeline::kMaxPrepared);
}

double MeanDistance(const Detection& a, const Detection& b) {
  double sum = 0;
  for (size_t i = 0; i < a.landmarks.size(); ++i) {
    sum += std::hypot(a.landmarks[i][0] - b.landmarks[i][0], a.landmarks[i][1] - b.landmarks[i][1]);
  }
  return sum / static_cast<double>(a.landmarks.size());
}

// The first frame runs the detector and the landmark model (two
// submissions); the next frame of the same scene only the landmark model on
// the crop the first frame's landmarks give (one), and finds the same mesh.
TEST(FaceMeshTest, TracksFromFrameToFrame) {
  auto image = ReadImage(Photo());
  auto p = Pipeline::Create("face_mesh", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  auto first = (*p)->Process(*image);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->detector_ran);
  EXPECT_EQ(first->submissions, 2);
  ASSERT_EQ(first->detections.size(), 1u);
  const Detection& face = first->detections[0];
  ASSERT_EQ(face.landmarks.size(), 478u);  // 468 mesh points (lips and eyes refined) and two irises of 5
  ASSERT_EQ(face.keypoints.size(), 6u);
  // The mesh's eye corners (33, 133: right eye) around the detector's right eye.
  const float eye_x = (face.landmarks[33][0] + face.landmarks[133][0]) / 2, eye_y = (face.landmarks[33][1] + face.landmarks[133][1]) / 2;
  EXPECT_NEAR(eye_x, face.keypoints[0][0], 6.0);
  EXPECT_NEAR(eye_y, face.keypoints[0][1], 6.0);
  // The right iris's centre (the first of 468..472) between those corners,
  // at the mean depth of the eye's 16 contour points (LandmarksRefinement).
  EXPECT_NEAR(face.landmarks[468][0], eye_x, 6.0);
  float contour_z = 0;
  for (int i : {33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173}) contour_z += face.landmarks[i][2];
  EXPECT_FLOAT_EQ(face.landmarks[470][2], contour_z / 16);
  // The refined inner lips (13 upper, 14 lower) at the detector's mouth
  // centre, between the mouth's corners (78, 308).
  EXPECT_NEAR((face.landmarks[13][1] + face.landmarks[14][1]) / 2, face.keypoints[3][1], 6.0);
  EXPECT_GT(face.landmarks[13][0], std::min(face.landmarks[78][0], face.landmarks[308][0]));
  EXPECT_LT(face.landmarks[13][0], std::max(face.landmarks[78][0], face.landmarks[308][0]));
  auto second = (*p)->Process(*image);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->detector_ran);
  EXPECT_EQ(second->submissions, 1);
  ASSERT_EQ(second->detections.size(), 1u);
  const double moved = MeanDistance(second->detections[0], face);
  std::printf("face mesh: tracked frame within %.2f px (mean) of the detected one\n", moved);
  EXPECT_LT(moved, 2.0);
  // A frame without the face: the tracked crop loses it, the detector finds none.
  Image blank{image->width, image->height, 3, std::vector<uint8_t>(image->pixels.size(), 128)};
  auto lost = (*p)->Process(blank);
  ASSERT_TRUE(lost.ok());
  EXPECT_TRUE(lost->detections.empty());
  EXPECT_TRUE(lost->detector_ran);
}

using FaceMeshGpuTest = testing::DelegateTest;

// Both stages wholly on the GPU; the mesh where the CPU puts it.
TEST_P(FaceMeshGpuTest, MatchesTheCpu) {
  GpuDelegate* delegate = delegate_.get();
  auto image = ReadImage(Photo());
  auto cpu = Pipeline::Create("face_mesh", {Models(), {}, nullptr});
  auto gpu = Pipeline::Create("face_mesh", {Models(), {delegate}, nullptr});
  ASSERT_TRUE(cpu.ok() && gpu.ok());
  for (int frame = 0; frame < 2; ++frame) {
    auto a = (*cpu)->Process(*image), b = (*gpu)->Process(*image);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    ASSERT_EQ(a->detections.size(), 1u);
    ASSERT_EQ(b->detections.size(), 1u);
    EXPECT_EQ(b->submissions, frame == 0 ? 2 : 1);
    const double apart = MeanDistance(b->detections[0], a->detections[0]);
    std::printf("face mesh frame %d: GPU within %.3f px (mean) of the CPU\n", frame, apart);
    EXPECT_LT(apart, GetParam().fp16 ? 1.0 : 0.05);
  }
  for (const Interpreter* interpreter : {(*gpu)->interpreter(), (*gpu)->landmark_interpreter()}) {
    ASSERT_NE(interpreter, nullptr);
    EXPECT_EQ(interpreter->partitions().size(), 1u);
    for (size_t n = 0; n < interpreter->graph().nodes.size(); ++n) {
      EXPECT_NE(interpreter->placements()[n].where, NodePlacement::Where::kCpu)
          << NodeLabel(interpreter->graph(), static_cast<int>(n)) << ": " << interpreter->placements()[n].reason;
    }
  }
}

// The landmark model's 200 shaders cost a cold llvmpipe 10-40 s per
// configuration: two of the four (each op is checked on all four).
INSTANTIATE_TEST_SUITE_P(Backends, FaceMeshGpuTest,
                         ::testing::Values(testing::Backend{gpu::Api::kVulkan, false}, testing::Backend{gpu::Api::kGles, true}),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::pipeline
