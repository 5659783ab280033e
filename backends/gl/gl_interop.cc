#include "backends/gl/gl_interop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <string>

namespace mgd::gpu::gl {
namespace {

bool HasEglExtension(EGLDisplay display, const char* name) {
  const char* list = eglQueryString(display, EGL_EXTENSIONS);
  if (list == nullptr) return false;
  const std::string all = std::string(" ") + list + " ";
  return all.find(std::string(" ") + name + " ") != std::string::npos;
}

absl::Status EglFailed(const char* call) {
  return absl::InternalError(fmt::format("{} failed: {}", call, EglErrorName(eglGetError())));
}

}  // namespace

EglSyncFunctions LoadEglSync(EGLDisplay display) {
  EglSyncFunctions f;
  if (!HasEglExtension(display, "EGL_KHR_fence_sync") || !HasEglExtension(display, "EGL_KHR_wait_sync")) return f;
  f.create = reinterpret_cast<PFNEGLCREATESYNCKHRPROC>(eglGetProcAddress("eglCreateSyncKHR"));
  f.destroy = reinterpret_cast<PFNEGLDESTROYSYNCKHRPROC>(eglGetProcAddress("eglDestroySyncKHR"));
  f.wait = reinterpret_cast<PFNEGLWAITSYNCKHRPROC>(eglGetProcAddress("eglWaitSyncKHR"));
  if (HasEglExtension(display, "EGL_ANDROID_native_fence_sync")) {
    f.dup_native_fd = reinterpret_cast<PFNEGLDUPNATIVEFENCEFDANDROIDPROC>(eglGetProcAddress("eglDupNativeFenceFDANDROID"));
  }
  if (f.create == nullptr || f.destroy == nullptr || f.wait == nullptr) return {};
  return f;
}

Interop GlInterop(const DeviceCore& core, const EglSyncFunctions& egl) {
  Interop i;
  i.egl_display = reinterpret_cast<uint64_t>(core.context->display());
  i.egl_context = reinterpret_cast<uint64_t>(core.context->handle());
  i.egl_fence_sync = egl.create != nullptr;
  i.sync_fd_wait = i.sync_fd_signal = egl.dup_native_fd != nullptr;
  return i;
}

absl::StatusOr<std::unique_ptr<Buffer>> ImportGlBuffer(const std::shared_ptr<DeviceCore>& core, const ExternalBuffer& external) {
  if (external.type != ExternalBuffer::Type::kGlBuffer) {
    return absl::InvalidArgumentError("a GL device takes a GL buffer object, not a Vulkan buffer or memory");
  }
  if (external.bytes == 0) return absl::InvalidArgumentError("an app's buffer of 0 bytes");
  const size_t alignment = std::max<size_t>(core->info.limits.storage_buffer_offset_alignment, 1);
  if (external.offset % alignment != 0) {
    return absl::InvalidArgumentError(fmt::format("the app's buffer offset {} is not a multiple of "
                                                  "GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT ({})", external.offset, alignment));
  }
  const auto name = static_cast<GLuint>(external.handle);
  if (name == 0 || external.handle > UINT32_MAX || glIsBuffer(name) != GL_TRUE) {
    return absl::InvalidArgumentError(fmt::format("GL buffer {} is not a buffer of mgd's context: create it in a context "
                                                  "that shares objects with mgd's (Interop::egl_context)", external.handle));
  }
  DrainGlErrors();
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, name);
  GLint64 size = 0;
  glGetBufferParameteri64v(GL_SHADER_STORAGE_BUFFER, GL_BUFFER_SIZE, &size);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  if (absl::Status s = CheckGl("ImportBuffer", "glGetBufferParameteri64v"); !s.ok()) return s;
  const size_t needed = external.offset + external.bytes;
  if (static_cast<uint64_t>(size) < needed) {
    return absl::InvalidArgumentError(fmt::format("GL buffer {} holds {} bytes; {} from offset {} do not fit", name, size,
                                                  external.bytes, external.offset));
  }
  return std::unique_ptr<Buffer>(std::make_unique<GlBuffer>(core, name, needed, /*owned=*/false));
}

absl::Status CheckSync(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync) {
  const std::string device = core.info.device_name;
  auto unusable = [&](const SyncObject& s, const std::string& why) {
    return absl::UnimplementedError(fmt::format("{} (GL) cannot use a {}: {}", device, GpuSyncTypeName(s.type), why));
  };
  for (const SyncObject& s : sync.wait) {
    switch (s.type) {
      case SyncObject::Type::kEglSync:
        if (egl.create == nullptr) return unusable(s, "no EGL_KHR_fence_sync and EGL_KHR_wait_sync");
        if (s.handle == 0) return absl::InvalidArgumentError("an EGL sync to wait on is EGL_NO_SYNC");
        break;
      case SyncObject::Type::kSyncFd:
        if (egl.dup_native_fd == nullptr) return unusable(s, "no EGL_ANDROID_native_fence_sync");
        break;
      default: return unusable(s, "Vulkan semaphores are Vulkan's");
    }
  }
  if (!sync.signal.empty()) {
    return unusable(sync.signal.front(), "GL signals only sync objects it makes: ask for one with signal_new");
  }
  if (sync.signal_new != nullptr) {
    const SyncObject& s = *sync.signal_new;
    if (s.type == SyncObject::Type::kEglSync && egl.create == nullptr) return unusable(s, "no EGL_KHR_fence_sync");
    if (s.type == SyncObject::Type::kSyncFd && egl.dup_native_fd == nullptr) return unusable(s, "no EGL_ANDROID_native_fence_sync");
    if (s.type != SyncObject::Type::kEglSync && s.type != SyncObject::Type::kSyncFd) return unusable(s, "GL makes EGL syncs or sync fds");
  }
  return absl::OkStatus();
}

absl::Status QueueWaits(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync) {
  const EGLDisplay display = core.context->display();
  for (const SyncObject& s : sync.wait) {
    if (s.type == SyncObject::Type::kSyncFd && s.fd < 0) continue;  // already signalled
    EGLSyncKHR wait_on = reinterpret_cast<EGLSyncKHR>(s.handle);
    if (s.type == SyncObject::Type::kSyncFd) {
      // The sync takes the fd (closed with it).
      const EGLint attributes[] = {EGL_SYNC_NATIVE_FENCE_FD_ANDROID, s.fd, EGL_NONE};
      wait_on = egl.create(display, EGL_SYNC_NATIVE_FENCE_ANDROID, attributes);
      if (wait_on == EGL_NO_SYNC_KHR) return EglFailed("eglCreateSyncKHR (from the app's sync fd)");
    }
    const EGLint waited = egl.wait(display, wait_on, 0);
    // Destroying a sync a wait is queued on is allowed: it goes once signalled.
    if (s.type == SyncObject::Type::kSyncFd) egl.destroy(display, wait_on);
    if (waited != EGL_TRUE) return EglFailed("eglWaitSyncKHR");
  }
  return absl::OkStatus();
}

absl::Status MakeSignal(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync) {
  if (sync.signal_new == nullptr) return absl::OkStatus();
  const EGLDisplay display = core.context->display();
  const bool fd = sync.signal_new->type == SyncObject::Type::kSyncFd;
  EGLSyncKHR made = egl.create(display, fd ? EGL_SYNC_NATIVE_FENCE_ANDROID : EGL_SYNC_FENCE_KHR, nullptr);
  if (made == EGL_NO_SYNC_KHR) return EglFailed("eglCreateSyncKHR");
  glFlush();  // the fence must reach the GPU before another context waits on it
  if (!fd) {
    sync.signal_new->handle = reinterpret_cast<uint64_t>(made);
    return absl::OkStatus();
  }
  const int dup = egl.dup_native_fd(display, made);
  egl.destroy(display, made);
  if (dup == EGL_NO_NATIVE_FENCE_FD_ANDROID) return EglFailed("eglDupNativeFenceFDANDROID");
  sync.signal_new->fd = dup;
  return absl::OkStatus();
}

}  // namespace mgd::gpu::gl
