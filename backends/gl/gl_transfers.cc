#include "backends/gl/gl_transfers.h"

#include <fmt/format.h>

#include <cstring>

namespace mgd::gpu::gl {
namespace {

// "{call}: upload 3 (64 bytes at offset 16)"; made only for an error, as
// every invoke checks its requests.
template <typename Request>
std::string RequestName(std::string_view call, std::string_view kind, size_t index, const Request& r) {
  return fmt::format("{}: {} {} ({} bytes at offset {})", call, kind, index, r.bytes, r.offset);
}

template <typename Request>
absl::StatusOr<std::vector<const GlBuffer*>> CheckedBuffers(const DeviceCore& core, std::string_view call,
                                                            std::string_view kind,
                                                            const std::vector<Request>& requests) {
  std::vector<const GlBuffer*> buffers;
  buffers.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    const auto failed = [&](std::string_view why) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", RequestName(call, kind, i, r), why));
    };
    if (r.buffer == nullptr) return failed("no buffer");
    const GlBuffer* gl = OwnBuffer(core, r.buffer);
    if (gl == nullptr) return failed("the buffer does not belong to this GL device");
    const size_t size = gl->size();
    if (r.bytes > size || r.offset > size - r.bytes) {
      return failed(fmt::format("{} bytes at offset {} do not fit in a {}-byte buffer", r.bytes, r.offset, size));
    }
    if (r.data == nullptr && r.bytes > 0) return failed("no data pointer");
    buffers.push_back(gl);
  }
  return buffers;
}

}  // namespace

const GlBuffer* OwnBuffer(const DeviceCore& core, const Buffer* buffer) {
  const auto* gl = dynamic_cast<const GlBuffer*>(buffer);
  return gl != nullptr && gl->core() == &core ? gl : nullptr;
}

absl::StatusOr<std::vector<const GlBuffer*>> CheckedTargets(const DeviceCore& core, std::string_view call,
                                                            const std::vector<Device::UploadRequest>& uploads) {
  return CheckedBuffers(core, call, "upload", uploads);
}

absl::StatusOr<std::vector<const GlBuffer*>> CheckedSources(const DeviceCore& core, std::string_view call,
                                                            const std::vector<Device::DownloadRequest>& downloads) {
  return CheckedBuffers(core, call, "download", downloads);
}

absl::Status UploadOnThread(const std::vector<const GlBuffer*>& targets,
                            const std::vector<Device::UploadRequest>& uploads, std::string_view call) {
  DrainGlErrors();
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  for (size_t i = 0; i < uploads.size(); ++i) {
    if (uploads[i].bytes == 0) continue;
    glBindBuffer(GL_COPY_WRITE_BUFFER, targets[i]->id());
    glBufferSubData(GL_COPY_WRITE_BUFFER, static_cast<GLintptr>(uploads[i].offset),
                    static_cast<GLsizeiptr>(uploads[i].bytes), uploads[i].data);
  }
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  return CheckGl(call, "glBufferSubData");
}

absl::Status DownloadOnThread(const std::vector<const GlBuffer*>& sources,
                              const std::vector<Device::DownloadRequest>& downloads, std::string_view call) {
  DrainGlErrors();
  // ES has no glGetBufferSubData: each range is mapped for reading.
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  absl::Status status;
  for (size_t i = 0; i < downloads.size() && status.ok(); ++i) {
    const Device::DownloadRequest& d = downloads[i];
    if (d.bytes == 0) continue;
    glBindBuffer(GL_COPY_READ_BUFFER, sources[i]->id());
    const void* mapped = glMapBufferRange(GL_COPY_READ_BUFFER, static_cast<GLintptr>(d.offset),
                                          static_cast<GLsizeiptr>(d.bytes), GL_MAP_READ_BIT);
    if (const GLenum error = glGetError(); error != GL_NO_ERROR) {
      status = GlFailure(error, RequestName(call, "download", i, d), "glMapBufferRange");
    } else if (mapped == nullptr) {
      status = absl::InternalError(RequestName(call, "download", i, d) + ": glMapBufferRange returned null");
    }
    if (mapped == nullptr) continue;
    std::memcpy(d.data, mapped, d.bytes);
    if (glUnmapBuffer(GL_COPY_READ_BUFFER) != GL_TRUE && status.ok()) {
      status = absl::DataLossError(RequestName(call, "download", i, d) +
                                   ": the buffer's contents were lost while mapped (glUnmapBuffer)");
    }
  }
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  return status;
}

}  // namespace mgd::gpu::gl
