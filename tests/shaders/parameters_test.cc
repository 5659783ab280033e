// Shaders alike but for their literals become one program reading the
// literals that differ from parameters; everything else is left alone.
#include "shaders/parameters.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mgd::shaders {
namespace {

ShaderCode Code(const std::string& name, const std::string& body) {
  ShaderCode code;
  code.name = name;
  code.buffers = {{"in0", "", BufferAccess::kRead, true}, {"out0", "", BufferAccess::kWrite, true}};
  code.body = body;
  return code;
}

struct Shaders {
  std::vector<ShaderCode> codes;
  std::vector<std::vector<uint8_t>> params;

  size_t Lift(size_t max_params = kMaxParams) {
    params.resize(codes.size());
    std::vector<ParameterizedShader> shaders;
    for (size_t i = 0; i < codes.size(); ++i) shaders.push_back({&codes[i], &params[i]});
    return LiftDifferingLiterals(shaders, max_params);
  }
};

int32_t IntAt(const std::vector<uint8_t>& bytes, size_t k) {
  int32_t v;
  std::memcpy(&v, bytes.data() + 4 * k, 4);
  return v;
}

float FloatAt(const std::vector<uint8_t>& bytes, size_t k) {
  float v;
  std::memcpy(&v, bytes.data() + 4 * k, 4);
  return v;
}

TEST(LiftDifferingLiteralsTest, DifferingLiteralsBecomeParametersAndAgreeingOnesStay) {
  Shaders s;
  s.codes = {Code("a", "  if (x >= 128 || y >= 128) return;\n  out0_set(x, in0_at(x * 3) * 0.5 + vec4(6.0));\n"),
             Code("b", "  if (x >= 64 || y >= 64) return;\n  out0_set(x, in0_at(x * 3) * 0.100000001 + vec4(6.0));\n")};
  EXPECT_EQ(s.Lift(), 2u);
  EXPECT_EQ(s.codes[0].body, s.codes[1].body);
  EXPECT_EQ(s.codes[0].body,
            "  if (x >= params.mgd_p0 || y >= params.mgd_p0) return;\n"
            "  out0_set(x, in0_at(x * 3) * params.mgd_p1 + vec4(6.0));\n");
  EXPECT_EQ(s.codes[0].params, (std::vector<std::string>{"highp int mgd_p0", "highp float mgd_p1"}));
  EXPECT_EQ(s.codes[0].params, s.codes[1].params);
  ASSERT_EQ(s.params[0].size(), 8u);
  ASSERT_EQ(s.params[1].size(), 8u);
  EXPECT_EQ(IntAt(s.params[0], 0), 128);
  EXPECT_EQ(IntAt(s.params[1], 0), 64);
  EXPECT_EQ(FloatAt(s.params[0], 1), 0.5f);
  EXPECT_EQ(FloatAt(s.params[1], 1), 0.1f);  // the exact float the literal spelled
  EXPECT_EQ(s.codes[0].name, "a");  // names are the dispatches' own
  EXPECT_EQ(Emit(Dialect::kVulkan, s.codes[0]), Emit(Dialect::kVulkan, s.codes[1]));
  EXPECT_EQ(Emit(Dialect::kGles, s.codes[0]), Emit(Dialect::kGles, s.codes[1]));
  EXPECT_NE(Emit(Dialect::kVulkan, s.codes[0]).find("layout(push_constant) uniform Params {\n  highp int mgd_p0;\n"),
            std::string::npos);
}

// Each pair differs in one number that must stay in the source: the two are
// then different programs.
TEST(LiftDifferingLiteralsTest, ConstDeclarationsCommentsIdentifiersAndSuffixesStay) {
  const std::pair<std::string, std::string> pairs[] = {
      {"  const int n = 2;\n", "  const int n = 3;\n"},
      {"  const vec4 bias[1] = vec4[](vec4(1.0));\n", "  const vec4 bias[1] = vec4[](vec4(2.0));\n"},
      {"  int n = 5;  // 7 taps\n", "  int n = 5;  // 9 taps\n"},
      {"  vec4 v = in1_at(0);\n", "  vec4 v = in2_at(0);\n"},
      {"  uint u = 3u;\n", "  uint u = 4u;\n"},
  };
  for (const auto& [a, b] : pairs) {
    Shaders s;
    s.codes = {Code("a", a), Code("b", b)};
    EXPECT_EQ(s.Lift(), 0u) << a;
    EXPECT_EQ(s.codes[0].body, a);
    EXPECT_EQ(s.codes[1].body, b);
    EXPECT_TRUE(s.params[0].empty() && s.params[1].empty()) << a;
  }
  // The same numbers outside those places are lifted.
  Shaders s;
  s.codes = {Code("a", "  int n = 2;  // 7 taps\n"), Code("b", "  int n = 3;  // 7 taps\n")};
  EXPECT_EQ(s.Lift(), 2u);
  EXPECT_EQ(s.codes[0].body, "  int n = params.mgd_p0;  // 7 taps\n");
}

TEST(LiftDifferingLiteralsTest, OnlyShadersAlikeInAllButLiteralsAreGrouped) {
  Shaders s;
  s.codes = {Code("a", "  int n = 1;\n"), Code("b", "  int n = 2;\n"), Code("c", "  int n = 3;\n"),
             Code("d", "  int m = 4;\n"), Code("e", "  float n = 1.0;\n"), Code("f", "  int n = 5;\n")};
  s.codes[2].workgroup = {64, 1, 1};  // a program's workgroup is its own
  s.codes[5].half_storage = true;
  EXPECT_EQ(s.Lift(), 2u);
  EXPECT_EQ(s.codes[0].body, "  int n = params.mgd_p0;\n");
  EXPECT_EQ(s.codes[1].body, "  int n = params.mgd_p0;\n");
  for (size_t i = 2; i < s.codes.size(); ++i) EXPECT_TRUE(s.params[i].empty()) << s.codes[i].name;
  EXPECT_EQ(s.codes[2].body, "  int n = 3;\n");
}

TEST(LiftDifferingLiteralsTest, GeneratorParametersComeFirstAndTheLimitHolds) {
  Shaders s;
  s.codes = {Code("a", "  int n = params.width + 1 + 2 + 3;\n"), Code("b", "  int n = params.width + 4 + 5 + 6;\n")};
  s.params = {{1, 0, 0, 0}, {2, 0, 0, 0}};
  for (ShaderCode& c : s.codes) c.params = {"int width"};
  EXPECT_EQ(s.Lift(/*max_params=*/3), 0u);  // 1 + 3 would pass the limit
  EXPECT_EQ(s.codes[0].body, "  int n = params.width + 1 + 2 + 3;\n");
  EXPECT_EQ(s.Lift(/*max_params=*/4), 2u);
  EXPECT_EQ(s.codes[1].body, "  int n = params.width + params.mgd_p1 + params.mgd_p2 + params.mgd_p3;\n");
  EXPECT_EQ(s.codes[1].params, (std::vector<std::string>{"int width", "highp int mgd_p1", "highp int mgd_p2", "highp int mgd_p3"}));
  ASSERT_EQ(s.params[1].size(), 16u);
  EXPECT_EQ(IntAt(s.params[1], 0), 2);
  EXPECT_EQ(IntAt(s.params[1], 3), 6);
}

TEST(LiftDifferingLiteralsTest, IdenticalShadersNeedNoParameters) {
  Shaders s;
  s.codes = {Code("a", "  int n = 7;\n"), Code("b", "  int n = 7;\n")};
  EXPECT_EQ(s.Lift(), 0u);
  EXPECT_EQ(s.codes[0].body, "  int n = 7;\n");
  EXPECT_EQ(Emit(Dialect::kGles, s.codes[0]), Emit(Dialect::kGles, s.codes[1]));
}

TEST(LiftDifferingLiteralsTest, ExponentsAndValuesTooLargeForAnInt) {
  Shaders s;
  s.codes = {Code("a", "  float f = 1e-05 * 2.5e+10;\n  int big = 4294967296;\n"),
             Code("b", "  float f = 3e-05 * 2.5e+10;\n  int big = 4294967297;\n")};
  EXPECT_EQ(s.Lift(), 0u);  // the too-large ints differ and cannot be lifted
  s.codes[1].body = "  float f = 3e-05 * 2.5e+10;\n  int big = 4294967296;\n";
  EXPECT_EQ(s.Lift(), 2u);
  EXPECT_EQ(s.codes[1].body, "  float f = params.mgd_p0 * 2.5e+10;\n  int big = 4294967296;\n");
  EXPECT_EQ(FloatAt(s.params[1], 0), 3e-05f);
}

}  // namespace
}  // namespace mgd::shaders
