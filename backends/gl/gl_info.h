// What a GL context says about its GPU, as a GpuInfo.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "backends/gl/gl_objects.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu::gl {

struct ContextCapabilities {
  GpuInfo info;
  GlExtensions ext;
  bool binary_formats = false;
};

// Queries the context current on this thread; Unavailable when it is older
// than OpenGL ES 3.1 (no compute shaders).
absl::StatusOr<ContextCapabilities> QueryCurrentContext(const std::string& label);


// Pure helpers, exposed for tests.
// "OpenGL ES 3.2 Mesa 22.3.6" -> {"Mesa", "22.3.6"}; "OpenGL ES 3.2 NVIDIA 550.54.15" -> {"NVIDIA", "550.54.15"}.
struct DriverVersion {
  std::string name;
  std::string version;
};
DriverVersion ParseDriverVersion(const std::string& gl_version);
DeviceType GuessDeviceType(const std::string& vendor, const std::string& renderer);
uint32_t GuessVendorId(const std::string& vendor, const std::string& renderer);
// Best first: discrete, integrated, virtual, unknown, CPU.
int DeviceTypeRank(DeviceType type);

}  // namespace mgd::gpu::gl
