// The Vulkan instance (with the Khronos validation layer on request) and what
// a physical device offers: its identity, limits, queues and features.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu::vulkan {

// MGD_VALIDATION (1 or anything else) when set, else on in debug builds,
// else DeviceOptions::validation.
bool ValidationRequested(const DeviceOptions& options);

// The instance and the validation messages it collected.
class Instance {
 public:
  static absl::StatusOr<std::shared_ptr<Instance>> Create(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  uint32_t api_version() const { return api_version_; }
  std::vector<std::string> messages() const;
  // Physical devices, best first: discrete > integrated > virtual > CPU.
  std::vector<VkPhysicalDevice> SortedDevices() const;

 private:
  Instance() = default;
  static VkBool32 VKAPI_CALL OnMessage(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                       const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = VK_API_VERSION_1_1;
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

bool HasExtension(VkPhysicalDevice device, const char* name);
// The first queue family with compute (-1 when none) and its timestamp bits.
int ComputeQueueFamily(VkPhysicalDevice device, uint32_t* timestamp_bits);

// The optional features mgd enables when present.
struct Features {
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR float16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  bool has_float16_struct = false;
};
Features QueryFeatures(VkPhysicalDevice device, uint32_t api_version);
// Whether shaders can take dot products of packed 8-bit integers
// (shaderIntegerDotProduct: Vulkan 1.3 or VK_KHR_shader_integer_dot_product).
bool HasIntegerDotProduct(VkPhysicalDevice device, uint32_t api_version);

// The device as GpuInfo (API version capped at the instance's).
GpuInfo QueryInfo(VkPhysicalDevice device, uint32_t instance_version);

}  // namespace mgd::gpu::vulkan
