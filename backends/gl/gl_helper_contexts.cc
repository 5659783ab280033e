// GLSL compiled on contexts of their own, one per thread. A GL driver
// compiles a context's shaders one after another (NVIDIA's ES driver does
// even with KHR_parallel_shader_compile), so a cold start with dozens of
// programs waits for the sum of their compiles. Contexts on other threads
// compile at once; what they hand back is the driver's program binary, which
// the device's own context loads in a fraction of a millisecond.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "backends/gl/gl_objects.h"
#include "base/parallel.h"

namespace mgd::gpu::gl {
namespace {

// The binary of `source` compiled and linked on the current context, its
// format first (GlProgram::binary()'s layout); empty on any failure, which
// the device's context meets again and reports.
std::vector<uint8_t> CompileToBinary(const ProgramSource& source) {
  std::vector<uint8_t> tagged;
  const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
  const GLuint program = glCreateProgram();
  if (shader != 0 && program != 0) {
    const GLchar* text = source.glsl.data();
    const GLint length = static_cast<GLint>(source.glsl.size());
    glShaderSource(shader, 1, &text, &length);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok == GL_TRUE) {
      glAttachShader(program, shader);
      glProgramParameteri(program, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
      glLinkProgram(program);
      glGetProgramiv(program, GL_LINK_STATUS, &ok);
    }
    if (ok == GL_TRUE) tagged = TaggedBinary(program);
  }
  if (program != 0) glDeleteProgram(program);
  if (shader != 0) glDeleteShader(shader);
  DrainGlErrors();
  return tagged;
}

// MGD_GL_HELPER_CONTEXTS=N caps the helpers (0 or 1: none, for a driver
// that misbehaves with several contexts); unset, one per thread allowed.
size_t HelperCap() {
  const char* env = std::getenv("MGD_GL_HELPER_CONTEXTS");
  if (env == nullptr || *env == '\0') return SIZE_MAX;
  return static_cast<size_t>(std::max(0L, std::strtol(env, nullptr, 10)));
}

}  // namespace

std::vector<HelperCompile> CompileOnHelperContexts(const DisplaySource& display,
                                                   const std::vector<const ProgramSource*>& sources, size_t threads) {
  std::vector<HelperCompile> binaries(sources.size());
  // Two at least: with one, ParallelFor would run on the calling thread,
  // whose current context (the device's, perhaps) a helper must not replace.
  const size_t helpers = std::min({threads, sources.size(), MaxThreads(), HelperCap()});
  if (helpers < 2) return binaries;
  std::atomic<size_t> next{0};
  ParallelFor(
      helpers,
      [&](size_t) {
        if (absl::StatusOr<std::unique_ptr<DisplayRef>> ref = DisplayRef::Open(display); ref.ok()) {
          absl::StatusOr<std::unique_ptr<EglContext>> context = EglContext::Create(std::move(*ref));
          if (context.ok()) {
            for (size_t i = next++; i < sources.size(); i = next++) {
              const auto t0 = std::chrono::steady_clock::now();
              binaries[i].binary = CompileToBinary(*sources[i]);
              binaries[i].ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            }
          }
        }  // the context is destroyed here, on the thread it is current on
        eglReleaseThread();
      },
      helpers);
  return binaries;
}

}  // namespace mgd::gpu::gl
