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
  std::string s;
  if (dialect == Dialect::kVulkan) {
    s += "#version 450\n";
  } else {
    s += "#version 310 es\n";
  }
  if (code.uses_fp16) {
    s += "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
         "#extension GL_EXT_shader_16bit_storage : require\n";
  }
  if (dialect == Dialect::kGles) s += "precision highp float;\nprecision highp int;\n";
  s += fmt::format("// {}\nlayout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;\n", code.name,
                   code.workgroup[0], code.workgroup[1], code.workgroup[2]);
  for (size_t i = 0; i < code.buffers.size(); ++i) {
    const BufferDecl& b = code.buffers[i];
    s += fmt::format("layout(std430, binding = {}) {}buffer Buffer{} {{ {} {}[]; }};\n", i, Qualifier(b.access), i,
                     b.element_type, b.name);
  }
  if (!code.params.empty()) {
    s += dialect == Dialect::kVulkan ? "layout(push_constant) uniform Params {\n"
                                     : "layout(std140, binding = 0) uniform Params {\n";
    for (const std::string& member : code.params) s += "  " + member + ";\n";
    s += "} params;\n";
  }
  s += "void main() {\n" + code.body + "}\n";
  return s;
}

}  // namespace mgd::shaders
