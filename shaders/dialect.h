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

// The element type of a constant buffer of vec4s of 8-bit integers, four
// to an int: NAME_at(i) is element i as a vec4 of their values.
inline constexpr const char* kInt8Vec4 = "i8vec4";

struct BufferDecl {
  std::string name;          // the array's name in the body: name[i]
  std::string element_type;  // "float", "vec4", ...; ignored for activations
  BufferAccess access = BufferAccess::kRead;
  bool activation = false;   // a PHWC4 tensor: use NAME_at / NAME_set
};

// A number the body names instead of spelling: a size, stride, count or
// constant its generator declares (ShaderParams). Emit defines NAME as the
// literal, which the driver folds like any constant, or, once program
// sharing has found that the number differs between shaders otherwise
// alike, as a member of the parameter block (push constants on Vulkan, a
// uniform block on GLES) that the dispatch fills in.
struct ShaderParam {
  std::string name;     // a macro: capitals, digits and underscores
  bool is_float = false;
  uint32_t bits = 0;    // the int32 or the float's bits
  std::string member;   // empty: inlined; else read from params.MEMBER (not NAME)
};

// A body's declared numbers. Int and Float return the name to write in the
// body; a name declared again with the same value is the same parameter,
// with another value a new one (NAME_2, ...), so that helpers may declare
// the sizes of the tensors they index each time. Numbers a constant
// expression needs (`const` initializers, array sizes) are written as
// literals instead: they cannot come from the parameter block. The order of
// `list` is the order of declaration; it changes no program's meaning.
struct ShaderParams {
  std::vector<ShaderParam> list;

  // `name` is upper-cased. A value past int32 is returned as its literal:
  // no parameter holds it.
  std::string Int(const std::string& name, int64_t value);
  // Non-finite values too (Emit spells them by their bits).
  std::string Float(const std::string& name, float value);
  // Declares `other`'s parameters here (a fused tail's, named apart).
  void Append(const ShaderParams& other);
};

struct ShaderCode {
  std::string name;                        // names the program in errors and dumps
  std::array<uint32_t, 3> workgroup{8, 8, 1};
  std::vector<BufferDecl> buffers;         // binding i = buffers[i]
  // The numbers the body names; those with a `member` make up the
  // parameter block (4-byte scalars only, so that the std140 uniform block on
  // GLES and the push-constant block on Vulkan lay them out alike).
  ShaderParams params;
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
  // The body sums 8-bit integers: int mgd_quantized(vec4 v, float
  // inv_scale, int zero_point) packs v's values on that grid into an int's
  // four bytes (x lowest), and int mgd_dot4x8(int a, int b) is the dot
  // product of two such ints: OpSDot on Vulkan (the device must have
  // shaderIntegerDotProduct), shifts and multiplies on GLES.
  bool int8_dot = false;
};

std::string Emit(Dialect dialect, const ShaderCode& code);

// The parameter block's members in order: the first parameter that names
// each distinct member.
std::vector<const ShaderParam*> BlockMembers(const ShaderCode& code);
// Bytes of the parameter block: 4 per member.
inline uint32_t ParamsBytes(const ShaderCode& code) { return static_cast<uint32_t>(4 * BlockMembers(code).size()); }
// The parameter block's contents, as the dispatch uploads them.
std::vector<uint8_t> ParamBlock(const ShaderCode& code);

// A float literal GLSL parses the same in both dialects and that reads back
// as exactly `value` (Inf and NaN by their bits: GLSL has no literal for
// them).
std::string FloatLiteral(float value);

// Bytes of one PHWC4 vec4 in storage.
inline uint32_t Vec4Bytes(bool half_storage) { return half_storage ? 8 : 16; }

}  // namespace mgd::shaders
