#include "shaders/layout_conversion.h"

#include <fmt/format.h>

namespace mgd::shaders {
namespace {

constexpr std::array<uint32_t, 3> kWorkgroup{8, 8, 1};

// One invocation per (x, y, batch * slice): it moves the four channels of
// one slice of one pixel.
std::array<uint32_t, 3> Grid(const layout::Bhwc& s) {
  auto up = [](int n, uint32_t w) { return (static_cast<uint32_t>(n) + w - 1) / w; };
  return {up(s.width, kWorkgroup[0]), up(s.height, kWorkgroup[1]), up(s.batch * s.slices(), kWorkgroup[2])};
}

std::string Prologue(const layout::Bhwc& s) {
  return fmt::format(
      "  const int W = {}, H = {}, C = {}, S = {}, B = {};\n"
      "  ivec3 gid = ivec3(gl_GlobalInvocationID);\n"
      "  if (gid.x >= W || gid.y >= H || gid.z >= B * S) return;\n"
      "  int b = gid.z / S;\n"
      "  int c0 = (gid.z - b * S) * 4;\n"
      "  int bhwc = ((b * H + gid.y) * W + gid.x) * C + c0;\n"
      "  int phwc4 = (gid.z * H + gid.y) * W + gid.x;\n",
      s.width, s.height, s.channels, s.slices(), s.batch);
}

}  // namespace

ConversionShader BhwcToPhwc4Shader(const layout::Bhwc& s, bool half_storage) {
  ConversionShader shader;
  shader.code.name = fmt::format("bhwc_to_phwc4_{}x{}x{}x{}", s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = kWorkgroup;
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", "float", BufferAccess::kRead}, {"dst", "", BufferAccess::kWrite, true}};
  shader.code.body = Prologue(s) +
                     "  highp vec4 v = vec4(0.0);\n"
                     "  for (int k = 0; k < 4; ++k) {\n"
                     "    if (c0 + k < C) v[k] = src[bhwc + k];\n"
                     "  }\n"
                     "  dst_set(phwc4, v);\n";
  shader.groups = Grid(s);
  return shader;
}

ConversionShader Phwc4ToBhwcShader(const layout::Bhwc& s, bool half_storage) {
  ConversionShader shader;
  shader.code.name = fmt::format("phwc4_to_bhwc_{}x{}x{}x{}", s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = kWorkgroup;
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", "", BufferAccess::kRead, true}, {"dst", "float", BufferAccess::kWrite}};
  shader.code.body = Prologue(s) +
                     "  vec4 v = src_at(phwc4);\n"
                     "  for (int k = 0; k < 4; ++k) {\n"
                     "    if (c0 + k < C) dst[bhwc + k] = v[k];\n"
                     "  }\n";
  shader.groups = Grid(s);
  return shader;
}

}  // namespace mgd::shaders
