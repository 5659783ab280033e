// Apps' buffers and sync objects on GL: buffer objects of a context that
// shares objects with the device's, EGL fence syncs waited for on the GPU
// (EGL_KHR_wait_sync) and made after a submission's dispatches, and sync fds
// where EGL_ANDROID_native_fence_sync exists. Everything here runs on the
// device's context thread.
#pragma once

#include <memory>
#include <vector>

#include "backends/gl/gl_objects.h"

namespace mgd::gpu::gl {

// The EGL sync entry points of the device's display (null where missing).
struct EglSyncFunctions {
  PFNEGLCREATESYNCKHRPROC create = nullptr;
  PFNEGLDESTROYSYNCKHRPROC destroy = nullptr;
  PFNEGLWAITSYNCKHRPROC wait = nullptr;
  PFNEGLDUPNATIVEFENCEFDANDROIDPROC dup_native_fd = nullptr;  // EGL_ANDROID_native_fence_sync
};
EglSyncFunctions LoadEglSync(EGLDisplay display);

// The device's handles and what it can import and export.
Interop GlInterop(const DeviceCore& core, const EglSyncFunctions& egl);

absl::StatusOr<std::unique_ptr<Buffer>> ImportGlBuffer(const std::shared_ptr<DeviceCore>& core, const ExternalBuffer& external);

// Checks every sync object before anything is done with one.
absl::Status CheckSync(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync);
// The GPU waits for `sync.wait` before the commands that follow.
absl::Status QueueWaits(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync);
// After the dispatches: the new sync object asked for (and a flush).
absl::Status MakeSignal(const DeviceCore& core, const EglSyncFunctions& egl, const SubmitSync& sync);

}  // namespace mgd::gpu::gl
