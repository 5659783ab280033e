// Hands, pose and selfie segmentation end to end: the crop geometry against
// hand-worked cases, what each solution finds on a photo that shows it,
// tracking from frame to frame, and the GPU against the CPU on every
// backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <ostream>

#include "delegate/gpu_delegate.h"
#include "model/reader.h"
#include "pipeline/geometry.h"
#include "pipeline/graphs.h"
#include "pipeline/image.h"
#include "pipeline/pipeline.h"
#include "tests/delegate/delegate_fixture.h"
#include "tests/test_util.h"

namespace mgd::pipeline {
namespace {

constexpr float kPi = 3.14159265358979f;

std::string Models() { return testing::DataPath("models"); }
Image Read(const std::string& name) {
  auto image = ReadImage(testing::DataPath("images/" + name));
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *image : Image{};
}

// --- geometry ---

TEST(RoiRuleTest, DetectorBoxShiftedSquaredAndScaled) {
  // A palm pointing up (wrist below the middle finger): no rotation; moved
  // up by half its height, squared to 40 and scaled by 2.6.
  RoiRule rule;
  rule.start = {{0, 1.0f}};
  rule.end = {{1, 1.0f}};
  rule.target_degrees = 90.0f;
  rule.shift_y = -0.5f;
  rule.scale = 2.6f;
  const std::array<float, 4> box{100, 100, 40, 20};
  const Roi roi = RoiFromPoints(rule, {{120, 130}, {120, 90}}, &box);
  EXPECT_NEAR(roi.rotation, 0.0f, 1e-6);
  EXPECT_NEAR(roi.center_x, 120.0f, 1e-4);
  EXPECT_NEAR(roi.center_y, 100.0f, 1e-4);
  EXPECT_NEAR(roi.width, 104.0f, 1e-4);
  EXPECT_NEAR(roi.height, 104.0f, 1e-4);
  // Pointing right: turned a quarter, and "up" in the crop is right on
  // screen, so the shift moves it right.
  const Roi turned = RoiFromPoints(rule, {{100, 110}, {140, 110}}, &box);
  EXPECT_NEAR(turned.rotation, kPi / 2, 1e-6);
  EXPECT_NEAR(turned.center_x, 130.0f, 1e-4);
  EXPECT_NEAR(turned.center_y, 110.0f, 1e-4);
}

TEST(RoiRuleTest, RotatedBoxRecoversATurnedRectangle) {
  // The corners of a 40 x 20 rectangle turned 30 degrees clockwise about
  // (50, 60), and the midpoints of its short sides (its own x axis).
  const float r = kPi / 6, c = std::cos(r), s = std::sin(r);
  auto at = [&](float u, float v) { return Point{50 + u * c - v * s, 60 + u * s + v * c}; };
  std::vector<Point> points{at(-20, -10), at(20, -10), at(20, 10), at(-20, 10), at(-20, 0), at(20, 0)};
  RoiRule rule;
  rule.extent = RoiRule::Extent::kRotatedBox;
  rule.start = {{4, 1.0f}};
  rule.end = {{5, 1.0f}};
  rule.square_long = false;
  const Roi roi = RoiFromPoints(rule, points);
  EXPECT_NEAR(roi.rotation, r, 1e-5);
  EXPECT_NEAR(roi.center_x, 50.0f, 1e-3);
  EXPECT_NEAR(roi.center_y, 60.0f, 1e-3);
  EXPECT_NEAR(roi.width, 40.0f, 1e-3);
  EXPECT_NEAR(roi.height, 20.0f, 1e-3);
  // The axis-aligned box of the same points is larger.
  rule.extent = RoiRule::Extent::kBox;
  const Roi axis_aligned = RoiFromPoints(rule, points);
  EXPECT_NEAR(axis_aligned.width, 40 * c + 20 * s, 1e-3);
  EXPECT_NEAR(axis_aligned.height, 40 * s + 20 * c, 1e-3);
}

TEST(RoiRuleTest, AlignmentPointsGiveCentreAndSize) {
  // Pose: centred on the hips, twice the distance to the scale point.
  RoiRule rule;
  rule.extent = RoiRule::Extent::kAlignment;
  rule.start = {{0, 1.0f}};
  rule.end = {{1, 1.0f}};
  rule.target_degrees = 90.0f;
  rule.scale = 1.25f;
  const Roi roi = RoiFromPoints(rule, {{100, 100}, {130, 60}});
  EXPECT_NEAR(roi.center_x, 100.0f, 1e-4);
  EXPECT_NEAR(roi.center_y, 100.0f, 1e-4);
  EXPECT_NEAR(roi.width, 125.0f, 1e-3);  // 2 x 50 x 1.25
  EXPECT_NEAR(roi.rotation, kPi / 2 - std::atan2(40.0f, 30.0f), 1e-5);
  // Weighted means: the middle of two points.
  rule.end = {{1, 0.5f}, {2, 0.5f}};
  const Roi mid = RoiFromPoints(rule, {{100, 100}, {130, 60}, {70, 60}});
  EXPECT_NEAR(mid.rotation, 0.0f, 1e-6);
  EXPECT_NEAR(mid.width, 100.0f, 1e-3);
}

TEST(RoiRuleTest, OverlapAndInverseCrop) {
  const Roi a{50, 50, 20, 20, 0}, b{60, 50, 20, 20, 0.3f}, far{200, 50, 20, 20, 0};
  EXPECT_NEAR(RoiOverlap(a, a), 1.0f, 1e-6);
  EXPECT_NEAR(RoiOverlap(a, b), 1.0f / 3.0f, 1e-6);  // rotation ignored
  EXPECT_EQ(RoiOverlap(a, far), 0.0f);
  const Roi roi{120, 80, 60, 40, 0.7f};
  const Matrix4 crop = CropMatrix(roi, 32, 16), back = InverseCropMatrix(roi, 32, 16);
  for (const Point& p : std::vector<Point>{{0, 0}, {31, 15}, {7.5f, 3.25f}}) {
    const float ix = crop[0] * p[0] + crop[1] * p[1] + crop[3], iy = crop[4] * p[0] + crop[5] * p[1] + crop[7];
    EXPECT_NEAR(back[0] * ix + back[1] * iy + back[3], p[0], 1e-3);
    EXPECT_NEAR(back[4] * ix + back[5] * iy + back[7], p[1], 1e-3);
  }
}

// A landmark model with fewer landmarks than the solution reads is refused
// when the graph is built.
TEST(LandmarkGraphTest, RefusesAModelWithTooFewLandmarks) {
  auto spec = FindSolution("hands");
  ASSERT_TRUE(spec.ok());
  auto model = ReadModelFile(Models() + "/hand_landmark_lite.tflite");
  ASSERT_TRUE(model.ok());
  ASSERT_TRUE(LandmarkGraph(*model, *spec->landmarks, 64, 48, 3, 2).ok());
  spec->landmarks->from_landmarks.end = {{21, 1.0f}};
  auto graph = LandmarkGraph(*model, *spec->landmarks, 64, 48, 3);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().message(), "the landmark model's 'Identity' holds 21 landmarks; the solution reads landmark 21");
}

// --- solutions on the CPU ---

// The open hand, and beside it its mirror image: a left and a right hand.
Image TwoHands() {
  const Image hand = Read("hand.jpg");
  Image two{hand.width * 2, hand.height, 3, {}};
  two.pixels.resize(static_cast<size_t>(two.width) * two.height * 3);
  for (int y = 0; y < hand.height; ++y)
    for (int x = 0; x < hand.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const uint8_t v = hand.pixels[(static_cast<size_t>(y) * hand.width + x) * 3 + c];
        two.pixels[(static_cast<size_t>(y) * two.width + x) * 3 + c] = v;
        two.pixels[(static_cast<size_t>(y) * two.width + (two.width - 1 - x)) * 3 + c] = v;
      }
  return two;
}

TEST(HandsTest, FindsTheHandAndItsFingers) {
  auto p = Pipeline::Create("hands", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  const Image image = Read("hand.jpg");
  auto first = (*p)->Process(image);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->detections.size(), 1u);
  const Detection& hand = first->detections[0];
  ASSERT_EQ(hand.landmarks.size(), 21u);
  ASSERT_EQ(hand.keypoints.size(), 7u);
  EXPECT_GT(hand.score, 0.9f);
  EXPECT_FALSE(hand.label.empty());
  // The hand lies with its fingers to the right: every fingertip (4, 8, 12,
  // 16, 20) right of the wrist; the palm detector's wrist and middle
  // finger's MCP where the landmark model puts them.
  for (int tip : {8, 12, 16, 20}) EXPECT_GT(hand.landmarks[tip][0], hand.landmarks[0][0] + 150) << tip;
  EXPECT_LT(std::hypot(hand.landmarks[0][0] - hand.keypoints[0][0], hand.landmarks[0][1] - hand.keypoints[0][1]), 25.0f);
  EXPECT_LT(std::hypot(hand.landmarks[9][0] - hand.keypoints[2][0], hand.landmarks[9][1] - hand.keypoints[2][1]), 25.0f);
  // One hand tracked, room for another: the palm detector runs again, and
  // its detection of the same hand is that hand, not a second one.
  auto second = (*p)->Process(image);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->detector_ran);
  EXPECT_EQ(second->submissions, 2);
  ASSERT_EQ(second->detections.size(), 1u);
  EXPECT_LT(std::hypot(second->detections[0].landmarks[12][0] - hand.landmarks[12][0],
                       second->detections[0].landmarks[12][1] - hand.landmarks[12][1]),
            10.0f);
}

TEST(HandsTest, TracksTwoHandsWithoutTheDetector) {
  auto p = Pipeline::Create("hands", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  const Image two = TwoHands();
  auto first = (*p)->Process(two);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->detections.size(), 2u);
  EXPECT_EQ(first->submissions, 2);  // the detector, then both hands in one graph
  // One hand in each half, one of each side.
  const Detection& a = first->detections[0];
  const Detection& b = first->detections[1];
  EXPECT_NE(a.landmarks[0][0] < 640, b.landmarks[0][0] < 640);
  EXPECT_NE(a.label, b.label);
  // Each where the hand alone puts it (the right half mirrored): both
  // copies of the model in the graph see their own crop.
  auto alone = Pipeline::Create("hands", {Models(), {}, nullptr});
  auto single = (*alone)->Process(Read("hand.jpg"));
  ASSERT_TRUE(single.ok());
  ASSERT_EQ(single->detections.size(), 1u);
  for (const Detection* d : {&a, &b}) {
    const bool mirrored = d->landmarks[0][0] >= 640;
    double sum = 0;
    for (size_t i = 0; i < 21; ++i) {
      const float x = mirrored ? 1279.0f - d->landmarks[i][0] : d->landmarks[i][0];
      sum += std::hypot(x - single->detections[0].landmarks[i][0], d->landmarks[i][1] - single->detections[0].landmarks[i][1]);
    }
    std::printf("two hands: the %s one within %.2f px (mean) of the hand alone\n", mirrored ? "mirrored" : "original", sum / 21);
    EXPECT_LT(sum / 21, 8.0);
  }
  // Both tracked: the next frame is one submission, the two crops together.
  auto second = (*p)->Process(two);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->detector_ran);
  EXPECT_EQ(second->submissions, 1);
  EXPECT_EQ(second->detections.size(), 2u);
}

// The share of pixels where two masks disagree about the foreground.
double Disagreement(const Mask& a, const Mask& b) {
  EXPECT_EQ(a.values.size(), b.values.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.values.size(); ++i) differ += (a.values[i] >= 0.5f) != (b.values[i] >= 0.5f);
  return static_cast<double>(differ) / static_cast<double>(a.values.size());
}

float MaskAt(const Mask& m, float x, float y) {
  const int ix = std::clamp(static_cast<int>(x), 0, m.width - 1), iy = std::clamp(static_cast<int>(y), 0, m.height - 1);
  return m.values[static_cast<size_t>(iy) * static_cast<size_t>(m.width) + static_cast<size_t>(ix)];
}

TEST(PoseTest, FindsTheBodyAndItsMask) {
  auto p = Pipeline::Create("pose", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  const Image image = Read("football.jpg");
  auto first = (*p)->Process(image);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->detections.size(), 1u);
  const Detection& body = first->detections[0];
  ASSERT_EQ(body.landmarks.size(), 33u);
  ASSERT_EQ(body.visibility.size(), 33u);
  // The kicker leans into the kick: head (0) above the shoulders (11, 12),
  // above the hips (23, 24), above the ankles (27, 28); all in the picture.
  const auto& l = body.landmarks;
  EXPECT_LT(l[0][1], std::min(l[11][1], l[12][1]));
  EXPECT_LT(std::max(l[11][1], l[12][1]), std::min(l[23][1], l[24][1]));
  EXPECT_LT(std::max(l[23][1], l[24][1]), std::max(l[27][1], l[28][1]));
  for (int i : {0, 11, 12, 23, 24}) EXPECT_GT(body.visibility[static_cast<size_t>(i)], 0.5f) << i;
  // The mask: on the body, not in the stands' corner, covering a fair part.
  ASSERT_TRUE(first->mask.has_value());
  const Mask& mask = *first->mask;
  ASSERT_EQ(mask.width, image.width);
  ASSERT_EQ(mask.height, image.height);
  const float torso_x = (l[11][0] + l[12][0] + l[23][0] + l[24][0]) / 4, torso_y = (l[11][1] + l[12][1] + l[23][1] + l[24][1]) / 4;
  EXPECT_GT(MaskAt(mask, torso_x, torso_y), 0.9f);
  EXPECT_GT(MaskAt(mask, l[0][0], l[0][1]), 0.5f);
  EXPECT_LT(MaskAt(mask, 5, 5), 0.1f);
  const MaskSummary summary = Summarize(mask);
  EXPECT_GT(summary.coverage, 0.05f);
  EXPECT_LT(summary.coverage, 0.5f);
  // Tracked: the landmarks' own crop, one submission, the same body.
  auto second = (*p)->Process(image);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->detector_ran);
  EXPECT_EQ(second->submissions, 1);
  ASSERT_EQ(second->detections.size(), 1u);
  EXPECT_LT(std::hypot(second->detections[0].landmarks[0][0] - l[0][0], second->detections[0].landmarks[0][1] - l[0][1]), 10.0f);
}

// The mask over the 512 px photo against LiteRT's for the photo resized to
// 256 (tests/data/reference): the same person.
TEST(SelfieTest, MaskMatchesLiteRt) {
  auto p = Pipeline::Create("selfie", {Models(), {}, nullptr});
  ASSERT_TRUE(p.ok()) << p.status();
  const Image image = Read("astronaut.png");
  auto result = (*p)->Process(image);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->submissions, 1);
  EXPECT_TRUE(result->detections.empty());
  ASSERT_TRUE(result->mask.has_value());
  const std::vector<float> litert = testing::ReadF32(testing::DataPath("reference/selfie_segmentation/image/output_0.f32"));
  ASSERT_EQ(litert.size(), 256u * 256u);
  // LiteRT's 256 x 256 mask at the image's resolution (nearest: each
  // value covers 2 x 2 pixels).
  Mask reference{512, 512, std::vector<float>(512 * 512)};
  for (int y = 0; y < 512; ++y)
    for (int x = 0; x < 512; ++x) reference.values[static_cast<size_t>(y) * 512 + x] = litert[static_cast<size_t>(y / 2) * 256 + x / 2];
  const double differ = Disagreement(*result->mask, reference);
  std::printf("selfie: %.2f%% of the pixels differ from LiteRT's mask\n", 100 * differ);
  EXPECT_LT(differ, 0.02);
  const MaskSummary summary = Summarize(*result->mask);
  EXPECT_NEAR(summary.coverage, 0.545f, 0.02f);
}

// --- the GPU against the CPU ---

double MeanDistance(const Detection& a, const Detection& b) {
  double sum = 0;
  for (size_t i = 0; i < a.landmarks.size(); ++i) {
    sum += std::hypot(a.landmarks[i][0] - b.landmarks[i][0], a.landmarks[i][1] - b.landmarks[i][1]);
  }
  return sum / static_cast<double>(std::max<size_t>(1, a.landmarks.size()));
}

void ExpectAllOnTheGpu(const Interpreter* interpreter) {
  ASSERT_NE(interpreter, nullptr);
  EXPECT_EQ(interpreter->partitions().size(), 1u);
  for (size_t n = 0; n < interpreter->graph().nodes.size(); ++n) {
    EXPECT_NE(interpreter->placements()[n].where, NodePlacement::Where::kCpu)
        << NodeLabel(interpreter->graph(), static_cast<int>(n)) << ": " << interpreter->placements()[n].reason;
  }
}

struct SolutionCase {
  const char* solution;
  const char* image;
};
void PrintTo(const SolutionCase& c, std::ostream* os) { *os << c.solution << " on " << c.image; }

class SolutionGpuTest : public ::testing::TestWithParam<std::tuple<testing::Backend, SolutionCase>> {};

// Two frames (detected, then tracked): the same objects, landmarks within
// a pixel of the CPU's (fp16: a few), masks agreeing but for their edges;
// every stage one partition, all of it on the GPU.
TEST_P(SolutionGpuTest, MatchesTheCpu) {
  const auto& [backend, c] = GetParam();
  auto delegate = testing::ValidatedDelegate(backend);
  if (!delegate) {
    if (testing::GpuBackendsRequired()) FAIL() << "no device";
    GTEST_SKIP() << "no such GPU";
  }
  const Image image = std::string(c.image) == "two_hands" ? TwoHands() : Read(c.image);
  auto cpu = Pipeline::Create(c.solution, {Models(), {}, nullptr});
  auto gpu = Pipeline::Create(c.solution, {Models(), {delegate.get()}, nullptr});
  ASSERT_TRUE(cpu.ok() && gpu.ok());
  for (int frame = 0; frame < 2; ++frame) {
    auto a = (*cpu)->Process(image), b = (*gpu)->Process(image);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->submissions, a->submissions);
    ASSERT_EQ(b->detections.size(), a->detections.size());
    for (size_t k = 0; k < a->detections.size(); ++k) {
      const double apart = MeanDistance(b->detections[k], a->detections[k]);
      std::printf("%s frame %d object %zu: GPU within %.3f px (mean) of the CPU\n", c.solution, frame, k, apart);
      EXPECT_LT(apart, backend.fp16 ? 3.0 : 0.1);
      EXPECT_EQ(b->detections[k].label, a->detections[k].label);
    }
    ASSERT_EQ(b->mask.has_value(), a->mask.has_value());
    if (a->mask) {
      const double differ = Disagreement(*b->mask, *a->mask);
      std::printf("%s frame %d: masks differ at %.3f%% of the pixels\n", c.solution, frame, 100 * differ);
      EXPECT_LT(differ, backend.fp16 ? 0.01 : 0.001);
    }
  }
  ExpectAllOnTheGpu((*gpu)->interpreter());
  if (std::string(c.solution) != "selfie") ExpectAllOnTheGpu((*gpu)->landmark_interpreter());
  EXPECT_THAT(delegate->device().validation_messages(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Solutions, SolutionGpuTest,
                         ::testing::Combine(::testing::ValuesIn(testing::AllBackends()),
                                            ::testing::Values(SolutionCase{"hands", "two_hands"}, SolutionCase{"pose", "football.jpg"},
                                                              SolutionCase{"selfie", "astronaut.png"})),
                         [](const auto& info) {
                           return std::string(std::get<1>(info.param).solution) + "_" +
                                  testing::BackendName({std::get<0>(info.param), info.index});
                         });

}  // namespace
}  // namespace mgd::pipeline
