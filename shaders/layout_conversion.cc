#include "shaders/layout_conversion.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd::shaders {
namespace {

constexpr std::array<uint32_t, 3> kWorkgroup{8, 8, 1};

// One invocation per (x, y, batch * slice): it moves the four channels of
// one slice of one pixel.
std::array<uint32_t, 3> Grid(const layout::Bhwc& s) {
  auto up = [](int n, uint32_t w) { return (static_cast<uint32_t>(n) + w - 1) / w; };
  return {up(s.width, kWorkgroup[0]), up(s.height, kWorkgroup[1]), up(s.batch * s.slices(), kWorkgroup[2])};
}

std::string Prologue(ShaderParams& params, const layout::Bhwc& s) {
  return fmt::format(
      "  int W = {}, H = {}, C = {}, S = {}, B = {};\n"
      "  ivec3 gid = ivec3(gl_GlobalInvocationID);\n"
      "  if (gid.x >= W || gid.y >= H || gid.z >= B * S) return;\n"
      "  int b = {};\n"
      "  int c0 = (gid.z - b * S) * 4;\n"
      "  int bhwc = ((b * H + gid.y) * W + gid.x) * C + c0;\n"
      "  int phwc4 = (gid.z * H + gid.y) * W + gid.x;\n",
      params.Int("width", s.width), params.Int("height", s.height), params.Int("channels", s.channels),
      params.Int("slices", s.slices()), params.Int("batch", s.batch), s.batch == 1 ? "0" : "gid.z / S");
}

}  // namespace

ConversionShader BhwcToPhwc4Shader(const layout::Bhwc& s, bool half_storage) {
  ConversionShader shader;
  shader.code.name = fmt::format("bhwc_to_phwc4_{}x{}x{}x{}", s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = kWorkgroup;
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", "float", BufferAccess::kRead}, {"dst", "", BufferAccess::kWrite, true}};
  shader.code.body = Prologue(shader.code.params, s) +
                     "  highp vec4 v = vec4(0.0);\n"
                     "  MGD_LOOP for (int k = 0; k < 4; ++k) {\n"
                     "    if (c0 + k < C) v[k] = src[bhwc + k];\n"
                     "  }\n"
                     "  dst_set(phwc4, v);\n";
  shader.groups = Grid(s);
  return shader;
}

// One invocation per BHWC element, in BHWC order: a warp's stores land on
// consecutive addresses. The destination is the user's buffer, in host memory
// on a discrete GPU, where scattered stores each cost a bus transaction: one
// invocation per texel storing C-strided channels took 200 of pose_landmark's
// 820 us on the H200 (docs/tools.md).
ConversionShader Phwc4ToBhwcShader(const layout::Bhwc& s, bool half_storage) {
  constexpr uint32_t kThreads = 64, kMaxGroups = 65535;
  ConversionShader shader;
  shader.code.name = fmt::format("phwc4_to_bhwc_{}x{}x{}x{}", s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = {kThreads, 1, 1};
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", "", BufferAccess::kRead, true}, {"dst", "float", BufferAccess::kWrite}};
  const uint64_t elements = static_cast<uint64_t>(s.elements());
  const uint64_t groups = std::max<uint64_t>(1, (elements + kThreads - 1) / kThreads);
  const uint32_t row_groups = static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroups));
  shader.code.body = fmt::format(
      "  int W = {}, H = {}, C = {}, S = {}, E = {};\n"
      "  int i = int(gl_GlobalInvocationID.y) * {} + int(gl_GlobalInvocationID.x);\n"
      "  if (i >= E) return;\n"
      "  int c = i % C, p = i / C;\n"
      "  int x = p % W, t = p / W;\n"
      "  int y = t % H, b = t / H;\n"
      "  dst[i] = src_at(((b * S + c / 4) * H + y) * W + x)[c % 4];\n",
      shader.code.params.Int("width", s.width), shader.code.params.Int("height", s.height),
      shader.code.params.Int("channels", s.channels), shader.code.params.Int("slices", s.slices()),
      shader.code.params.Int("elements", static_cast<int64_t>(elements)),
      shader.code.params.Int("row", static_cast<int64_t>(row_groups) * kThreads));
  shader.groups = {row_groups, static_cast<uint32_t>((groups + kMaxGroups - 1) / kMaxGroups), 1};
  return shader;
}

}  // namespace mgd::shaders
