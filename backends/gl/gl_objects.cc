#include "backends/gl/gl_objects.h"

#include <fmt/format.h>

namespace mgd::gpu::gl {

const char* GlErrorName(GLenum error) {
  switch (error) {
    case GL_NO_ERROR: return "GL_NO_ERROR";
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "unknown GL error";
  }
}

void DrainGlErrors() {
  // Bounded: a lost context may report errors forever.
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
}

absl::Status CheckGl(std::string_view where, const char* call) {
  const GLenum error = glGetError();
  return error == GL_NO_ERROR ? absl::OkStatus() : GlFailure(error, where, call);
}

absl::Status GlFailure(GLenum error, std::string_view where, const char* call) {
  DrainGlErrors();
  const std::string message = fmt::format("{}: {} failed: {}", where, call, GlErrorName(error));
  return error == GL_OUT_OF_MEMORY ? absl::ResourceExhaustedError(message) : absl::InternalError(message);
}

GlBuffer::~GlBuffer() {
  if (!owned_) return;
  const GLuint id = id_;
  core_->Release([id] { glDeleteBuffers(1, &id); });
}

GlProgram::~GlProgram() {
  const GLuint id = id_;
  core_->Release([id] { glDeleteProgram(id); });
}

GlRecording::~GlRecording() {
  std::vector<GLuint> params;
  for (const Step& step : steps_) {
    if (step.params != 0) params.push_back(step.params);
  }
  core_->Release([&] {
    if (!params.empty()) glDeleteBuffers(static_cast<GLsizei>(params.size()), params.data());
    if (!queries_.empty()) glDeleteQueries(static_cast<GLsizei>(queries_.size()), queries_.data());
  });
}

std::vector<uint64_t> GlRecording::timestamps() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timestamps_;
}

void GlRecording::set_timestamps(std::vector<uint64_t> timestamps) {
  std::lock_guard<std::mutex> lock(mutex_);
  timestamps_ = std::move(timestamps);
}

std::vector<double> GlRecording::dispatch_start_ns() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<double> ns;
  for (size_t i = 0; i + 1 < timestamps_.size(); i += 2) {
    ns.push_back(timestamps_[i] > timestamps_[0] ? static_cast<double>(timestamps_[i] - timestamps_[0]) : 0.0);
  }
  return ns;
}

std::vector<double> GlRecording::dispatch_ns() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<double> ns;
  for (size_t i = 0; i + 1 < timestamps_.size(); i += 2) {
    const uint64_t begin = timestamps_[i], end = timestamps_[i + 1];
    ns.push_back(end > begin ? static_cast<double>(end - begin) : 0.0);
  }
  return ns;
}

}  // namespace mgd::gpu::gl
