// ListDevices / CreateDevice: the one place that knows both implementations.
#include "backends/gl/gl_device.h"
#include "backends/gpu/gpu.h"
#include "backends/vulkan/vulkan_device.h"

namespace mgd::gpu {

absl::StatusOr<std::vector<GpuInfo>> ListDevices(Api api) {
  return api == Api::kVulkan ? vulkan::ListDevices() : gl::ListDevices();
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(Api api, const DeviceOptions& options) {
  return api == Api::kVulkan ? vulkan::CreateDevice(options) : gl::CreateDevice(options);
}

}  // namespace mgd::gpu
