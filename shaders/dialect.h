// One shader source, emitted in both dialects: GLSL 4.50 for Vulkan and GLSL
// ES 3.10 for GLES. A generator fills a ShaderCode (buffers, parameter block,
// workgroup, body); Emit writes the declarations each API needs around it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mgd::shaders {

enum class Dialect { kVulkan, kGles };

enum class BufferAccess { kRead, kWrite, kReadWrite };

struct BufferDecl {
  std::string name;          // the array's name in the body: name[i]
  std::string element_type;  // "float", "vec4", "f16vec4", ...
  BufferAccess access = BufferAccess::kRead;
};

struct ShaderCode {
  std::string name;                        // names the program in errors and dumps
  std::array<uint32_t, 3> workgroup{8, 8, 1};
  std::vector<BufferDecl> buffers;         // binding i = buffers[i]
  // Members of the small parameter block (4-byte scalars only, so that the
  // std140 uniform block on GLES and the push-constant block on Vulkan lay
  // them out the same way), e.g. {"int width", "float scale"}; read in the
  // body as params.width.
  std::vector<std::string> params;
  std::string body;                        // the statements of main()
  bool uses_fp16 = false;                  // needs the explicit fp16 / 16-bit storage extensions
};

std::string Emit(Dialect dialect, const ShaderCode& code);

// Bytes of the parameter block: 4 per member.
inline uint32_t ParamsBytes(const ShaderCode& code) { return static_cast<uint32_t>(4 * code.params.size()); }

}  // namespace mgd::shaders
