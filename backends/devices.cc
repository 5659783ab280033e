// ListDevices / CreateDevice: the one place that knows both implementations.
#include "backends/gl/gl_device.h"
#include "backends/gpu/faults.h"
#include "backends/gpu/gpu.h"
#include "backends/vulkan/vulkan_device.h"

namespace mgd::gpu {

absl::StatusOr<std::vector<GpuInfo>> ListDevices(Api api) {
  return api == Api::kVulkan ? vulkan::ListDevices() : gl::ListDevices();
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(Api api, const DeviceOptions& options) {
  std::shared_ptr<FaultSwitches> faults = options.faults;
  if (faults == nullptr) {
    absl::StatusOr<std::shared_ptr<FaultSwitches>> from_environment = FaultsFromEnvironment();
    if (!from_environment.ok()) return from_environment.status();
    faults = *from_environment;
  }
  absl::StatusOr<std::unique_ptr<Device>> device = api == Api::kVulkan ? vulkan::CreateDevice(options) : gl::CreateDevice(options);
  if (!device.ok() || faults == nullptr) return device;
  return WithFaults(std::move(*device), std::move(faults));
}

}  // namespace mgd::gpu
