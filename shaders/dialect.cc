#include "shaders/dialect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace mgd::shaders {
namespace {

std::string Capitals(const std::string& name) {
  std::string s = name;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The name under which `value` is declared: `name`, or the first NAME_k not
// taken by another value.
std::string Declare(ShaderParams& params, const std::string& name, bool is_float, uint32_t bits) {
  const std::string base = Capitals(name);
  for (int k = 1;; ++k) {
    const std::string candidate = k == 1 ? base : fmt::format("{}_{}", base, k);
    auto same = [&](const ShaderParam& p) { return p.name == candidate; };
    auto it = std::find_if(params.list.begin(), params.list.end(), same);
    if (it == params.list.end()) {
      params.list.push_back({candidate, is_float, bits, ""});
      return candidate;
    }
    if (it->is_float == is_float && it->bits == bits) return candidate;
  }
}

std::string Literal(const ShaderParam& p) {
  if (!p.is_float) return fmt::format("{}", static_cast<int32_t>(p.bits));
  float v;
  std::memcpy(&v, &p.bits, 4);
  return FloatLiteral(v);
}

const char* Qualifier(BufferAccess access) {
  switch (access) {
    case BufferAccess::kRead: return "readonly ";
    case BufferAccess::kWrite: return "writeonly ";
    case BufferAccess::kReadWrite: return "";
  }
  return "";
}

}  // namespace

std::string ShaderParams::Int(const std::string& name, int64_t value) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return fmt::format("{}", value);
  }
  return Declare(*this, name, false, static_cast<uint32_t>(static_cast<int32_t>(value)));
}

std::string ShaderParams::Float(const std::string& name, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return Declare(*this, name, true, bits);
}

void ShaderParams::Append(const ShaderParams& other) {
  for (const ShaderParam& p : other.list) list.push_back(p);
}

std::vector<const ShaderParam*> BlockMembers(const ShaderCode& code) {
  std::vector<const ShaderParam*> members;
  std::set<std::string> seen;
  for (const ShaderParam& p : code.params.list) {
    if (!p.member.empty() && seen.insert(p.member).second) members.push_back(&p);
  }
  return members;
}

std::vector<uint8_t> ParamBlock(const ShaderCode& code) {
  std::vector<uint8_t> bytes;
  for (const ShaderParam* p : BlockMembers(code)) {
    const size_t at = bytes.size();
    bytes.resize(at + 4);
    std::memcpy(bytes.data() + at, &p->bits, 4);
  }
  return bytes;
}

std::string FloatLiteral(float value) {
  if (!std::isfinite(value)) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return fmt::format("uintBitsToFloat(0x{:08x}u)", bits);
  }
  // Exact round trip: 9 significant digits, always with a decimal point or exponent.
  std::string s = fmt::format("{:.9g}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Emit(Dialect dialect, const ShaderCode& code) {
  std::string s = dialect == Dialect::kVulkan ? "#version 450\n" : "#version 310 es\n";
  // Both dialects accept precision statements; GLSL 4.50 for Vulkan turns
  // mediump into RelaxedPrecision.
  if (dialect == Dialect::kVulkan && code.dont_unroll) s += "#extension GL_EXT_control_flow_attributes : require\n";
  if (dialect == Dialect::kVulkan && code.int8_dot) {
    // OpSDot (4450) with PackedVectorFormat4x8Bit (0), through
    // GL_EXT_spirv_intrinsics: Debian's glslang has no GLSL spelling of it.
    s += "#extension GL_EXT_spirv_intrinsics : require\n"
         "spirv_instruction(extensions = [\"SPV_KHR_integer_dot_product\"], capabilities = [6019, 6018], id = 4450)\n"
         "int mgd_sdot(int a, int b, spirv_literal int packed_vector_format);\n"
         "#define mgd_dot4x8(a, b) mgd_sdot(a, b, 0)\n";
  }
  s += code.mediump ? "precision mediump float;\n" : "precision highp float;\n";
  s += "precision highp int;\n";
  // No name: dispatches alike but for it share one program.
  s += fmt::format("layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;\n", code.workgroup[0],
                   code.workgroup[1], code.workgroup[2]);
  // The generators mark every loop MGD_LOOP (see ShaderCode::dont_unroll).
  s += dialect == Dialect::kVulkan && code.dont_unroll ? "#define MGD_LOOP [[dont_unroll]]\n" : "#define MGD_LOOP\n";
  // Generators write declared numbers by name (ShaderParams).
  for (const ShaderParam& p : code.params.list) {
    s += fmt::format("#define {} {}\n", p.name, p.member.empty() ? Literal(p) : "params." + p.member);
  }
  if (code.half_storage) {
    s += "vec4 mgd_unpack(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }\n"
         "uvec2 mgd_pack(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }\n";
  }
  if (code.int8_dot) {
    s += "int mgd_quantized(highp vec4 v, highp float inv_scale, int zero_point) {\n"
         "  ivec4 q = clamp(ivec4(roundEven(v * inv_scale)) + zero_point, -128, 127);\n"
         "  return (q.x & 255) | ((q.y & 255) << 8) | ((q.z & 255) << 16) | (q.w << 24);\n"
         "}\n";
    if (dialect == Dialect::kGles) {
      s += "int mgd_dot4x8(int a, int b) {\n"
           "  ivec4 x = (ivec4(a) << ivec4(24, 16, 8, 0)) >> 24, y = (ivec4(b) << ivec4(24, 16, 8, 0)) >> 24;\n"
           "  return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;\n"
           "}\n";
    }
  }
  for (size_t i = 0; i < code.buffers.size(); ++i) {
    const BufferDecl& b = code.buffers[i];
    // Weights (vec4 constants) are stored as fp16 too when activations are.
    const bool half = code.half_storage && (b.activation || b.element_type == "vec4");
    // An i8vec4 holds a vec4 of 8-bit integers in one int (x in the lowest
    // byte): filters of int8 models, scaled by their generator.
    const bool int8 = b.element_type == kInt8Vec4;
    const std::string type = half ? "uvec2" : b.activation ? "highp vec4" : int8 ? "highp int" : b.element_type;
    s += fmt::format("layout(std430, binding = {}) {}buffer Buffer{} {{ {} {}[]; }};\n", i, Qualifier(b.access), i,
                     type, b.name);
    if (!b.activation) {
      if (b.element_type == "vec4") s += fmt::format("#define {0}_at(i) {1}\n", b.name, half ? "mgd_unpack(" + b.name + "[i])" : b.name + "[i]");
      if (int8) s += fmt::format("#define {0}_at(i) vec4((ivec4({0}[i]) << ivec4(24, 16, 8, 0)) >> 24)\n", b.name);
      continue;
    }
    if (code.half_storage) {
      s += fmt::format("#define {0}_at(i) mgd_unpack({0}[i])\n#define {0}_set(i, v) {0}[i] = mgd_pack(v)\n", b.name);
    } else {
      s += fmt::format("#define {0}_at(i) {0}[i]\n#define {0}_set(i, v) {0}[i] = (v)\n", b.name);
    }
  }
  if (const std::vector<const ShaderParam*> members = BlockMembers(code); !members.empty()) {
    s += dialect == Dialect::kVulkan ? "layout(push_constant) uniform Params {\n"
                                     : "layout(std140, binding = 0) uniform Params {\n";
    for (const ShaderParam* p : members) s += fmt::format("  highp {} {};\n", p->is_float ? "float" : "int", p->member);
    s += "} params;\n";
  }
  s += code.shared;
  s += "void main() {\n" + code.body + "}\n";
  return s;
}

}  // namespace mgd::shaders
