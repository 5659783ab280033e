#include "shaders/dialect.h"

#include <fmt/format.h>

namespace mgd::shaders {
namespace {

const char* Qualifier(BufferAccess access) {
  switch (access) {
    case BufferAccess::kRead: return "readonly ";
    case BufferAccess::kWrite: return "writeonly ";
    case BufferAccess::kReadWrite: return "";
  }
  return "";
}

}  // namespace

std::string Emit(Dialect dialect, const ShaderCode& code) {
  std::string s = dialect == Dialect::kVulkan ? "#version 450\n" : "#version 310 es\n";
  // Both dialects accept precision statements; GLSL 4.50 for Vulkan turns
  // mediump into RelaxedPrecision.
  if (dialect == Dialect::kVulkan && code.dont_unroll) s += "#extension GL_EXT_control_flow_attributes : require\n";
  s += code.mediump ? "precision mediump float;\n" : "precision highp float;\n";
  s += "precision highp int;\n";
  // No name: dispatches alike but for it share one program.
  s += fmt::format("layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;\n", code.workgroup[0],
                   code.workgroup[1], code.workgroup[2]);
  // The generators mark every loop MGD_LOOP (see ShaderCode::dont_unroll).
  s += dialect == Dialect::kVulkan && code.dont_unroll ? "#define MGD_LOOP [[dont_unroll]]\n" : "#define MGD_LOOP\n";
  if (code.half_storage) {
    s += "vec4 mgd_unpack(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }\n"
         "uvec2 mgd_pack(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }\n";
  }
  for (size_t i = 0; i < code.buffers.size(); ++i) {
    const BufferDecl& b = code.buffers[i];
    // Weights (vec4 constants) are stored as fp16 too when activations are.
    const bool half = code.half_storage && (b.activation || b.element_type == "vec4");
    const std::string type = half ? "uvec2" : b.activation ? "highp vec4" : b.element_type;
    s += fmt::format("layout(std430, binding = {}) {}buffer Buffer{} {{ {} {}[]; }};\n", i, Qualifier(b.access), i,
                     type, b.name);
    if (!b.activation) {
      if (b.element_type == "vec4") s += fmt::format("#define {0}_at(i) {1}\n", b.name, half ? "mgd_unpack(" + b.name + "[i])" : b.name + "[i]");
      continue;
    }
    if (code.half_storage) {
      s += fmt::format("#define {0}_at(i) mgd_unpack({0}[i])\n#define {0}_set(i, v) {0}[i] = mgd_pack(v)\n", b.name);
    } else {
      s += fmt::format("#define {0}_at(i) {0}[i]\n#define {0}_set(i, v) {0}[i] = (v)\n", b.name);
    }
  }
  if (!code.params.empty()) {
    s += dialect == Dialect::kVulkan ? "layout(push_constant) uniform Params {\n"
                                     : "layout(std140, binding = 0) uniform Params {\n";
    for (const std::string& member : code.params) s += "  " + member + ";\n";
    s += "} params;\n";
  }
  s += code.shared;
  s += "void main() {\n" + code.body + "}\n";
  return s;
}

}  // namespace mgd::shaders
