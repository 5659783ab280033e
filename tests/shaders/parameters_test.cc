// Declared shader parameters: inlined by Emit unless program sharing finds
// them differing between shaders otherwise alike, which then become one
// program reading those from the parameter block.
#include "shaders/parameters.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace mgd::shaders {
namespace {

// "if (x >= W) return; out0_set(x, in0_at(x * 3) * SCALE);" over width and scale.
ShaderCode Code(const std::string& name, int width, float scale) {
  ShaderCode code;
  code.name = name;
  code.buffers = {{"in0", "", BufferAccess::kRead, true}, {"out0", "", BufferAccess::kWrite, true}};
  const std::string w = code.params.Int("width", width);
  code.body = "  int x = int(gl_GlobalInvocationID.x);\n  if (x >= " + w + ") return;\n  out0_set(x, in0_at(x * " +
              code.params.Int("stride", 3) + ") * " + code.params.Float("scale", scale) + ");\n";
  return code;
}

size_t Share(std::vector<ShaderCode>& codes, size_t max_members = kMaxParams) {
  std::vector<ShaderCode*> pointers;
  for (ShaderCode& c : codes) pointers.push_back(&c);
  return ShareParameters(pointers, max_members);
}

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

TEST(ShaderParamsTest, NamesAreCapitalsAndRedeclaringTheSameValueIsOneParameter) {
  ShaderParams p;
  EXPECT_EQ(p.Int("in0_w", 7), "IN0_W");
  EXPECT_EQ(p.Int("in0_w", 7), "IN0_W");
  EXPECT_EQ(p.Int("in0_w", 8), "IN0_W_2");  // another value: another parameter
  EXPECT_EQ(p.Float("in0_w", 7.0f), "IN0_W_3");  // another type too
  EXPECT_EQ(p.list.size(), 3u);
  // Past int32 no parameter holds the value: it is its literal.
  EXPECT_EQ(p.Int("big", int64_t{1} << 32), "4294967296");
  EXPECT_EQ(p.list.size(), 3u);
}

TEST(ShaderParamsTest, InlinedParametersAreDefinedAsTheirLiterals) {
  ShaderCode code = Code("a", 128, 0.1f);
  code.params.Float("inf", std::numeric_limits<float>::infinity());
  const std::string source = Emit(Dialect::kVulkan, code);
  EXPECT_NE(source.find("#define WIDTH 128\n"), std::string::npos) << source;
  EXPECT_NE(source.find("#define STRIDE 3\n"), std::string::npos);
  EXPECT_NE(source.find("#define SCALE 0.100000001\n"), std::string::npos);  // reads back as exactly 0.1f
  EXPECT_NE(source.find("#define INF uintBitsToFloat(0x7f800000u)\n"), std::string::npos);
  EXPECT_EQ(source.find("Params"), std::string::npos);  // no block
  EXPECT_EQ(ParamsBytes(code), 0u);
  EXPECT_TRUE(ParamBlock(code).empty());
}

TEST(ShareParametersTest, DifferingParametersMoveToTheBlockAndAgreeingOnesStay) {
  std::vector<ShaderCode> codes = {Code("a", 128, 0.5f), Code("b", 64, 0.1f)};
  EXPECT_EQ(Share(codes), 2u);
  EXPECT_EQ(codes[0].name, "a");  // names are the dispatches' own
  for (Dialect dialect : {Dialect::kVulkan, Dialect::kGles}) {
    EXPECT_EQ(Emit(dialect, codes[0]), Emit(dialect, codes[1]));
  }
  const std::string source = Emit(Dialect::kVulkan, codes[0]);
  EXPECT_NE(source.find("#define WIDTH params.p0\n"), std::string::npos) << source;
  EXPECT_NE(source.find("#define STRIDE 3\n"), std::string::npos);  // equal in both: inlined
  EXPECT_NE(source.find("#define SCALE params.p1\n"), std::string::npos);
  EXPECT_NE(source.find("layout(push_constant) uniform Params {\n  highp int p0;\n  highp float p1;\n} params;\n"),
            std::string::npos);
  EXPECT_NE(Emit(Dialect::kGles, codes[0]).find("layout(std140, binding = 0) uniform Params {\n"), std::string::npos);
  ASSERT_EQ(ParamsBytes(codes[1]), 8u);
  const std::vector<uint8_t> a = ParamBlock(codes[0]), b = ParamBlock(codes[1]);
  EXPECT_EQ(IntAt(a, 0), 128);
  EXPECT_EQ(IntAt(b, 0), 64);
  EXPECT_EQ(FloatAt(a, 1), 0.5f);
  EXPECT_EQ(FloatAt(b, 1), 0.1f);
}

TEST(ShareParametersTest, ParametersWithEqualValuesInEveryMemberShareOneMember) {
  std::vector<ShaderCode> codes = {Code("a", 128, 0.5f), Code("b", 64, 0.5f)};
  for (size_t i = 0; i < codes.size(); ++i) codes[i].params.Int("height", i == 0 ? 128 : 64);
  EXPECT_EQ(Share(codes), 2u);
  EXPECT_EQ(ParamsBytes(codes[0]), 4u);
  const std::string source = Emit(Dialect::kVulkan, codes[0]);
  EXPECT_NE(source.find("#define HEIGHT params.p0\n"), std::string::npos) << source;
}

TEST(ShareParametersTest, OnlyShadersAlikeInAllButValuesAreGrouped) {
  std::vector<ShaderCode> codes = {Code("a", 1, 1.0f), Code("b", 2, 1.0f), Code("c", 3, 1.0f),
                                   Code("d", 4, 1.0f), Code("e", 5, 1.0f), Code("f", 6, 1.0f)};
  codes[2].workgroup = {64, 1, 1};  // a program's workgroup is its own
  codes[3].half_storage = true;
  codes[4].body += "  // another body\n";
  codes[5].params.Int("extra", 1);  // another parameter
  EXPECT_EQ(Share(codes), 2u);
  EXPECT_EQ(ParamsBytes(codes[0]), 4u);
  EXPECT_EQ(Emit(Dialect::kVulkan, codes[0]), Emit(Dialect::kVulkan, codes[1]));
  for (size_t i = 2; i < codes.size(); ++i) EXPECT_EQ(ParamsBytes(codes[i]), 0u) << codes[i].name;
}

TEST(ShareParametersTest, TheLimitOnMembersHolds) {
  std::vector<ShaderCode> codes = {Code("a", 128, 0.5f), Code("b", 64, 0.1f)};
  EXPECT_EQ(Share(codes, /*max_members=*/1), 0u);  // two would pass the limit
  EXPECT_EQ(ParamsBytes(codes[0]), 0u);
  EXPECT_NE(Emit(Dialect::kVulkan, codes[0]).find("#define WIDTH 128\n"), std::string::npos);
  EXPECT_EQ(Share(codes, /*max_members=*/2), 2u);
}

TEST(ShareParametersTest, IdenticalShadersNeedNoParameters) {
  std::vector<ShaderCode> codes = {Code("a", 7, 1.0f), Code("b", 7, 1.0f)};
  EXPECT_EQ(Share(codes), 0u);
  EXPECT_EQ(ParamsBytes(codes[0]), 0u);
  EXPECT_EQ(Emit(Dialect::kGles, codes[0]), Emit(Dialect::kGles, codes[1]));
}

}  // namespace
}  // namespace mgd::shaders
