#include "backends/vulkan/instance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mgd::gpu::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// Mesa's Vulkan drivers (libvulkan_lvp.so, ...) leak a few once-only
// allocations that are lost when the loader unloads them at
// vkDestroyInstance; LeakSanitizer then reports them with no symbols to
// suppress. Keeping the already-loaded modules loaded for the life of the
// process (what a process with a live instance does anyway) avoids that; the
// instance itself is still destroyed. Other vendors' modules are left alone.
void PinMesaVulkanModules() {
  PinLoadedModules([](const std::string& name) { return name.rfind("libvulkan_", 0) == 0; });
}

std::string VendorName(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x10005: return "Mesa";
    default: return fmt::format("0x{:04X}", id);
  }
}

std::string VersionString(uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

}  // namespace

bool ValidationRequested(const DeviceOptions& options) {
  const char* env = std::getenv("MGD_VALIDATION");
  if (env != nullptr) return std::string(env) == "1";
#ifndef NDEBUG
  return true;
#else
  return options.validation;
#endif
}

absl::StatusOr<std::shared_ptr<Instance>> Instance::Create(bool validation) {
  auto self = std::shared_ptr<Instance>(new Instance());
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS) loader_version = VK_API_VERSION_1_0;
  if (loader_version < VK_API_VERSION_1_1) {
    return absl::UnavailableError("the Vulkan loader is older than 1.1");
  }
  self->api_version_ = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "mgd";
  app.pEngineName = "mgd";
  app.apiVersion = self->api_version_;
  std::vector<const char*> layers, extensions;
  if (validation) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    vkEnumerateInstanceLayerProperties(&count, available.data());
    const bool found = std::any_of(available.begin(), available.end(),
                                   [](const VkLayerProperties& l) { return std::strcmp(l.layerName, kValidationLayer) == 0; });
    if (!found) {
      return absl::FailedPreconditionError(
          "Vulkan validation was requested but VK_LAYER_KHRONOS_validation is not installed "
          "(Debian package vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (VkResult r = vkCreateInstance(&info, nullptr, &self->instance_); r != VK_SUCCESS) {
    return absl::UnavailableError(fmt::format("vkCreateInstance failed (VkResult {}): no Vulkan driver?", static_cast<int>(r)));
  }
  PinMesaVulkanModules();
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = &Instance::OnMessage;
    m.pUserData = self.get();
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr || create(self->instance_, &m, nullptr, &self->messenger_) != VK_SUCCESS) {
      return absl::InternalError("vkCreateDebugUtilsMessengerEXT failed");
    }
  }
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

std::vector<std::string> Instance::messages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_;
}

std::vector<VkPhysicalDevice> Instance::SortedDevices() const {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance_, &count, devices.data());
  auto rank = [](VkPhysicalDevice d) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    switch (p.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
      case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
      default: return 4;
    }
  };
  std::stable_sort(devices.begin(), devices.end(), [&](auto a, auto b) { return rank(a) < rank(b); });
  return devices;
}

VkBool32 VKAPI_CALL Instance::OnMessage(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                       const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* self = static_cast<Instance*>(user);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->messages_.emplace_back(data->pMessage != nullptr ? data->pMessage : "?");
  return VK_FALSE;
}

bool HasExtension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

int ComputeQueueFamily(VkPhysicalDevice device, uint32_t* timestamp_bits) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (uint32_t i = 0; i < count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      *timestamp_bits = families[i].timestampValidBits;
      return static_cast<int>(i);
    }
  }
  return -1;
}

Features QueryFeatures(VkPhysicalDevice device, uint32_t api_version) {
  Features f;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f.storage16;
  f.has_float16_struct = api_version >= VK_API_VERSION_1_2 || HasExtension(device, "VK_KHR_shader_float16_int8");
  if (f.has_float16_struct) f.storage16.pNext = &f.float16;
  vkGetPhysicalDeviceFeatures2(device, &features);
  f.storage16.pNext = nullptr;
  return f;
}

bool HasIntegerDotProduct(VkPhysicalDevice device, uint32_t api_version) {
  if (api_version < VK_API_VERSION_1_3 && !HasExtension(device, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
    return false;
  }
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &dot;
  vkGetPhysicalDeviceFeatures2(device, &features);
  return dot.shaderIntegerDotProduct == VK_TRUE;
}

GpuInfo QueryInfo(VkPhysicalDevice device, uint32_t instance_version) {
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(device, &basic);
  const uint32_t api = std::min(basic.apiVersion, instance_version);
  props.pNext = &subgroup;
  const bool has_driver = api >= VK_API_VERSION_1_2 || HasExtension(device, "VK_KHR_driver_properties");
  if (has_driver) subgroup.pNext = &driver;
  vkGetPhysicalDeviceProperties2(device, &props);
  const VkPhysicalDeviceProperties& p = props.properties;

  GpuInfo info;
  info.api = Api::kVulkan;
  info.vendor_id = p.vendorID;
  info.vendor = VendorName(p.vendorID);
  info.device_name = p.deviceName;
  info.device_id = p.deviceID;
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: info.type = DeviceType::kDiscrete; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: info.type = DeviceType::kIntegrated; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info.type = DeviceType::kVirtual; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: info.type = DeviceType::kCpu; break;
    default: info.type = DeviceType::kOther; break;
  }
  info.api_version = VersionString(p.apiVersion);
  if (has_driver) {
    info.driver_name = driver.driverName;
    info.driver_version = driver.driverInfo;
  }
  if (info.driver_version.empty()) {
    // NVIDIA packs 10.8.8.6 bits; everyone else uses the Vulkan version encoding.
    const uint32_t v = p.driverVersion;
    info.driver_version = p.vendorID == 0x10DE
                              ? fmt::format("{}.{}.{}", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff)
                              : VersionString(v);
  }
  const VkPhysicalDeviceLimits& l = p.limits;
  info.limits.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  info.limits.max_workgroup_size = {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1], l.maxComputeWorkGroupSize[2]};
  info.limits.max_workgroup_count = {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1], l.maxComputeWorkGroupCount[2]};
  info.limits.max_shared_memory_bytes = l.maxComputeSharedMemorySize;
  info.limits.max_storage_buffers_per_shader = l.maxPerStageDescriptorStorageBuffers;
  info.limits.max_storage_buffer_bytes = l.maxStorageBufferRange;
  info.limits.storage_buffer_offset_alignment = static_cast<uint32_t>(l.minStorageBufferOffsetAlignment);
  info.limits.max_push_constant_bytes = l.maxPushConstantsSize;
  info.subgroups = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  info.subgroup_size = subgroup.subgroupSize;
  const Features f = QueryFeatures(device, api);
  info.fp16_arithmetic = f.has_float16_struct && f.float16.shaderFloat16;
  info.storage_16bit = f.storage16.storageBuffer16BitAccess;
  if (api >= VK_API_VERSION_1_2 || HasExtension(device, "VK_KHR_shader_float_controls")) {
    VkPhysicalDeviceFloatControlsProperties controls{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &controls;
    vkGetPhysicalDeviceProperties2(device, &props2);
    info.ieee_inf_nan = controls.shaderSignedZeroInfNanPreserveFloat32 == VK_TRUE;
  }
  info.int8_dot_products = HasIntegerDotProduct(device, api);
  uint32_t timestamp_bits = 0;
  ComputeQueueFamily(device, &timestamp_bits);
  info.timestamps = timestamp_bits > 0 && l.timestampPeriod > 0;
  return info;
}

}  // namespace mgd::gpu::vulkan
