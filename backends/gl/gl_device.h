// OpenGL ES 3.1+ compute through EGL without a window system.
#pragma once

#include <memory>
#include <vector>

#include "backends/gpu/gpu.h"

namespace mgd::gpu::gl {

absl::StatusOr<std::vector<GpuInfo>> ListDevices();
absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options);

}  // namespace mgd::gpu::gl
