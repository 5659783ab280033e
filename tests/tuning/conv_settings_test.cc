// mgd tune --conv-settings's search over a table's convolution settings,
// with made-up timings: it finds each setting's fastest value, does not move
// for gains within the noise margin, confirms its choice against the start
// head to head, and reports a failed or short measurement; and the settings
// read from tables in precedence and written back.
#include "tuning/conv_settings.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mgd::tuning {
namespace {

ConvSettings Settings(int64_t x, int64_t slices, bool flat, int64_t split, int64_t gate = 128, bool split_fused = false) {
  return {x, slices, flat, split, gate, split_fused};
}

// Times from a cost per settings, with the step each measurement was in.
struct FakeGpu {
  std::function<double(const ConvSettings&, int call)> cost;
  int calls = 0;
  MeasureFn Measure() {
    return [this](const std::vector<ConvSettings>& candidates) -> absl::StatusOr<std::vector<double>> {
      ++calls;
      std::vector<double> ms;
      for (const ConvSettings& c : candidates) ms.push_back(cost(c, calls));
      return ms;
    };
  }
};

// Fastest at 4x2 flat with split sums up to 8192 outputs, fused pairs
// splitting theirs, and gates of 512; each setting counts on its own.
double Separable(const ConvSettings& c) {
  return 10.0 + std::abs(std::log2(static_cast<double>(c.block_x)) - 2) + (c.block_slices == 2 ? 0 : 1.5) +
         (c.flat ? 0 : 2) + (c.split_conv_outputs == 8192 ? 0 : 1) + (c.split_fused ? 0 : 0.7) +
         (c.gate_invocations == 512 ? 0 : 0.5);
}

TEST(ConvSettingsSearch, FindsEachSettingsFastestValue) {
  FakeGpu gpu{[](const ConvSettings& c, int) { return Separable(c); }};
  const ConvSettings start = Settings(2, 2, false, 1);
  auto search = SearchConvSettings(start, gpu.Measure());
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->best, Settings(4, 2, true, 8192, 512, true)) << search->best.ToString();
  EXPECT_EQ(search->start, start);
  EXPECT_DOUBLE_EQ(search->start_ms, Separable(start));
  EXPECT_DOUBLE_EQ(search->best_ms, 10.0);
  // Blocks (the start's among the eight), flatness, split sums, split fused
  // pairs, gates, then the choice against the start.
  EXPECT_EQ(gpu.calls, 6);
  ASSERT_FALSE(search->tried.empty());
  EXPECT_EQ(search->tried.front().settings, start);
  EXPECT_EQ(search->tried.back().step, 6);
  int gate_step = 0;
  for (const auto& t : search->tried) gate_step += t.step == 5;
  EXPECT_EQ(gate_step, 4);  // 128 (the settings so far) once, 256, 512, 1024
  int block_step = 0;
  for (const auto& t : search->tried) block_step += t.step == 1;
  EXPECT_EQ(block_step, 8);
}

TEST(ConvSettingsSearch, GainsWithinTheMarginDoNotMoveTheTable) {
  // Every variation 1% faster than the start: noise, with a 2% margin.
  const ConvSettings start = Settings(8, 2, true, 1);
  FakeGpu gpu{[&](const ConvSettings& c, int) { return c == start ? 10.0 : 9.9; }};
  auto search = SearchConvSettings(start, gpu.Measure(), 0.02);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->best, start);
  EXPECT_EQ(search->tried.back().step, 5);  // nothing to confirm
}

TEST(ConvSettingsSearch, OneOutputBlocksSkipFlatness) {
  FakeGpu gpu{[](const ConvSettings& c, int) { return static_cast<double>(c.block_x * c.block_slices); }};
  auto search = SearchConvSettings(Settings(8, 2, true, 1), gpu.Measure());
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->best.block_x * search->best.block_slices, 1);
  for (const auto& t : search->tried) EXPECT_NE(t.step, 2) << t.settings.ToString();
}

TEST(ConvSettingsSearch, AChoiceThatLosesToTheStartHeadToHeadIsDropped) {
  // The machine ran slow during the first step only: 1x1 looked fastest
  // there, and loses to the start when both run together.
  const ConvSettings start = Settings(8, 2, true, 1);
  FakeGpu gpu{[&](const ConvSettings& c, int call) {
    if (call == 1) return c.block_x == 1 && c.block_slices == 1 ? 5.0 : 20.0;
    return c.block_x == 8 ? 10.0 : 12.0;
  }};
  auto search = SearchConvSettings(start, gpu.Measure());
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->best, start) << search->best.ToString();
  EXPECT_EQ(search->tried.back().step, 6);
}

// Whether fused pairs split is asked only where sums split.
TEST(ConvSettingsSearch, NoSplitSumsSkipSplitFusedPairs) {
  FakeGpu gpu{[](const ConvSettings& c, int) { return c.split_conv_outputs == 1 ? 1.0 : 2.0; }};
  auto search = SearchConvSettings(Settings(8, 2, true, 8192), gpu.Measure());
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->best.split_conv_outputs, 1);
  for (const auto& t : search->tried) EXPECT_NE(t.step, 4) << t.settings.ToString();
}

TEST(ConvSettingsSearch, FailedOrShortMeasurementsAreErrors) {
  auto failing = [](const std::vector<ConvSettings>&) -> absl::StatusOr<std::vector<double>> {
    return absl::InternalError("model.tflite: invoke failed");
  };
  auto search = SearchConvSettings(Settings(2, 2, false, 8192), failing);
  EXPECT_FALSE(search.ok());
  EXPECT_EQ(search.status().message(), "model.tflite: invoke failed");
  auto short_answer = [](const std::vector<ConvSettings>&) -> absl::StatusOr<std::vector<double>> {
    return std::vector<double>{1.0};
  };
  search = SearchConvSettings(Settings(2, 2, false, 8192), short_answer);
  EXPECT_FALSE(search.ok());
  EXPECT_NE(search.status().message().find("1 times for 8 convolution settings"), std::string::npos)
      << search.status();
}

TEST(ConvSettings, ReadInPrecedenceAndWrittenBack) {
  Table user, builtin;
  user.conv_block_x = 4;
  builtin.conv_block_x = 8;
  builtin.conv_block_flat = true;
  builtin.split_conv_outputs = 1;
  builtin.gate_invocations = 512;
  const ConvSettings defaults = Settings(2, 2, false, 8192);
  EXPECT_EQ(ConvSettingsOf({&user, &builtin}, defaults), Settings(4, 2, true, 1, 512));
  EXPECT_EQ(ConvSettingsOf({}, defaults), defaults);
  EXPECT_TRUE(SaysConvSettings(user));
  EXPECT_FALSE(SaysConvSettings(Table{}));
  Table flat_only;
  flat_only.conv_block_flat = false;
  EXPECT_TRUE(SaysConvSettings(flat_only));
  Table out;
  SetConvSettings(out, Settings(8, 1, false, 32768, 256));
  EXPECT_EQ(ConvSettingsOf({&out, &builtin}, defaults), Settings(8, 1, false, 32768, 256));
  Table gate_only;
  gate_only.gate_invocations = 256;
  EXPECT_TRUE(SaysConvSettings(gate_only));
  Table split_fused_only;
  split_fused_only.split_fused_sums = false;
  EXPECT_TRUE(SaysConvSettings(split_fused_only));
  SetConvSettings(out, Settings(8, 1, false, 32768, 256, true));
  EXPECT_TRUE(ConvSettingsOf({&out}, defaults).split_fused);
  EXPECT_EQ(SerializeTable(out).find("\"conv_block_flat\": false") != std::string::npos, true) << SerializeTable(out);
  EXPECT_EQ(Settings(8, 2, true, 1).ToString(), "block 8x2 flat, no split sums, gates of 128");
  EXPECT_EQ(Settings(1, 1, false, 8192, 512).ToString(), "block 1x1, split sums up to 8192 outputs, gates of 512");
  EXPECT_EQ(Settings(1, 1, false, 8192, 512, true).ToString(),
            "block 1x1, split sums up to 8192 outputs (fused pairs too), gates of 512");
}

}  // namespace
}  // namespace mgd::tuning
