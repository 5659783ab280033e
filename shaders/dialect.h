// One shader source, emitted in both dialects: GLSL 4.50 for Vulkan and GLSL
// ES 3.10 for GLES. A generator fills a ShaderCode (buffers, parameter block,
// workgroup, body); Emit writes the declarations each API needs around it.
//
// Activation buffers (PHWC4 tensors) are read and written only through
// NAME_at(i) -> vec4 and NAME_set(i, v), so that one body serves fp32 storage
// (vec4) and fp16 storage. fp16 is stored as two packHalf2x16 words per vec4:
// core in both GLSL ES 3.10 and GLSL 4.50, so it needs no extension (NVIDIA's
// GLES driver exposes no explicit fp16 types) and halves the bytes moved.
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
  std::string element_type;  // "float", "vec4", ...; ignored for activations
  BufferAccess access = BufferAccess::kRead;
  bool activation = false;   // a PHWC4 tensor: use NAME_at / NAME_set
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
  std::string shared;                      // declarations before main(): shared arrays, helpers
  std::string body;                        // the statements of main()
  bool half_storage = false;               // activations stored as fp16
  // Default float precision mediump (fp16 arithmetic where the GPU has it;
  // RelaxedPrecision in SPIR-V). Accumulators that must stay fp32 are
  // declared `highp` by the generator.
  bool mediump = false;
  // Keep loops rolled (Vulkan: [[dont_unroll]]). For software GPUs, whose
  // JIT spends a third less time on rolled loops; hardware drivers decide.
  // The body marks each of its loops `MGD_LOOP for (...)`; Emit defines
  // MGD_LOOP as the attribute or as nothing.
  bool dont_unroll = false;
};

std::string Emit(Dialect dialect, const ShaderCode& code);

// Bytes of the parameter block: 4 per member.
inline uint32_t ParamsBytes(const ShaderCode& code) { return static_cast<uint32_t>(4 * code.params.size()); }

// Bytes of one PHWC4 vec4 in storage.
inline uint32_t Vec4Bytes(bool half_storage) { return half_storage ? 8 : 16; }

}  // namespace mgd::shaders
