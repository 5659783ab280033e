// Compiles each GLSL file it is given on its own, as glslangValidator would
// (NAME.vulkan.comp: Vulkan GLSL to SPIR-V, like `glslangValidator -V`;
// NAME.gl.comp: OpenGL ES GLSL as its #version says), but in one process:
// glslang builds its built-in symbol tables once per process, which costs
// glslangValidator a third of a second per file and the dump test minutes.
//   glsl_check FILE... (or the paths one per line on stdin)
// Prints each file's errors and exits 1 if any file fails to compile.
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file's compile errors, or "" when it compiles.
std::string Compile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot be read";
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const bool vulkan = EndsWith(path, ".vulkan.comp");
  glslang::TShader shader(EShLangCompute);
  const char* strings[] = {source.c_str()};
  const char* names[] = {path.c_str()};
  shader.setStringsWithLengthsAndNames(strings, nullptr, names, 1);
  auto messages = EShMsgDefault;
  if (vulkan) {
    shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
    shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
    shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
    messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  }
  if (!shader.parse(GetDefaultResources(), 100, false, messages)) return shader.getInfoLog();
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) return program.getInfoLog();
  if (vulkan) {
    std::vector<unsigned> spirv;
    spv::SpvBuildLogger logger;
    glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger);
    if (spirv.empty()) return "no SPIR-V: " + logger.getAllMessages();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty()) paths.push_back(line);
    }
  }
  glslang::InitializeProcess();
  int failures = 0;
  for (const std::string& path : paths) {
    const std::string errors = Compile(path);
    if (errors.empty()) continue;
    std::printf("ERROR: %s does not compile:\n%s\n", path.c_str(), errors.c_str());
    ++failures;
  }
  glslang::FinalizeProcess();
  std::printf("glsl_check: %zu file(s), %d failure(s)\n", paths.size(), failures);
  return failures == 0 ? 0 : 1;
}
