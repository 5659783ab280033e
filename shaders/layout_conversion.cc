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

// One invocation per PHWC4 vec4, reading its (up to) four channels' BHWC
// elements with `element` (GLSL of the element at flat index `i`).
ConversionShader ToPhwc4(const layout::Bhwc& s, bool half_storage, const std::string& name, const std::string& src_type,
                         const std::string& element) {
  ConversionShader shader;
  shader.code.name = fmt::format("{}_to_phwc4_{}x{}x{}x{}", name, s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = kWorkgroup;
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", src_type, BufferAccess::kRead}, {"dst", "", BufferAccess::kWrite, true}};
  shader.code.body = Prologue(shader.code.params, s) +
                     "  highp vec4 v = vec4(0.0);\n"
                     "  MGD_LOOP for (int k = 0; k < 4; ++k) {\n"
                     "    int i = bhwc + k;\n"
                     "    if (c0 + k < C) v[k] = " + element + ";\n"
                     "  }\n"
                     "  dst_set(phwc4, v);\n";
  shader.groups = Grid(s);
  return shader;
}

// "v = <the PHWC4 value of BHWC element j>;" for FromPhwc4's stores.
std::string ReadElement(const std::string& j, const std::string& v) {
  return fmt::format(
      "{{ int j = {0}; int c = j % C, p = j / C; int x = p % W, t = p / W; int y = t % H, b = t / H;\n"
      "      {1} = src_at(((b * S + c / 4) * H + y) * W + x)[c % 4]; }}\n",
      j, v);
}

// One invocation per `per_invocation` consecutive BHWC elements, in BHWC
// order (see Phwc4ToBhwcShader); `store` writes them, given `n` (the
// invocation), `i` (its first element's flat index) and `E` (the element
// count), reading elements with ReadElement.
ConversionShader FromPhwc4(const layout::Bhwc& s, bool half_storage, const std::string& name, const std::string& dst_type,
                           int per_invocation, const std::string& store) {
  constexpr uint32_t kThreads = 64, kMaxGroups = 65535;
  ConversionShader shader;
  shader.code.name = fmt::format("phwc4_to_{}_{}x{}x{}x{}", name, s.batch, s.height, s.width, s.channels);
  shader.code.workgroup = {kThreads, 1, 1};
  shader.code.half_storage = half_storage;
  shader.code.buffers = {{"src", "", BufferAccess::kRead, true}, {"dst", dst_type, BufferAccess::kWrite}};
  const uint64_t elements = static_cast<uint64_t>(s.elements());
  const uint64_t invocations = (elements + static_cast<uint64_t>(per_invocation) - 1) / static_cast<uint64_t>(per_invocation);
  const uint64_t groups = std::max<uint64_t>(1, (invocations + kThreads - 1) / kThreads);
  const uint32_t row_groups = static_cast<uint32_t>(std::min<uint64_t>(groups, kMaxGroups));
  ShaderParams& params = shader.code.params;
  shader.code.body = fmt::format(
      "  int W = {}, H = {}, C = {}, S = {}, E = {};\n"
      "  int n = int(gl_GlobalInvocationID.y) * {} + int(gl_GlobalInvocationID.x);\n"
      "  int i = n * {};\n"
      "  if (i >= E) return;\n"
      "{}",
      params.Int("width", s.width), params.Int("height", s.height), params.Int("channels", s.channels),
      params.Int("slices", s.slices()), params.Int("elements", static_cast<int64_t>(elements)),
      params.Int("row", static_cast<int64_t>(row_groups) * kThreads), per_invocation, store);
  shader.groups = {row_groups, static_cast<uint32_t>((groups + kMaxGroups - 1) / kMaxGroups), 1};
  return shader;
}

}  // namespace

ConversionShader BhwcToPhwc4Shader(const layout::Bhwc& s, bool half_storage) {
  return ToPhwc4(s, half_storage, "bhwc", "float", "src[i]");
}

ConversionShader BoolBhwcToPhwc4Shader(const layout::Bhwc& s, bool half_storage) {
  return ToPhwc4(s, half_storage, "bool", "uint", "((src[i >> 2] >> uint(8 * (i & 3))) & 255u) != 0u ? 1.0 : 0.0");
}

// One invocation per BHWC element, in BHWC order: a warp's stores land on
// consecutive addresses. The destination is the user's buffer, in host memory
// on a discrete GPU, where scattered stores each cost a bus transaction: one
// invocation per texel storing C-strided channels took 200 of pose_landmark's
// 820 us on the H200 (docs/tools.md).
ConversionShader Phwc4ToBhwcShader(const layout::Bhwc& s, bool half_storage) {
  return FromPhwc4(s, half_storage, "bhwc", "float", 1, "  highp float v;\n  " + ReadElement("i", "v") + "  dst[i] = v;\n");
}

// Four bytes per invocation: one whole uint word each, so that no two
// invocations write parts of one word.
ConversionShader Phwc4ToBoolBhwcShader(const layout::Bhwc& s, bool half_storage) {
  return FromPhwc4(s, half_storage, "bool", "uint", 4,
                   "  uint word = 0u;\n"
                   "  MGD_LOOP for (int k = 0; k < 4 && i + k < E; ++k) {\n"
                   "    highp float v;\n"
                   "    " + ReadElement("i + k", "v") +
                   "    if (v != 0.0) word |= 1u << uint(8 * k);\n"
                   "  }\n"
                   "  dst[n] = word;\n");
}

}  // namespace mgd::shaders
