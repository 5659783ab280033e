// The EGL displays a GL device can be opened on (surfaceless, EGL devices,
// the default display), each probed for a usable ES 3.1 context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/gl/egl_context.h"
#include "backends/gl/gl_info.h"

namespace mgd::gpu::gl {

// A display that gave a usable context, kept (not current) until one is chosen.
struct Candidate {
  std::unique_ptr<EglContext> context;
  ContextCapabilities caps;
};

struct Probe {
  std::vector<Candidate> usable;     // best first
  std::vector<std::string> problems;  // why the others were not
};

// Every usable display, on the calling thread (each context is made current
// in turn). Mesa offers the same GPU through the surfaceless platform and as
// an EGL device, so the first device matching the surfaceless display is
// dropped; further identical ones are distinct GPUs of one model.
Probe ProbeDisplays();

// The app's display (DeviceOptions::egl_display), with a context sharing
// objects with `share`, on the calling thread; not probed further.
absl::StatusOr<Candidate> OpenAppDisplay(EGLDisplay display, EGLContext share);

// NotFound, with why each display was not usable.
absl::Status NoDevice(const Probe& probe);

}  // namespace mgd::gpu::gl
