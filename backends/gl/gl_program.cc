// Compute programs: compile, link, check the shader's interface against what
// the ProgramSource declares, and keep the driver's binary for the cache.
#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "backends/gl/gl_objects.h"

namespace mgd::gpu::gl {
namespace {

// The driver's log without the trailing newlines and NULs some drivers add.
std::string TrimLog(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log.empty() ? "(the driver gave no log)" : log;
}

std::string ShaderLog(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(std::max(length, 1)), '\0');
  glGetShaderInfoLog(shader, static_cast<GLsizei>(log.size()), nullptr, log.data());
  return TrimLog(std::move(log));
}

std::string ProgramLog(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<size_t>(std::max(length, 1)), '\0');
  glGetProgramInfoLog(program, static_cast<GLsizei>(log.size()), nullptr, log.data());
  return TrimLog(std::move(log));
}

std::string ResourceName(GLuint program, GLenum interface, GLuint index) {
  char name[256] = {};
  GLsizei length = 0;
  glGetProgramResourceName(program, interface, index, sizeof(name), &length, name);
  return std::string(name, static_cast<size_t>(std::max(length, 0)));
}

// Every storage block the shader uses must sit at a binding the dispatch
// fills (0..num_bindings-1); an unfilled one would read whatever was bound last.
absl::Status CheckStorageBlocks(GLuint program, const ProgramSource& source, const std::string& where) {
  GLint count = 0;
  glGetProgramInterfaceiv(program, GL_SHADER_STORAGE_BLOCK, GL_ACTIVE_RESOURCES, &count);
  for (GLint i = 0; i < count; ++i) {
    const GLenum property = GL_BUFFER_BINDING;
    GLint binding = 0;
    glGetProgramResourceiv(program, GL_SHADER_STORAGE_BLOCK, static_cast<GLuint>(i), 1, &property, 1, nullptr,
                           &binding);
    if (binding < 0 || static_cast<uint32_t>(binding) >= source.num_bindings) {
      return absl::InvalidArgumentError(
          fmt::format("{}: storage block '{}' is at binding {}, but the program declares {} bindings", where,
                      ResourceName(program, GL_SHADER_STORAGE_BLOCK, static_cast<GLuint>(i)), binding,
                      source.num_bindings));
    }
  }
  return CheckGl(where, "glGetProgramResourceiv(GL_SHADER_STORAGE_BLOCK)");
}

// The push constants arrive as one uniform block at binding 0, as large as
// push_constant_bytes rounded up to 16 (std140's granularity).
absl::Status CheckUniformBlocks(GLuint program, const ProgramSource& source, const std::string& where) {
  GLint count = 0;
  glGetProgramiv(program, GL_ACTIVE_UNIFORM_BLOCKS, &count);
  for (GLint i = 0; i < count; ++i) {
    const GLuint index = static_cast<GLuint>(i);
    GLint binding = 0, size = 0;
    glGetActiveUniformBlockiv(program, index, GL_UNIFORM_BLOCK_BINDING, &binding);
    glGetActiveUniformBlockiv(program, index, GL_UNIFORM_BLOCK_DATA_SIZE, &size);
    const std::string name = ResourceName(program, GL_UNIFORM_BLOCK, index);
    const uint32_t available = (source.push_constant_bytes + 15u) & ~15u;
    if (binding != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: uniform block '{}' is at binding {}; only binding 0 (the push constants) is supported", where, name,
          binding));
    }
    if (source.push_constant_bytes == 0 || static_cast<uint32_t>(size) > available) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: uniform block '{}' is {} bytes, but the program declares {} bytes of push constants", where, name,
          size, source.push_constant_bytes));
    }
  }
  return CheckGl(where, "glGetActiveUniformBlockiv");
}

void FetchBinary(GlProgram& program) {
  const std::vector<uint8_t> tagged = TaggedBinary(program.id());
  if (tagged.empty()) return;
  GLenum format = 0;
  std::memcpy(&format, tagged.data(), 4);
  program.set_binary(std::vector<uint8_t>(tagged.begin() + 4, tagged.end()), format, false);
}

// Hands a binary from Program::binary() (format tag, then the driver's
// bytes) to the driver; whether it took it is known at FinishProgram. The
// driver checks it is its own (same GPU and driver build) and refuses it
// otherwise; a refusal is no error, the GLSL is compiled instead.
bool BeginBinary(GlProgram& program, const std::vector<uint8_t>& tagged) {
  if (tagged.size() <= 4) return false;
  GLenum format = 0;
  std::memcpy(&format, tagged.data(), 4);
  glProgramBinary(program.id(), format, tagged.data() + 4, static_cast<GLsizei>(tagged.size() - 4));
  program.set_binary(std::vector<uint8_t>(tagged.begin() + 4, tagged.end()), format, true);
  return true;
}

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

}  // namespace

// Failing to get a binary only costs the cache an entry, so errors are dropped.
std::vector<uint8_t> TaggedBinary(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_PROGRAM_BINARY_LENGTH, &length);
  if (length <= 0) {
    DrainGlErrors();
    return {};
  }
  std::vector<uint8_t> tagged(4 + static_cast<size_t>(length));
  GLsizei written = 0;
  GLenum format = 0;
  glGetProgramBinary(program, length, &written, &format, tagged.data() + 4);
  if (glGetError() != GL_NO_ERROR || written <= 0) {
    DrainGlErrors();
    return {};
  }
  std::memcpy(tagged.data(), &format, 4);
  tagged.resize(4 + static_cast<size_t>(written));
  return tagged;
}

PendingProgram BeginProgram(std::shared_ptr<DeviceCore> core, const ProgramSource& source, bool from_binary) {
  const auto t0 = Clock::now();
  PendingProgram p;
  p.source = &source;
  p.core = core;
  DrainGlErrors();
  if (from_binary && core->binary_formats && !source.binary.empty()) {
    const GLuint id = glCreateProgram();
    if (id == 0) {
      p.status = absl::InternalError(fmt::format("program '{}': glCreateProgram returned 0", source.name));
      return p;
    }
    p.program = std::make_unique<GlProgram>(core, source, id);
    if (!BeginBinary(*p.program, source.binary)) p.program.reset();
  }
  if (p.program == nullptr) {  // linked by LinkPending once compiled
    p.shader = glCreateShader(GL_COMPUTE_SHADER);
    if (p.shader != 0) {
      // With an explicit length, so a NUL inside the source cannot cut it short.
      const GLchar* text = source.glsl.data();
      const GLint length = static_cast<GLint>(source.glsl.size());
      glShaderSource(p.shader, 1, &text, &length);
      glCompileShader(p.shader);
    }
  }
  p.ms = Ms(t0, Clock::now());
  return p;
}

void LinkPending(PendingProgram& p) {
  if (!p.status.ok() || p.program != nullptr) return;
  const auto t0 = Clock::now();
  const ProgramSource& source = *p.source;
  const std::string where = fmt::format("program '{}'", source.name);
  if (p.shader == 0) {
    absl::Status status = CheckGl(where, "glCreateShader(GL_COMPUTE_SHADER)");
    p.status = status.ok() ? absl::InternalError(where + ": glCreateShader(GL_COMPUTE_SHADER) returned 0") : status;
    return;
  }
  GLint compiled = GL_FALSE;
  glGetShaderiv(p.shader, GL_COMPILE_STATUS, &compiled);
  if (compiled != GL_TRUE) {
    p.status = absl::InvalidArgumentError(fmt::format("{}: compile failed: {}", where, ShaderLog(p.shader)));
    DrainGlErrors();
    return;
  }
  const GLuint id = glCreateProgram();
  if (id == 0) {
    p.status = absl::InternalError(where + ": glCreateProgram returned 0");
    return;
  }
  p.program = std::make_unique<GlProgram>(p.core, source, id);
  glAttachShader(id, p.shader);
  // The hint must precede the link for glGetProgramBinary to work later.
  if (p.core->binary_formats) glProgramParameteri(id, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
  glLinkProgram(id);
  p.ms += Ms(t0, Clock::now());
}

absl::StatusOr<std::unique_ptr<GlProgram>> FinishProgram(PendingProgram pending) {
  LinkPending(pending);  // a no-op when the caller linked it already
  const auto t0 = Clock::now();
  const ProgramSource& source = *pending.source;
  const std::shared_ptr<DeviceCore>& core = pending.core;
  const std::string where = fmt::format("program '{}'", source.name);
  // The shader goes however this returns; a linked program keeps what it needs.
  struct DeleteShader {
    GLuint shader;
    ~DeleteShader() {
      if (shader != 0) glDeleteShader(shader);
    }
  } delete_shader{pending.shader};
  if (!pending.status.ok()) return pending.status;
  std::unique_ptr<GlProgram> program = std::move(pending.program);
  GLint linked = GL_FALSE;
  glGetProgramiv(program->id(), GL_LINK_STATUS, &linked);
  const bool failed = glGetError() != GL_NO_ERROR || linked != GL_TRUE;
  if (failed && !program->from_binary()) {
    const std::string log = ProgramLog(program->id());
    DrainGlErrors();
    return absl::InvalidArgumentError(fmt::format("{}: link failed: {}", where, log));
  }
  if (failed) {  // the driver refused the binary: the GLSL after all
    DrainGlErrors();
    return FinishProgram(BeginProgram(core, source, /*from_binary=*/false));
  }
  if (pending.shader != 0) glDetachShader(program->id(), pending.shader);
  const GLuint id = program->id();
  const auto t1 = Clock::now();

  GLint size[3] = {0, 0, 0};
  glGetProgramiv(id, GL_COMPUTE_WORK_GROUP_SIZE, size);
  if (absl::Status status = CheckGl(where, "glGetProgramiv(GL_COMPUTE_WORK_GROUP_SIZE)"); !status.ok()) return status;
  const std::array<uint32_t, 3> workgroup = {static_cast<uint32_t>(std::max(size[0], 0)),
                                             static_cast<uint32_t>(std::max(size[1], 0)),
                                             static_cast<uint32_t>(std::max(size[2], 0))};
  program->set_workgroup_size(workgroup);
  if (absl::Status status = CheckProgramLimits(core->info, source, workgroup); !status.ok()) return status;
  if (absl::Status status = CheckStorageBlocks(id, source, where); !status.ok()) return status;
  if (absl::Status status = CheckUniformBlocks(id, source, where); !status.ok()) return status;
  const auto t2 = Clock::now();
  if (core->binary_formats && !program->from_binary()) FetchBinary(*program);
  program->set_build_feedback({false, false, 0,
                               {{program->from_binary() ? "binary" : "compile and link", pending.ms + Ms(t0, t1)},
                                {"interface checks", Ms(t1, t2)},
                                {"fetching the binary", Ms(t2, Clock::now())}}});
  return program;
}

absl::StatusOr<std::unique_ptr<GlProgram>> BuildProgram(std::shared_ptr<DeviceCore> core,
                                                        const ProgramSource& source) {
  return FinishProgram(BeginProgram(std::move(core), source, /*from_binary=*/true));
}

std::vector<uint8_t> GlProgram::binary() const {
  if (binary_.empty()) return {};
  std::vector<uint8_t> tagged(4 + binary_.size());
  std::memcpy(tagged.data(), &binary_format_, 4);
  std::memcpy(tagged.data() + 4, binary_.data(), binary_.size());
  return tagged;
}

}  // namespace mgd::gpu::gl
