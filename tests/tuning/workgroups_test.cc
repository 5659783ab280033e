// Workgroup tables (parse, round trip, clear errors), the lookup's
// precedence, the default calculator and the tuner's candidates against the
// device limits (the clamped GLES 3.1 ones included), and successive halving.
#include "tuning/workgroups.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <utility>
#include <random>

#include "tuning/tuner.h"

namespace mgd::tuning {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

gpu::GpuInfo Desktop() {
  gpu::GpuInfo info;
  info.api = gpu::Api::kVulkan;
  info.vendor = "NVIDIA";
  info.device_name = "NVIDIA H200";
  info.driver_version = "550.54.15";
  info.type = gpu::DeviceType::kDiscrete;
  info.limits.max_workgroup_invocations = 1024;
  info.limits.max_workgroup_size = {1024, 1024, 64};
  info.limits.max_workgroup_count = {1u << 31, 65535, 65535};
  return info;
}

DispatchKey Conv(int w, int h, int s, bool fp16 = false) { return {"CONV_2D", {w, h, 4}, {w, h, s}, {16, 3, 3, 16}, fp16}; }

const char* const kTable = R"({
  "format": "mgd-workgroups", "version": 1,
  "gpu": {"api": "vulkan", "vendor": "nvidia", "device": "H200", "driver_min": "535"},
  "tuned": true, "notes": "test",
  "entries": [
    {"op": "CONV_2D", "precision": "fp32", "in": [32,32,4], "out": [32,32,8], "weights": [16,3,3,16], "workgroup": [16,4,1], "time_us": 10.5, "default_us": 12.0},
    {"op": "ADD", "precision": "fp16", "shape": "any", "workgroup": [32,2,1]}
  ]})";

TEST(WorkgroupTable, ParsesAndRoundTrips) {
  auto table = ParseTable(kTable, "t.json");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->entries.size(), 2u);
  EXPECT_EQ(table->entries[0].key, (DispatchKey{"CONV_2D", {32, 32, 4}, {32, 32, 8}, {16, 3, 3, 16}, false}));
  EXPECT_EQ(table->entries[0].workgroup, (Workgroup{16, 4, 1}));
  EXPECT_TRUE(table->entries[1].any_shape);
  EXPECT_TRUE(table->tuned);
  auto again = ParseTable(SerializeTable(*table), "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(SerializeTable(*again), SerializeTable(*table));
  EXPECT_EQ(again->gpu.driver_min, "535");
  EXPECT_DOUBLE_EQ(again->entries[0].time_us, 10.5);
}

TEST(WorkgroupTable, BadTablesAreClearErrors) {
  auto error = [](const std::string& text) {
    auto t = ParseTable(text, "bad.json");
    return t.ok() ? std::string("accepted") : std::string(t.status().message());
  };
  const std::string head = R"({"format": "mgd-workgroups", "version": 1, "entries": [)";
  EXPECT_THAT(error("{not json"), HasSubstr("bad.json: not JSON"));
  EXPECT_THAT(error(R"({"version": 1})"), HasSubstr("not an mgd workgroup table"));
  EXPECT_THAT(error(R"({"format": "mgd-workgroups", "version": 2})"), HasSubstr("version: 2 is not supported (this mgd reads version 1)"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "shape": "any", "workgroup": [0, 8, 1]}]})"),
              HasSubstr("entries[0].workgroup: [0,8,1] is impossible"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "shape": "any", "workgroup": [64, 64, 1]}]})"),
              HasSubstr("[64,64,1] is impossible"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp8", "shape": "any", "workgroup": [8, 8, 1]}]})"),
              HasSubstr("entries[0].precision"));
  EXPECT_THAT(error(head + R"({"precision": "fp16", "shape": "any", "workgroup": [8, 8, 1]}]})"), HasSubstr("entries[0].op"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "in": [1,1], "out": [1,1,1], "workgroup": [8,8,1]}]})"),
              HasSubstr("entries[0].in: expected [width, height, slices]"));
  EXPECT_THAT(error(R"({"format": "mgd-workgroups", "version": 1, "gpu": {"api": "metal"}})"), HasSubstr("gpu.api"));
  // Fields of another JSON type, and numbers past what the fields hold
  // (found by tests/fuzz/workgroup_table_fuzzer.cc).
  EXPECT_THAT(error(R"({"format": 5, "version": 1})"), HasSubstr("not an mgd workgroup table"));
  EXPECT_THAT(error(R"({"format": "mgd-workgroups", "version": 1, "tuned": "yes"})"),
              HasSubstr("bad.json: tuned: expected true or false"));
  EXPECT_THAT(error(R"({"format": "mgd-workgroups", "version": 1, "notes": 3})"),
              HasSubstr("bad.json: notes: expected a string"));
  EXPECT_THAT(error(R"({"format": "mgd-workgroups", "version": 4294967297})"), HasSubstr("version: 4294967297 is not supported"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": 16, "shape": "any", "workgroup": [8, 8, 1]}]})"),
              HasSubstr("entries[0].precision"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "in": [1,1,1], "out": [1,1,1], "weights": [4294967295],
                                "workgroup": [8,8,1]}]})"),
              HasSubstr("entries[0].weights: expected dimensions from 0 to 16777216"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "shape": "any", "workgroup": [8,8,1], "time_us": 1e400}]})"),
              HasSubstr("bad.json: not JSON"));
  EXPECT_THAT(error(head + R"({"op": "ADD", "precision": "fp16", "shape": "any", "workgroup": [8,8,1], "time_us": 1e306}]})"),
              HasSubstr("entries[0].time_us: expected a time from 0 to 1e9 us"));
}

TEST(WorkgroupTable, AccuracyEntriesParseRoundTripAndMerge) {
  const std::string a(64, 'a'), b(64, 'b');
  const std::string text = R"({"format": "mgd-workgroups", "version": 1, "entries": [], "accuracy": [
    {"model": ")" + a + R"(", "name": "pose.tflite", "budget": 0.005, "fp32_layers": ["head", "conv 2"]},
    {"model": ")" + b + R"(", "fp32_layers": []}]})";
  auto table = ParseTable(text, "t.json");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->accuracy.size(), 2u);
  EXPECT_EQ(table->accuracy[0].name, "pose.tflite");
  EXPECT_DOUBLE_EQ(table->accuracy[0].budget, 0.005);
  EXPECT_EQ(table->accuracy[0].fp32_layers, (std::vector<std::string>{"head", "conv 2"}));
  auto again = ParseTable(SerializeTable(*table), "again.json");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(SerializeTable(*again), SerializeTable(*table));

  // The layers for one model, from every table, sorted and each once.
  Table other;
  Merge(other, AccuracyEntry{a, "pose.tflite", 0, {"head", "tail"}});
  EXPECT_EQ(Fp32Layers({&*table, &other}, a), (std::vector<std::string>{"conv 2", "head", "tail"}));
  EXPECT_TRUE(Fp32Layers({&*table, &other}, b).empty());
  EXPECT_TRUE(Fp32Layers({&*table}, std::string(64, 'c')).empty());
  // Merging an entry for a model replaces its old one.
  Merge(other, AccuracyEntry{a, "pose.tflite", 0, {"neck"}});
  ASSERT_EQ(other.accuracy.size(), 1u);
  EXPECT_EQ(Fp32Layers({&other}, a), (std::vector<std::string>{"neck"}));
  // A table without accuracy entries serializes as before (cache keys hash it).
  Table plain;
  EXPECT_EQ(SerializeTable(plain).find("accuracy"), std::string::npos);
}

// The tables' single numbers: split_conv_outputs, program_threads, the
// convolutions' block, the gates' workgroup and int8 models' filter
// storage.
TEST(WorkgroupTable, NumbersParseRoundTripAndFallBack) {
  struct Case {
    std::string name;
    int64_t Table::*field;
    int64_t value;
    const char* too_large;
  };
  for (const Case& c : {Case{"split_conv_outputs", &Table::split_conv_outputs, 32768, "2000000000"},
                        Case{"program_threads", &Table::program_threads, 3, "1025"},
                        Case{"conv_block_x", &Table::conv_block_x, 8, "17"},
                        Case{"conv_block_slices", &Table::conv_block_slices, 2, "17"},
                        Case{"gate_invocations", &Table::gate_invocations, 512, "2048"},
                        Case{"int8_filter_bits", &Table::int8_filter_bits_fp32, 32, "16"}}) {
    SCOPED_TRACE(c.name);
    const std::string head = R"({"format": "mgd-workgroups", "version": 1, ")" + c.name + "\": ";
    auto table = ParseTable(head + std::to_string(c.value) + "}", "t.json");
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ((*table).*c.field, c.value);
    auto again = ParseTable(SerializeTable(*table), "again");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ((*again).*c.field, c.value);
    const Table unset;
    EXPECT_EQ(SerializeTable(unset).find(c.name), std::string::npos);
    EXPECT_EQ(FirstSet({&unset, &*table}, c.field, 8192), c.value);
    EXPECT_EQ(FirstSet({&unset}, c.field, 8192), 8192);
    for (const char* bad : {"0", "-5", "1.5", "\"many\"", c.too_large}) {
      auto t = ParseTable(head + bad + "}", "bad.json");
      ASSERT_FALSE(t.ok()) << bad;
      EXPECT_THAT(std::string(t.status().message()), HasSubstr("bad.json: " + c.name)) << bad;
    }
  }
}

// A gate's workgroup is a power of two from the portable 128 to 1024.
TEST(WorkgroupTable, GateInvocationsArePowersOfTwo) {
  const std::string head = R"({"format": "mgd-workgroups", "version": 1, "gate_invocations": )";
  for (const char* bad : {"64", "100", "384"}) {
    auto t = ParseTable(head + bad + "}", "bad.json");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr("expected 128, 256, 512 or 1024")) << bad;
  }
  for (int n : {128, 256, 1024}) EXPECT_TRUE(ParseTable(head + std::to_string(n) + "}", "t.json").ok()) << n;
}

// "conv_block_flat", "split_fused_sums": true or false, kept through a
// round trip; unset says nothing.
TEST(WorkgroupTable, ConvBlockFlatAndSplitFusedSums) {
  for (const auto& [name, field] : {std::pair{"conv_block_flat", &Table::conv_block_flat},
                                    std::pair{"split_fused_sums", &Table::split_fused_sums}}) {
    SCOPED_TRACE(name);
    const std::string head = fmt::format(R"({{"format": "mgd-workgroups", "version": 1, "{}": )", name);
    for (const bool value : {true, false}) {
      auto table = ParseTable(head + (value ? "true" : "false") + "}", "t.json");
      ASSERT_TRUE(table.ok()) << table.status();
      EXPECT_EQ((*table).*field, value);
      auto again = ParseTable(SerializeTable(*table), "again");
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ((*again).*field, value);
      const Table unset;
      EXPECT_EQ(FirstSet({&unset, &*table}, field, !value), value);
      EXPECT_EQ(SerializeTable(unset).find(name), std::string::npos);
    }
    for (const char* bad : {"1", "\"yes\"", "null"}) {
      auto t = ParseTable(head + bad + "}", "bad.json");
      ASSERT_FALSE(t.ok()) << bad;
      EXPECT_THAT(std::string(t.status().message()), HasSubstr(std::string("bad.json: ") + name)) << bad;
    }
  }
}

// "int8_filter_bits": one number for both storage precisions, or one for
// each.
TEST(WorkgroupTable, Int8FilterBitsPerStorage) {
  auto parse = [](const std::string& bits) {
    return ParseTable(R"({"format": "mgd-workgroups", "version": 1, "int8_filter_bits": )" + bits + "}", "t.json");
  };
  auto both = parse("8");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->int8_filter_bits_fp32, 8);
  EXPECT_EQ(both->int8_filter_bits_fp16, 8);
  EXPECT_THAT(SerializeTable(*both), HasSubstr("\"int8_filter_bits\": 8,"));
  for (const auto& [text, fp32, fp16] : {std::tuple{R"({"fp32": 8, "fp16": 32})", 8, 32},
                                         std::tuple{R"({"fp16": 8})", 0, 8}, std::tuple{R"({"fp32": 32})", 32, 0}}) {
    SCOPED_TRACE(text);
    auto t = parse(text);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->int8_filter_bits_fp32, fp32);
    EXPECT_EQ(t->int8_filter_bits_fp16, fp16);
    auto again = ParseTable(SerializeTable(*t), "again");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->int8_filter_bits_fp32, fp32);
    EXPECT_EQ(again->int8_filter_bits_fp16, fp16);
  }
  for (const auto& [bad, where] : {std::pair{R"({"fp8": 8})", "int8_filter_bits.fp8: expected the keys fp32 and fp16"},
                                   std::pair{R"({"fp16": 16})", "int8_filter_bits.fp16: expected 8 or 32"},
                                   std::pair{R"({"fp32": "8"})", "int8_filter_bits.fp32: expected 8 or 32"},
                                   std::pair{"[8, 32]", "int8_filter_bits: expected 8 or 32"}}) {
    auto t = parse(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(std::string("t.json: ") + where)) << bad;
  }
}

TEST(WorkgroupTable, Int8DotProductsPerStorage) {
  auto parse = [](const std::string& dot) {
    return ParseTable(R"({"format": "mgd-workgroups", "version": 1, "int8_dot_products": )" + dot + "}", "t.json");
  };
  using Dot = std::optional<bool>;
  for (const auto& [text, fp32, fp16] : {std::tuple{"true", Dot(true), Dot(true)},
                                         std::tuple{R"({"fp32": false, "fp16": true})", Dot(false), Dot(true)},
                                         std::tuple{R"({"fp16": false})", Dot(), Dot(false)}}) {
    SCOPED_TRACE(text);
    auto t = parse(text);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->int8_dot_products_fp32, fp32);
    EXPECT_EQ(t->int8_dot_products_fp16, fp16);
    auto again = ParseTable(SerializeTable(*t), "again");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->int8_dot_products_fp32, fp32);
    EXPECT_EQ(again->int8_dot_products_fp16, fp16);
  }
  // Unsaid, nothing is written; a table that says false is not one that says nothing.
  EXPECT_THAT(SerializeTable(Table{}), Not(HasSubstr("int8_dot_products")));
  const Table unsaid, says_false = *parse("false");
  EXPECT_TRUE(FirstSet({&unsaid, &says_false}, &Table::int8_dot_products_fp32, true) == false);
  EXPECT_TRUE(FirstSet({&unsaid}, &Table::int8_dot_products_fp16, true));
  for (const auto& [bad, where] : {std::pair{"1", "int8_dot_products: expected true or false"},
                                   std::pair{R"({"fp32": "yes"})", "int8_dot_products.fp32: expected true or false"},
                                   std::pair{R"({"fp64": true})", "int8_dot_products.fp64: expected the keys fp32 and fp16"}}) {
    auto t = parse(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(std::string("t.json: ") + where)) << bad;
  }
}

TEST(WorkgroupTable, BadAccuracyEntriesAreClearErrors) {
  auto error = [](const std::string& accuracy) {
    auto t = ParseTable(R"({"format": "mgd-workgroups", "version": 1, "accuracy": )" + accuracy + "}", "bad.json");
    return t.ok() ? std::string("accepted") : std::string(t.status().message());
  };
  const std::string model = R"("model": ")" + std::string(64, 'f') + R"(")";
  EXPECT_THAT(error("{}"), HasSubstr("bad.json: accuracy: expected an array"));
  EXPECT_THAT(error(R"([{"model": "abc", "fp32_layers": []}])"), HasSubstr("accuracy[0].model: expected the model structure's SHA-256"));
  EXPECT_THAT(error("[{" + model + "}]"), HasSubstr("accuracy[0].fp32_layers: expected an array of tensor names"));
  EXPECT_THAT(error("[{" + model + R"(, "fp32_layers": ["a", 3]}])"), HasSubstr("accuracy[0].fp32_layers: 3 is not a tensor name"));
  EXPECT_THAT(error("[{" + model + R"(, "fp32_layers": [], "budget": -1}])"), HasSubstr("accuracy[0].budget"));
  EXPECT_THAT(error("[{" + model + R"(, "fp32_layers": [], "budget": 1e400}])"), HasSubstr("bad.json: not JSON"));
  EXPECT_THAT(error("[{" + model + R"(, "fp32_layers": [], "name": 7}])"),
              HasSubstr("accuracy[0].name: expected a string"));
}

TEST(WorkgroupTable, BuiltinTablesParseAndMatchTheirGpus) {
  const std::vector<Table>& tables = BuiltinTables();
  ASSERT_GE(tables.size(), 3u);
  gpu::GpuInfo adreno = Desktop();
  adreno.vendor = "Qualcomm";
  adreno.device_name = "Adreno (TM) 740";
  ASSERT_NE(BuiltinTableFor(adreno), nullptr);
  EXPECT_THAT(BuiltinTableFor(adreno)->name, HasSubstr("adreno"));
  EXPECT_FALSE(BuiltinTableFor(adreno)->tuned);
  gpu::GpuInfo mali = Desktop();
  mali.vendor = "ARM";
  mali.device_name = "Mali-G715";
  ASSERT_NE(BuiltinTableFor(mali), nullptr);
  EXPECT_THAT(BuiltinTableFor(mali)->name, HasSubstr("mali"));
  // An H100 gets its own table (tuned there, 1x1 blocks like the H200's),
  // not the H200's, on each API.
  gpu::GpuInfo h100 = Desktop();
  h100.device_name = "NVIDIA H100 80GB HBM3";
  ASSERT_NE(BuiltinTableFor(h100), nullptr);
  EXPECT_THAT(BuiltinTableFor(h100)->name, HasSubstr("nvidia_h100_vulkan"));
  EXPECT_TRUE(BuiltinTableFor(h100)->tuned);
  EXPECT_EQ(BuiltinTableFor(h100)->conv_block_x, 1);
  h100.api = gpu::Api::kGles;
  h100.vendor = "NVIDIA Corporation";
  h100.device_name = "NVIDIA H100 80GB HBM3/PCIe/SSE2";
  ASSERT_NE(BuiltinTableFor(h100), nullptr);
  EXPECT_THAT(BuiltinTableFor(h100)->name, HasSubstr("nvidia_h100_gl"));
  EXPECT_THAT(BuiltinTableFor(Desktop())->name, HasSubstr("nvidia_h200_vulkan"));
  gpu::GpuInfo other = Desktop();
  other.vendor = "Intel";
  other.device_name = "Arc A770";
  EXPECT_EQ(BuiltinTableFor(other), nullptr);
}

TEST(WorkgroupTable, GpuMatchRules) {
  const GpuMatch match{"vulkan", "nvidia", "H200", "535"};
  gpu::GpuInfo info = Desktop();
  EXPECT_TRUE(Matches(match, info));
  info.driver_version = "530.30.02";
  EXPECT_FALSE(Matches(match, info));  // an older driver
  info.driver_version = "550.54.15";
  info.api = gpu::Api::kGles;
  EXPECT_FALSE(Matches(match, info));
  info.api = gpu::Api::kVulkan;
  info.device_name = "NVIDIA A100";
  EXPECT_FALSE(Matches(match, info));
  EXPECT_TRUE(Matches(GpuMatch{}, info));  // an empty rule matches anything
}

TEST(WorkgroupLookup, ExactThenBucketThenOpRuleThenDefault) {
  const gpu::GpuInfo info = Desktop();
  auto table = ParseTable(kTable, "t.json");
  ASSERT_TRUE(table.ok());
  Table user;
  user.name = "user.json";
  user.entries.push_back({Conv(32, 32, 8), false, {4, 4, 4}, 0, 0});
  const std::vector<const Table*> both{&user, &*table};
  const std::array<uint32_t, 3> grid{32, 32, 8};

  Choice c = Choose(both, Conv(32, 32, 8), grid, info);  // the user's table comes first
  EXPECT_EQ(c.source, Source::kTable);
  EXPECT_EQ(c.workgroup, (Workgroup{4, 4, 4}));
  EXPECT_EQ(c.table, "user.json");
  c = Choose({&*table}, Conv(32, 32, 8), grid, info);
  EXPECT_EQ(c.workgroup, (Workgroup{16, 4, 1}));
  c = Choose({&*table}, Conv(64, 64, 8), grid, info);  // 2x wider and taller: the nearest bucket
  EXPECT_EQ(c.source, Source::kBucket);
  EXPECT_EQ(c.workgroup, (Workgroup{16, 4, 1}));
  c = Choose({&*table}, Conv(1024, 1024, 64), grid, info);  // too far from anything tuned
  EXPECT_EQ(c.source, Source::kDefault);
  c = Choose({&*table}, Conv(32, 32, 8, /*fp16=*/true), grid, info);  // another precision
  EXPECT_EQ(c.source, Source::kDefault);
  c = Choose({&*table}, {"ADD", {9, 9, 2}, {9, 9, 2}, {}, true}, grid, info);
  EXPECT_EQ(c.source, Source::kOpRule);
  EXPECT_EQ(c.workgroup, (Workgroup{32, 2, 1}));
  // An entry the device cannot run is passed over.
  gpu::GpuInfo small = info;
  small.limits = gpu::ClampToGles31(info.limits);
  small.limits.max_workgroup_size[0] = 8;
  c = Choose({&*table}, Conv(32, 32, 8), grid, small);
  EXPECT_NE(c.workgroup, (Workgroup{16, 4, 1}));
  EXPECT_TRUE(Fits(c.workgroup, small.limits));
}

TEST(DefaultCalculator, RespectsTheLimitsAndFollowsTheGrid) {
  std::mt19937 rng(5);
  gpu::GpuInfo clamped = Desktop();
  clamped.limits = gpu::ClampToGles31(clamped.limits);
  gpu::GpuInfo tiny = Desktop();
  tiny.limits.max_workgroup_invocations = 32;
  tiny.limits.max_workgroup_size = {16, 4, 1};
  gpu::GpuInfo powervr = Desktop();
  powervr.vendor = "Imagination";
  for (const gpu::GpuInfo* info : {&clamped, &tiny, &powervr}) {
    for (int trial = 0; trial < 500; ++trial) {
      const std::array<uint32_t, 3> grid{static_cast<uint32_t>(1 + rng() % 300), static_cast<uint32_t>(1 + rng() % 300),
                                          static_cast<uint32_t>(1 + rng() % 80)};
      const Workgroup wg = DefaultWorkgroup(grid, *info);
      ASSERT_TRUE(Fits(wg, info->limits)) << wg[0] << "x" << wg[1] << "x" << wg[2];
      for (const Workgroup& c : Candidates(grid, info->limits, wg)) ASSERT_TRUE(Fits(c, info->limits));
    }
  }
  EXPECT_EQ(DefaultWorkgroup({64, 64, 8}, Desktop()), (Workgroup{8, 8, 1}));     // near-square, z = 1
  EXPECT_EQ(DefaultWorkgroup({1, 1, 256}, Desktop()), (Workgroup{1, 1, 64}));   // a 1x1 output: all in z
  EXPECT_EQ(DefaultWorkgroup({64, 64, 8}, powervr), (Workgroup{8, 4, 1}));      // 32 invocations, wide x
  EXPECT_EQ(DefaultWorkgroup({3, 2, 1}, Desktop()), (Workgroup{4, 2, 1}));      // no more than the grid needs
  // The widest x within 50% padding: a blocked convolution's 7 columns of
  // blocks (1x8x8 fits exactly, and ran 3.5x slower on lavapipe).
  EXPECT_EQ(DefaultWorkgroup({7, 56, 16}, Desktop()), (Workgroup{8, 8, 1}));
  EXPECT_EQ(DefaultWorkgroup({3, 56, 16}, Desktop()), (Workgroup{4, 8, 2}));
  EXPECT_EQ(DefaultWorkgroup({9, 64, 1}, Desktop())[0], 4u);  // 8 wide would pad by 78%
  EXPECT_EQ(DefaultWorkgroup({5, 64, 1}, Desktop())[0], 2u);
  EXPECT_EQ(DefaultWorkgroup({1, 64, 4}, Desktop())[0], 1u);
}

TEST(Tuner, SuccessiveHalvingFindsTheFastestAndPrunes) {
  const std::vector<Workgroup> candidates = Candidates({64, 64, 8}, Desktop().limits, {8, 8, 1});
  ASSERT_GT(candidates.size(), 8u);
  EXPECT_EQ(candidates[0], (Workgroup{8, 8, 1}));
  // A made-up cost with its minimum at 16x4x1 and noise-free timing.
  std::map<Workgroup, int> runs;
  auto time = [&](const Workgroup& wg, int repeats) -> absl::StatusOr<double> {
    runs[wg] += repeats;
    return 10.0 + std::abs(std::log2(wg[0]) - 4) + std::abs(std::log2(wg[1]) - 2) + wg[2];
  };
  auto ranked = SuccessiveHalving(candidates, time);
  ASSERT_TRUE(ranked.ok());
  EXPECT_EQ(ranked->front().workgroup, (Workgroup{16, 4, 1}));
  // Losers stop being timed early: the winner ran most.
  int most = 0;
  for (const auto& [wg, n] : runs) most = std::max(most, n);
  const Workgroup winner{16, 4, 1}, loser{1, 1, 64};
  EXPECT_EQ(runs[winner], most);
  EXPECT_LT(runs[loser], most);
}

TEST(Tuner, ACandidateTheDriverRefusesDropsOut) {
  const std::vector<Workgroup> candidates{{8, 8, 1}, {1, 1, 128}, {16, 4, 1}};
  auto time = [](const Workgroup& wg, int) -> absl::StatusOr<double> {
    if (wg[2] > 64) return absl::InvalidArgumentError("local_size too large");
    return wg[0] == 16 ? 1.0 : 2.0;
  };
  auto ranked = SuccessiveHalving(candidates, time);
  ASSERT_TRUE(ranked.ok()) << ranked.status();
  EXPECT_EQ(ranked->front().workgroup, (Workgroup{16, 4, 1}));
  auto none = SuccessiveHalving({{1, 1, 128}}, time);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("local_size too large"));
}

}  // namespace
}  // namespace mgd::tuning
