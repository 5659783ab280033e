// GLSL (Vulkan dialect) -> SPIR-V in process with glslang; the result is
// always validated with SPIRV-Tools and, in release builds, optimized with its
// performance passes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mgd::gpu::vulkan {

struct SpirvModule {
  std::vector<uint32_t> words;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};  // from OpExecutionMode LocalSize
};

// `name` names the program in errors; glslang's messages carry line numbers.
// With `preserve_inf_nan` the module asks for IEEE Inf and NaN in 32-bit
// float arithmetic (SPV_KHR_float_controls' SignedZeroInfNanPreserve):
// without it Vulkan lets a driver assume there are none, and NVIDIA's folds
// x * 0 to 0 even when x is Inf (docs/numerics.md, "NaN and Inf"). Only for
// devices with shaderSignedZeroInfNanPreserveFloat32.
absl::StatusOr<SpirvModule> CompileGlsl(const std::string& name, const std::string& glsl, bool optimize,
                                        bool preserve_inf_nan = false);

// glslang's first compile in the process (its built-in symbol tables),
// done now if it has not been; later compiles run in parallel.
void WarmUpGlslang();

// SPIR-V from elsewhere (a cache): validated with SPIRV-Tools, its workgroup
// size read; nothing else is trusted.
absl::StatusOr<SpirvModule> LoadSpirv(const std::string& name, std::vector<uint32_t> words);

// The workgroup size its OpExecutionMode LocalSize declares ({1,1,1} if
// none); safe on words that were never validated.
std::array<uint32_t, 3> SpirvLocalSize(const std::vector<uint32_t>& words);

// Whether the module declares OpCapability `capability`; safe on words that
// were never validated.
bool SpirvDeclaresCapability(const std::vector<uint32_t>& words, uint32_t capability);
inline constexpr uint32_t kSpirvDotProductCapability = 6019;  // DotProduct (SPV_KHR_integer_dot_product)

// SPIR-V disassembly (for dumps and error messages).
std::string DisassembleSpirv(const std::vector<uint32_t>& words);

}  // namespace mgd::gpu::vulkan
