#include "backends/gl/egl_context.h"

#include "backends/gpu/gpu.h"

#include <fmt/format.h>

#if defined(__linux__)
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace mgd::gpu::gl {
namespace {

// Whole-word search in an EGL extension string (a prefix match would take
// EGL_EXT_platform_device for EGL_EXT_platform_device_xyz).
bool HasExtension(const char* extensions, const char* name) {
  if (extensions == nullptr) return false;
  const size_t length = std::strlen(name);
  for (const char* p = extensions; (p = std::strstr(p, name)) != nullptr; p += length) {
    const bool starts = p == extensions || p[-1] == ' ';
    const bool ends = p[length] == '\0' || p[length] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

const char* ClientExtensions() {
  // NULL (with EGL_BAD_DISPLAY) when EGL_EXT_client_extensions is missing.
  const char* extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (extensions == nullptr) eglGetError();
  return extensions;
}

// eglGetPlatformDisplayEXT where offered, else EGL 1.5's eglGetPlatformDisplay;
// both looked up at run time so an EGL 1.4 loader still links.
EGLDisplay GetPlatformDisplay(EGLenum platform, void* native) {
  if (HasExtension(ClientExtensions(), "EGL_EXT_platform_base")) {
    auto get = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (get != nullptr) return get(platform, native, nullptr);
  }
  auto get = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYPROC>(eglGetProcAddress("eglGetPlatformDisplay"));
  return get != nullptr ? get(platform, native, nullptr) : EGL_NO_DISPLAY;
}

std::vector<EGLDeviceEXT> QueryDevices() {
  const char* client = ClientExtensions();
  if (!HasExtension(client, "EGL_EXT_platform_device") ||
      !(HasExtension(client, "EGL_EXT_device_enumeration") || HasExtension(client, "EGL_EXT_device_base"))) {
    return {};
  }
  auto query = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
  EGLint count = 0;
  if (query == nullptr || !query(0, nullptr, &count) || count <= 0) return {};
  std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
  if (!query(count, devices.data(), &count)) return {};
  devices.resize(static_cast<size_t>(std::max(count, 0)));
  return devices;
}

// "EGL device 1 (/dev/dri/renderD128)": the DRM node when the device has one.
std::string DeviceLabel(EGLDeviceEXT device, size_t index) {
  auto query_string =
      reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
  std::string label = fmt::format("EGL device {}", index);
  if (query_string == nullptr) return label;
  const char* extensions = query_string(device, EGL_EXTENSIONS);
  if (HasExtension(extensions, "EGL_EXT_device_drm")) {
    if (const char* file = query_string(device, EGL_DRM_DEVICE_FILE_EXT)) label += fmt::format(" ({})", file);
  } else if (HasExtension(extensions, "EGL_MESA_device_software")) {
    label += " (software)";
  }
  eglGetError();  // a failed query is only a poorer label
  return label;
}

// Process-wide use counts of the displays mgd initialized.
struct DisplayUse {
  int refs = 0;
  bool owned = false;  // mgd initialized it, so mgd terminates it
};
std::mutex& RegistryMutex() {
  static std::mutex* mutex = new std::mutex;  // never destroyed: devices may outlive static destruction
  return *mutex;
}
std::map<EGLDisplay, DisplayUse>& Registry() {
  static auto* uses = new std::map<EGLDisplay, DisplayUse>;
  return *uses;
}

// Mesa loads its DRI driver in eglInitialize and unloads it in eglTerminate,
// but the driver's one-time setup (a pthread_once in swrast_dri.so, 128
// bytes) is not freed on unload: each initialize/terminate cycle loses it,
// and LeakSanitizer reports it with no usable stack. Keeping the driver
// module loaded for the life of the process (what an app that keeps its
// display does anyway) makes the next eglInitialize reuse it; eglTerminate
// still releases every display resource. Other vendors' modules are left alone.
void PinMesaDriverModules() {
  PinLoadedModules([](const std::string& name) {
    const std::string suffix = "_dri.so";
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  });
}

absl::Status Acquire(EGLDisplay display, const std::string& label) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  DisplayUse& use = Registry()[display];
  if (use.refs == 0) {
    // eglQueryString fails on a display nobody initialized; one that answers
    // belongs to someone else in the process (the app's own GL) and must
    // outlive mgd's devices.
    const bool initialized_elsewhere = eglQueryString(display, EGL_VERSION) != nullptr;
    eglGetError();
    EGLint major = 0, minor = 0;
    if (!initialized_elsewhere && !eglInitialize(display, &major, &minor)) {
      Registry().erase(display);
      return absl::UnavailableError(fmt::format("{}: eglInitialize failed: {}", label, EglErrorName(eglGetError())));
    }
    if (!initialized_elsewhere) PinMesaDriverModules();
    use.owned = !initialized_elsewhere;
  }
  ++use.refs;
  return absl::OkStatus();
}

void Release(EGLDisplay display) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(display);
  if (it == Registry().end() || --it->second.refs > 0) return;
  if (it->second.owned) eglTerminate(display);
  Registry().erase(it);
}

bool EglVersionAtLeast15(EGLDisplay display) {
  int major = 0, minor = 0;
  const char* version = eglQueryString(display, EGL_VERSION);
  return version != nullptr && std::sscanf(version, "%d.%d", &major, &minor) == 2 &&
         (major > 1 || (major == 1 && minor >= 5));
}

// EGL_NO_CONFIG_KHR where the display allows configless contexts, else any
// config that can render OpenGL ES 3 (never used for a surface).
absl::StatusOr<EGLConfig> ChooseConfig(EGLDisplay display, const char* extensions, const std::string& label) {
  if (HasExtension(extensions, "EGL_KHR_no_config_context") ||
      HasExtension(extensions, "EGL_MESA_configless_context")) {
    return EGL_NO_CONFIG_KHR;
  }
  const EGLint attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT_KHR, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint count = 0;
  if (!eglChooseConfig(display, attributes, &config, 1, &count) || count < 1) {
    return absl::UnavailableError(
        fmt::format("{}: no configless contexts and no OpenGL ES 3 config ({})", label, EglErrorName(eglGetError())));
  }
  return config;
}

// The config `context` was made with: EGL_NO_CONFIG_KHR for a configless one.
absl::StatusOr<EGLConfig> ConfigOf(EGLDisplay display, EGLContext context, const std::string& label) {
  EGLint id = 0;
  if (!eglQueryContext(display, context, EGL_CONFIG_ID, &id)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: the share context is not a context of the display ({})", label, EglErrorName(eglGetError())));
  }
  if (id == 0) return EGL_NO_CONFIG_KHR;
  const EGLint attributes[] = {EGL_CONFIG_ID, id, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint count = 0;
  if (!eglChooseConfig(display, attributes, &config, 1, &count) || count < 1) {
    return absl::UnavailableError(fmt::format("{}: the share context's config {} is gone", label, id));
  }
  return config;
}

}  // namespace

const char* EglErrorName(EGLint error) {
  switch (error) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
  }
}

std::vector<DisplaySource> EnumerateDisplaySources() {
  std::vector<DisplaySource> sources;
  if (HasExtension(ClientExtensions(), "EGL_MESA_platform_surfaceless")) {
    sources.push_back({DisplaySource::Kind::kSurfaceless, -1, "surfaceless"});
  }
  const std::vector<EGLDeviceEXT> devices = QueryDevices();
  for (size_t i = 0; i < devices.size(); ++i) {
    sources.push_back({DisplaySource::Kind::kDevice, static_cast<int>(i), DeviceLabel(devices[i], i)});
  }
  if (sources.empty()) sources.push_back({DisplaySource::Kind::kDefault, -1, "default display"});
  return sources;
}

absl::StatusOr<std::unique_ptr<DisplayRef>> DisplayRef::Open(const DisplaySource& source) {
  EGLDisplay display = EGL_NO_DISPLAY;
  switch (source.kind) {
    case DisplaySource::Kind::kSurfaceless:
      display = GetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY);
      break;
    case DisplaySource::Kind::kDevice: {
      // Device handles stay valid for the process, so the index found when
      // enumerating names the same device now.
      const std::vector<EGLDeviceEXT> devices = QueryDevices();
      if (source.device_index < 0 || static_cast<size_t>(source.device_index) >= devices.size()) {
        return absl::UnavailableError(fmt::format("{}: the device is gone", source.label));
      }
      display = GetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[static_cast<size_t>(source.device_index)]);
      break;
    }
    case DisplaySource::Kind::kDefault:
      display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
      break;
    case DisplaySource::Kind::kApp:
      // The app's: Acquire finds it initialized and never terminates it.
      display = source.app_display;
      if (eglQueryString(display, EGL_VERSION) == nullptr) {
        return absl::InvalidArgumentError(
            fmt::format("{}: not an initialized EGLDisplay ({})", source.label, EglErrorName(eglGetError())));
      }
      break;
  }
  if (display == EGL_NO_DISPLAY) {
    return absl::UnavailableError(fmt::format("{}: no EGL display ({})", source.label, EglErrorName(eglGetError())));
  }
  if (absl::Status status = Acquire(display, source.label); !status.ok()) return status;
  return std::unique_ptr<DisplayRef>(new DisplayRef(display, source));
}

DisplayRef::~DisplayRef() { Release(display_); }

absl::StatusOr<std::unique_ptr<EglContext>> EglContext::Create(std::unique_ptr<DisplayRef> display_ref, EGLint priority_level) {
  const EGLDisplay display = display_ref->display();
  const std::string& label = display_ref->source().label;
  if (!eglBindAPI(EGL_OPENGL_ES_API)) {
    return absl::UnavailableError(fmt::format("{}: eglBindAPI(EGL_OPENGL_ES_API) failed: {}", label,
                                              EglErrorName(eglGetError())));
  }
  const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
  if (!HasExtension(extensions, "EGL_KHR_surfaceless_context")) {
    return absl::UnavailableError(fmt::format("{}: EGL_KHR_surfaceless_context is missing", label));
  }
  const EGLContext share = display_ref->source().share_context;
  // Contexts that share objects are made with the same config, as EGL
  // implementations may require of a share group.
  absl::StatusOr<EGLConfig> config = share != EGL_NO_CONTEXT ? ConfigOf(display, share, label)
                                                             : ChooseConfig(display, extensions, label);
  if (!config.ok()) return config.status();

  // ES 3.2 when the driver has it, else 3.1. Asking for a minor version
  // needs EGL_KHR_create_context or EGL 1.5; without either, ask for "3" and
  // let the caller check what it got.
  const bool minor_versions = HasExtension(extensions, "EGL_KHR_create_context") || EglVersionAtLeast15(display);
  EGLContext context = EGL_NO_CONTEXT;
  EGLint error = EGL_SUCCESS;
  const bool prioritized = priority_level != 0 && HasExtension(extensions, "EGL_IMG_context_priority");
  for (EGLint minor : {2, 1}) {
    const EGLint versioned[] = {EGL_CONTEXT_MAJOR_VERSION_KHR, 3, EGL_CONTEXT_MINOR_VERSION_KHR, minor,
                                prioritized ? EGL_CONTEXT_PRIORITY_LEVEL_IMG : EGL_NONE, priority_level, EGL_NONE};
    const EGLint plain[] = {EGL_CONTEXT_CLIENT_VERSION, 3, prioritized ? EGL_CONTEXT_PRIORITY_LEVEL_IMG : EGL_NONE,
                            priority_level, EGL_NONE};
    context = eglCreateContext(display, *config, share, minor_versions ? versioned : plain);
    if (context != EGL_NO_CONTEXT || !minor_versions) break;
    error = eglGetError();
  }
  if (context == EGL_NO_CONTEXT) {
    if (error == EGL_SUCCESS) error = eglGetError();
    return absl::UnavailableError(
        fmt::format("{}: eglCreateContext for OpenGL ES 3.2/3.1 failed: {}", label, EglErrorName(error)));
  }
  std::unique_ptr<EglContext> result(new EglContext(std::move(display_ref), context));
  if (absl::Status status = result->MakeCurrent(); !status.ok()) return status;
  return result;
}

EGLint EglContext::priority_level() const {
  if (!HasExtension(eglQueryString(display_->display(), EGL_EXTENSIONS), "EGL_IMG_context_priority")) return 0;
  EGLint level = 0;
  return eglQueryContext(display_->display(), context_, EGL_CONTEXT_PRIORITY_LEVEL_IMG, &level) ? level : 0;
}

std::string EglContext::PriorityGranted(Priority asked) const {
  switch (priority_level()) {
    case EGL_CONTEXT_PRIORITY_LOW_IMG: return "low (EGL_IMG_context_priority)";
    case EGL_CONTEXT_PRIORITY_HIGH_IMG: return "high (EGL_IMG_context_priority)";
    case EGL_CONTEXT_PRIORITY_MEDIUM_IMG:
      return asked == Priority::kMedium ? "medium (EGL_IMG_context_priority)"
                                        : fmt::format("medium ({} not granted)", PriorityName(asked));
    default: return asked == Priority::kMedium ? "medium (the driver default)" : "medium (the driver has no priorities)";
  }
}

absl::Status EglContext::MakeCurrent() {
  if (!eglMakeCurrent(display_->display(), EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) {
    return absl::UnavailableError(fmt::format("{}: eglMakeCurrent without a surface failed: {}",
                                              display_->source().label, EglErrorName(eglGetError())));
  }
  return absl::OkStatus();
}

void EglContext::ReleaseCurrent() {
  if (eglGetCurrentContext() == context_) {
    eglMakeCurrent(display_->display(), EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
}

EglContext::~EglContext() {
  ReleaseCurrent();
  eglDestroyContext(display_->display(), context_);
  display_.reset();  // may terminate the display: after the context is gone
}

}  // namespace mgd::gpu::gl
