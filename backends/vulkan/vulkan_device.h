// Vulkan 1.1+ compute.
#pragma once

#include <memory>
#include <vector>

#include "backends/gpu/gpu.h"

namespace mgd::gpu::vulkan {

absl::StatusOr<std::vector<GpuInfo>> ListDevices();
absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options);

}  // namespace mgd::gpu::vulkan
