// EGL without a window system: which displays exist, initializing them with
// a process-wide reference count, and a configless, surfaceless OpenGL ES
// 3.1+ context on the calling thread.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu::gl {

// Where a display comes from.
struct DisplaySource {
  enum class Kind { kSurfaceless, kDevice, kDefault, kApp };
  Kind kind = Kind::kDefault;
  int device_index = -1;  // kDevice: index in eglQueryDevicesEXT's list
  std::string label;      // for errors: "surfaceless", "EGL device 1 (/dev/dri/renderD128)", "default"
  // kApp: the app's initialized display, and the context whose objects
  // mgd's contexts share.
  EGLDisplay app_display = EGL_NO_DISPLAY;
  EGLContext share_context = EGL_NO_CONTEXT;
};

// Mesa's surfaceless platform first, then each EGL device (what the NVIDIA
// driver offers), then the default display only when neither exists.
std::vector<DisplaySource> EnumerateDisplaySources();

const char* EglErrorName(EGLint error);

// An initialized display. Displays are shared process-wide (the same
// platform and device give the same EGLDisplay), so devices count their
// uses and the last one terminates it; a display someone else initialized
// is never terminated.
class DisplayRef {
 public:
  static absl::StatusOr<std::unique_ptr<DisplayRef>> Open(const DisplaySource& source);
  ~DisplayRef();
  DisplayRef(const DisplayRef&) = delete;
  DisplayRef& operator=(const DisplayRef&) = delete;

  EGLDisplay display() const { return display_; }
  const DisplaySource& source() const { return source_; }

 private:
  DisplayRef(EGLDisplay display, DisplaySource source) : display_(display), source_(std::move(source)) {}
  EGLDisplay display_;
  DisplaySource source_;
};

// An OpenGL ES 3.1+ context (3.2 when available) without a surface. Made
// current on the thread that creates it; destroy it on that thread too.
class EglContext {
 public:
  // `priority_level`: EGL_IMG_context_priority's level to ask for (0: none).
  static absl::StatusOr<std::unique_ptr<EglContext>> Create(std::unique_ptr<DisplayRef> display, EGLint priority_level = 0);
  ~EglContext();  // releases it from this thread, destroys it, drops the display
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  absl::Status MakeCurrent();
  void ReleaseCurrent();
  const DisplaySource& source() const { return display_->source(); }
  EGLDisplay display() const { return display_->display(); }
  EGLContext handle() const { return context_; }
  // The priority level the driver granted (EGL_IMG_context_priority), 0
  // where the display has no priorities.
  EGLint priority_level() const;
  // GpuInfo::priority: the level granted for `asked`, and how.
  std::string PriorityGranted(Priority asked) const;

 private:
  EglContext(std::unique_ptr<DisplayRef> display, EGLContext context)
      : display_(std::move(display)), context_(context) {}
  std::unique_ptr<DisplayRef> display_;
  EGLContext context_;
};

}  // namespace mgd::gpu::gl
