// Whole models on the CPU reference kernels against LiteRT's outputs, within
// the fp32 whole-model bounds of docs/design.md section 5.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "tests/test_util.h"

namespace mgd {
namespace {

struct Case {
  std::string model;
  std::string input;  // image | synthetic
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.model << "/" << c.input; }

class ModelAccuracyTest : public ::testing::TestWithParam<Case> {};

TEST_P(ModelAccuracyTest, MatchesLiteRtWithinFp32Bounds) {
  const Case& c = GetParam();
  auto graph = ReadModelFile(testing::DataPath("models/" + c.model + ".tflite"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto interpreter = Interpreter::Create(std::move(*graph), InterpreterOptions{});
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const std::string dir = testing::DataPath("reference/" + c.model + "/" + c.input + "/");
  const std::vector<float> input = testing::ReadF32(dir + "input_0.f32");
  TensorRef& in = (*interpreter)->input(0);
  ASSERT_EQ(input.size() * 4, in.bytes);
  std::memcpy(in.data, input.data(), in.bytes);
  ASSERT_TRUE((*interpreter)->Invoke().ok());

  size_t checked = 0;
  for (size_t k = 0; k < (*interpreter)->num_outputs(); ++k) {
    const std::string path = dir + "output_" + std::to_string(k) + ".f32";
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const std::vector<float> expected = testing::ReadF32(path);
    const TensorRef& out = (*interpreter)->output(k);
    ASSERT_EQ(static_cast<size_t>(out.elements()), expected.size()) << out.name;
    std::vector<float> actual(out.as<float>(), out.as<float>() + out.elements());
    // pose_landmark's segmentation output is ill-conditioned (README of the
    // test data): docs/design.md allows it 1e-2.
    const bool ill_conditioned = c.model == "pose_landmark_lite" && out.name == "Identity_2";
    // On the synthetic input selfie_segmentation's mask is 1e-28..1e-15
    // everywhere (sigmoid of logits near -40): relative RMS there measures
    // fp32 noise in the logits (5e-5 between mgd and LiteRT, 1e-6 of the
    // logit), so it gets the element-wise bound and a 1e-3 RMS bound. See
    // docs/numerics.md.
    const bool degenerate = c.model == "selfie_segmentation" && c.input == "synthetic";
    const double rms = testing::RelativeRms(actual, expected);
    std::printf("accuracy %s/%s %s relative_rms=%.2e\n", c.model.c_str(), c.input.c_str(), out.name.c_str(), rms);
    EXPECT_LE(rms, ill_conditioned ? 1e-2 : degenerate ? 1e-3 : 1e-5) << c.model << " " << out.name;
    if (!ill_conditioned) {
      const long bad = testing::FirstOutOfBounds(actual, expected, 1e-3, 1e-3);
      EXPECT_EQ(bad, -1) << c.model << " " << out.name << " element " << bad << ": " << actual[static_cast<size_t>(std::max(bad, 0L))]
                         << " vs " << expected[static_cast<size_t>(std::max(bad, 0L))];
    }
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* model : {"face_detection_short_range", "face_landmark", "hand_landmark_lite", "palm_detection_lite",
                            "pose_landmark_lite", "selfie_segmentation"}) {
    for (const char* input : {"image", "synthetic"}) cases.push_back({model, input});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllModels, ModelAccuracyTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.model + "_" + info.param.input; });

}  // namespace
}  // namespace mgd
