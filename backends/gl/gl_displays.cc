#include "backends/gl/gl_displays.h"

#include <algorithm>
#include <optional>

namespace mgd::gpu::gl {
namespace {

absl::StatusOr<Candidate> OpenCandidate(const DisplaySource& source) {
  absl::StatusOr<std::unique_ptr<DisplayRef>> display = DisplayRef::Open(source);
  if (!display.ok()) return display.status();
  absl::StatusOr<std::unique_ptr<EglContext>> context = EglContext::Create(std::move(*display));
  if (!context.ok()) return context.status();
  absl::StatusOr<ContextCapabilities> caps = QueryCurrentContext(source.label);
  (*context)->ReleaseCurrent();
  if (!caps.ok()) return caps.status();
  return Candidate{std::move(*context), std::move(*caps)};
}

bool SameGpu(const GpuInfo& a, const GpuInfo& b) {
  return a.vendor == b.vendor && a.device_name == b.device_name;
}

}  // namespace

absl::StatusOr<Candidate> OpenAppDisplay(EGLDisplay display, EGLContext share) {
  const DisplaySource source{DisplaySource::Kind::kApp, -1, "the app's EGL display", display, share};
  return OpenCandidate(source);
}

Probe ProbeDisplays() {
  Probe probe;
  std::vector<DisplaySource> sources = EnumerateDisplaySources();
  std::optional<GpuInfo> surfaceless;  // a copy: `usable` may reallocate
  bool dropped_duplicate = false;
  for (size_t i = 0; i < sources.size(); ++i) {
    absl::StatusOr<Candidate> candidate = OpenCandidate(sources[i]);
    if (!candidate.ok()) {
      probe.problems.push_back(std::string(candidate.status().message()));
      // The default display is the last resort when no platform display works.
      if (i + 1 == sources.size() && probe.usable.empty() && sources[i].kind != DisplaySource::Kind::kDefault) {
        sources.push_back({DisplaySource::Kind::kDefault, -1, "default display"});
      }
      continue;
    }
    const GpuInfo& info = candidate->caps.info;
    if (sources[i].kind == DisplaySource::Kind::kDevice && surfaceless.has_value() && !dropped_duplicate &&
        SameGpu(info, *surfaceless)) {
      dropped_duplicate = true;
      continue;
    }
    if (sources[i].kind == DisplaySource::Kind::kSurfaceless) surfaceless = info;
    probe.usable.push_back(std::move(*candidate));
  }
  std::stable_sort(probe.usable.begin(), probe.usable.end(), [](const Candidate& a, const Candidate& b) {
    return DeviceTypeRank(a.caps.info.type) < DeviceTypeRank(b.caps.info.type);
  });
  return probe;
}

absl::Status NoDevice(const Probe& probe) {
  std::string reasons = probe.problems.empty() ? "no EGL display found" : "";
  for (const std::string& problem : probe.problems) reasons += (reasons.empty() ? "" : "; ") + problem;
  return absl::NotFoundError("no usable OpenGL ES 3.1 device: " + reasons);
}

}  // namespace mgd::gpu::gl
