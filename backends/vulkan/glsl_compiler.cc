#include "backends/vulkan/glsl_compiler.h"

#include <fmt/format.h>
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <atomic>
#include <mutex>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

namespace mgd::gpu::vulkan {
namespace {

// glslang keeps process-wide state: it is initialized once, and its first
// compile builds the built-in symbol tables, which later compiles share.
// That first compile runs alone; after it, compiles on their own TShader
// and TProgram are independent (glslang's maintainers say so, and shaderc
// dropped its lock in 2020; Debian 12's glslang 11.13 has the thread-safety
// fixes of 11.8), so the programs of a prepare compile on all cores.
std::mutex& GlslangMutex() {
  static std::mutex mutex;
  static bool initialized = [] { return glslang::InitializeProcess(); }();
  (void)initialized;
  return mutex;
}
std::atomic<bool>& GlslangWarm() {
  static std::atomic<bool> warm{false};
  return warm;
}

constexpr spv_target_env kTargetEnv = SPV_ENV_VULKAN_1_1;

// glslang's default resources cap workgroups at 1024x1024x64, below what
// some devices allow; CheckProgramLimits holds every program to the device's
// own limits, so the front end accepts any size.
const TBuiltInResource& Resources() {
  static const TBuiltInResource resources = [] {
    TBuiltInResource r = *GetDefaultResources();
    r.maxComputeWorkGroupSizeX = r.maxComputeWorkGroupSizeY = r.maxComputeWorkGroupSizeZ = 65535;
    return r;
  }();
  return resources;
}

// SPIRV-Tools' messages, appended to `diagnostics` with where they point.
spvtools::MessageConsumer Collect(std::string& diagnostics) {
  return [&diagnostics](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
    diagnostics += fmt::format("[word {}] {}; ", position.index, message);
  };
}

}  // namespace

// The execution mode SignedZeroInfNanPreserve (4461) for 32-bit floats and
// its capability (4466), through GL_EXT_spirv_intrinsics, after #version;
// #line keeps error messages on the source's own line numbers.
std::string WithInfNanPreserved(const std::string& glsl) {
  const size_t line_end = glsl.find('\n');
  if (glsl.rfind("#version", 0) != 0 || line_end == std::string::npos) return glsl;
  return glsl.substr(0, line_end + 1) +
         "#extension GL_EXT_spirv_intrinsics : require\n"
         "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4466], 4461, 32);\n"
         "#line 2\n" +
         glsl.substr(line_end + 1);
}

absl::StatusOr<SpirvModule> CompileGlsl(const std::string& name, const std::string& source, bool optimize,
                                        bool preserve_inf_nan) {
  const std::string glsl = preserve_inf_nan ? WithInfNanPreserved(source) : source;
  SpirvModule module;
  {
    std::unique_lock<std::mutex> first(GlslangMutex(), std::defer_lock);
    if (!GlslangWarm().load(std::memory_order_acquire)) first.lock();
    glslang::TShader shader(EShLangCompute);
    const char* text = glsl.c_str();
    const char* names[] = {name.c_str()};
    shader.setStringsWithLengthsAndNames(&text, nullptr, names, 1);
    shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
    shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
    shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
    const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
    if (!shader.parse(&Resources(), 450, false, messages)) {
      return absl::InvalidArgumentError(
          fmt::format("program '{}': GLSL compile failed: {}", name, shader.getInfoLog()));
    }
    glslang::TProgram program;
    program.addShader(&shader);
    if (!program.link(messages)) {
      return absl::InvalidArgumentError(fmt::format("program '{}': GLSL link failed: {}", name, program.getInfoLog()));
    }
    glslang::SpvOptions options;
    options.validate = false;  // SPIRV-Tools below
    glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), module.words, &options);
    if (first.owns_lock()) GlslangWarm().store(true, std::memory_order_release);
  }
  spvtools::SpirvTools tools(kTargetEnv);
  std::string diagnostics;
  tools.SetMessageConsumer(Collect(diagnostics));
  // Validated once on each side of the optimizer, which validates its input
  // itself (a third pass cost 10% of a cold prepare's CPU time on lavapipe).
  if (optimize) {
    spvtools::Optimizer optimizer(kTargetEnv);
    optimizer.SetMessageConsumer(Collect(diagnostics));
    optimizer.RegisterPerformancePasses();
    std::vector<uint32_t> optimized;
    if (!optimizer.Run(module.words.data(), module.words.size(), &optimized)) {
      return absl::InternalError(fmt::format("program '{}': SPIR-V validation or optimization failed: {}", name, diagnostics));
    }
    module.words = std::move(optimized);
  }
  if (!tools.Validate(module.words)) {
    return absl::InternalError(fmt::format("program '{}': SPIR-V validation failed: {}", name, diagnostics));
  }
  module.workgroup_size = SpirvLocalSize(module.words);
  return module;
}

void WarmUpGlslang() {
  if (GlslangWarm().load(std::memory_order_acquire)) return;
  (void)CompileGlsl("glslang warm-up", "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n", false);
}

absl::StatusOr<SpirvModule> LoadSpirv(const std::string& name, std::vector<uint32_t> words) {
  spvtools::SpirvTools tools(kTargetEnv);
  std::string diagnostics;
  tools.SetMessageConsumer(Collect(diagnostics));
  if (words.empty() || !tools.Validate(words)) {
    return absl::InvalidArgumentError(fmt::format("program '{}': the given SPIR-V does not validate: {}", name, diagnostics));
  }
  SpirvModule module;
  module.workgroup_size = SpirvLocalSize(words);
  module.words = std::move(words);
  return module;
}

std::array<uint32_t, 3> SpirvLocalSize(const std::vector<uint32_t>& words) {
  constexpr uint32_t kOpExecutionMode = 16, kLocalSize = 17;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || count > words.size() - i) break;
    if (opcode == kOpExecutionMode && count >= 6 && words[i + 2] == kLocalSize) {
      return {words[i + 3], words[i + 4], words[i + 5]};
    }
    i += count;
  }
  return {1, 1, 1};
}

bool SpirvDeclaresCapability(const std::vector<uint32_t>& words, uint32_t capability) {
  constexpr uint32_t kOpCapability = 17;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || count > words.size() - i) break;
    if (opcode == kOpCapability && count == 2 && words[i + 1] == capability) return true;
    i += count;
  }
  return false;
}

std::string DisassembleSpirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(kTargetEnv);
  std::string text;
  if (!tools.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT)) {
    return "<invalid SPIR-V>";
  }
  return text;
}

}  // namespace mgd::gpu::vulkan
