// Vulkan backend: device choice (the instance and device queries are in
// instance.h), one compute queue, sub-allocated memory; the device's other
// parts are in vulkan_transfers.cc, vulkan_programs.cc and
// vulkan_recording.cc (device.h).
#include "backends/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/device.h"
#include "backends/vulkan/glsl_compiler.h"

namespace mgd::gpu::vulkan {

absl::StatusOr<std::unique_ptr<Device>> VulkanDevice::Create(const DeviceOptions& options) {
  auto self = std::unique_ptr<VulkanDevice>(new VulkanDevice());
  // glslang's first compile in the process builds its built-in symbol tables
  // (H200: 70-75 ms, which every program of a cold prepare waits for); begun
  // here, it overlaps loading the driver and making the device (and then
  // reading the model and compiling the graph).
  self->glslang_warm_up_ = std::thread(WarmUpGlslang);
  auto instance = Instance::Create(ValidationRequested(options));
  if (!instance.ok()) return instance.status();
  self->instance_ = *instance;
  const std::vector<VkPhysicalDevice> devices = self->instance_->SortedDevices();
  std::vector<GpuInfo> infos;
  for (VkPhysicalDevice d : devices) infos.push_back(QueryInfo(d, self->instance_->api_version()));
  std::string selector = options.selector;
  if (selector.empty() && std::getenv("MGD_DEVICE") != nullptr) selector = std::getenv("MGD_DEVICE");
  auto chosen = SelectDevice(infos, selector);
  if (!chosen.ok()) return absl::NotFoundError("vulkan: " + std::string(chosen.status().message()));
  self->physical_ = devices[*chosen];
  self->info_ = infos[*chosen];
  if (options.clamp_limits) {
    self->info_.limits = ClampToGles31(self->info_.limits);
    self->info_.clamped_limits = true;
  }
  if (absl::Status s = self->Init(options.priority); !s.ok()) return s;
  self->poll_time_ = PollTime(options.wait, self->info_);
  self->WarmUpLayouts();
  return std::unique_ptr<Device>(std::move(self));
}

VulkanDevice::~VulkanDevice() {
  if (glslang_warm_up_.joinable()) glslang_warm_up_.join();
  if (layouts_warm_up_.joinable()) layouts_warm_up_.join();
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    staging_.reset();
    allocator_.reset();
    if (pipeline_cache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    for (const auto& [shape, l] : layouts_) {
      vkDestroyPipelineLayout(device_, l.pipeline, nullptr);
      vkDestroyDescriptorSetLayout(device_, l.set, nullptr);
    }
    if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
    for (VkFence f : free_fences_) vkDestroyFence(device_, f, nullptr);
    for (const auto& [ticket, s] : submitted_) {
      vkDestroyFence(device_, s.fence, nullptr);
      DestroySemaphores(s.semaphores);
    }
    if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
}

absl::Status VulkanDevice::Init(Priority priority) {
  uint32_t timestamp_bits = 0;
  const int family = ComputeQueueFamily(physical_, &timestamp_bits);
  if (family < 0) return absl::UnavailableError(fmt::format("{} has no compute queue", info_.device_name));
  queue_family_ = static_cast<uint32_t>(family);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  timestamp_period_ = props.limits.timestampPeriod;
  // Weights are written in place where device-local memory can be mapped
  // (Use::kConstant: integrated and CPU devices, resizable BAR): the H200
  // spent 5-10 ms allocating (pinning) a staging buffer for 8-17 MB of
  // weights and 2-3 ms waiting for the copy.
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory);
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    const VkMemoryPropertyFlags both = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    if ((flags & both) == both) mappable_device_memory_ = true;
  }
  cache_vendor_ = props.vendorID;
  cache_device_ = props.deviceID;
  std::memcpy(cache_uuid_.data(), props.pipelineCacheUUID, VK_UUID_SIZE);

  const float queue_priority = 1.0f;  // its only queue
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &queue_priority;
  // fp16 arithmetic and 16-bit storage when the device has them.
  device_api_ = std::min(props.apiVersion, instance_->api_version());
  Features f = QueryFeatures(physical_, device_api_);
  std::vector<const char*> extensions;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f.storage16;
  if (f.has_float16_struct && f.float16.shaderFloat16) {
    f.storage16.pNext = &f.float16;
    if (std::min(props.apiVersion, instance_->api_version()) < VK_API_VERSION_1_2) {
      extensions.push_back("VK_KHR_shader_float16_int8");
    }
  }
  // Pipelines named by shader module identifiers, for the compilation
  // cache (VK_EXT_shader_module_identifier; it needs 1.3's
  // pipelineCreationCacheControl for FAIL_ON_PIPELINE_COMPILE_REQUIRED).
  VkPhysicalDeviceShaderModuleIdentifierFeaturesEXT identifier_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_MODULE_IDENTIFIER_FEATURES_EXT};
  VkPhysicalDevicePipelineCreationCacheControlFeatures cache_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES};
  const bool identifiers = [&] {
    if (device_api_ < VK_API_VERSION_1_3 || !HasExtension(physical_, VK_EXT_SHADER_MODULE_IDENTIFIER_EXTENSION_NAME)) return false;
    VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    query.pNext = &identifier_features;
    identifier_features.pNext = &cache_control;
    vkGetPhysicalDeviceFeatures2(physical_, &query);
    return identifier_features.shaderModuleIdentifier == VK_TRUE && cache_control.pipelineCreationCacheControl == VK_TRUE;
  }();
  if (identifiers) {
    extensions.push_back(VK_EXT_SHADER_MODULE_IDENTIFIER_EXTENSION_NAME);
    cache_control.pNext = features.pNext;
    features.pNext = &identifier_features;  // -> cache_control -> the rest
  }
  // IEEE Inf and NaN in shaders where the driver can promise them
  // (CompileGlsl's preserve_inf_nan).
  if (info_.ieee_inf_nan && device_api_ < VK_API_VERSION_1_2) extensions.push_back("VK_KHR_shader_float_controls");
  // Integer dot products where the device has them (GpuInfo::int8_dot_products).
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (info_.int8_dot_products) {
    dot.shaderIntegerDotProduct = VK_TRUE;
    dot.pNext = features.pNext;
    features.pNext = &dot;
    if (device_api_ < VK_API_VERSION_1_3) extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  }
  EnableInterop(device_api_, extensions, features);
  // The queue's priority against other processes' (the driver's default is
  // medium); high may need privileges the app lacks: then medium.
  VkDeviceQueueGlobalPriorityCreateInfoEXT global{VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_EXT};
  global.globalPriority = priority == Priority::kLow    ? VK_QUEUE_GLOBAL_PRIORITY_LOW_EXT
                          : priority == Priority::kHigh ? VK_QUEUE_GLOBAL_PRIORITY_HIGH_EXT
                                                        : VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_EXT;
  const bool has_global = HasExtension(physical_, VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
  if (priority != Priority::kMedium && has_global) {
    extensions.push_back(VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
    qci.pNext = &global;
  }
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkResult created = vkCreateDevice(physical_, &dci, nullptr, &device_);
  info_.priority = priority == Priority::kMedium ? "medium (the driver default)"
                   : has_global ? fmt::format("{} (VK_EXT_global_priority)", PriorityName(priority))
                                : "medium (the driver has no priorities)";
  if (created == VK_ERROR_NOT_PERMITTED_EXT) {
    qci.pNext = nullptr;
    extensions.pop_back();
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    created = vkCreateDevice(physical_, &dci, nullptr, &device_);
    info_.priority = fmt::format("medium ({} not permitted)", PriorityName(priority));
  }
  if (created != VK_SUCCESS) return VkError("vkCreateDevice", created);
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  LoadInteropFunctions();
  if (identifiers) {
    VkPhysicalDeviceShaderModuleIdentifierPropertiesEXT identifier_props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_MODULE_IDENTIFIER_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &identifier_props;
    vkGetPhysicalDeviceProperties2(physical_, &props2);
    std::memcpy(identifier_algorithm_.data(), identifier_props.shaderModuleIdentifierAlgorithmUUID, VK_UUID_SIZE);
    get_identifier_ = reinterpret_cast<PFN_vkGetShaderModuleIdentifierEXT>(
        vkGetDeviceProcAddr(device_, "vkGetShaderModuleIdentifierEXT"));
  }

  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = queue_family_;
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  MGD_VK(vkCreateCommandPool(device_, &cpi, nullptr, &command_pool_));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  MGD_VK(vkCreateFence(device_, &fci, nullptr, &fence_));
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  MGD_VK(vkCreatePipelineCache(device_, &pci, nullptr, &pipeline_cache_));
  allocator_ = std::make_unique<MemoryAllocator>(device_, memory);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Buffer>> VulkanDevice::CreateBuffer(size_t bytes, Use use) {
  if (bytes == 0) return absl::InvalidArgumentError("cannot create a buffer of 0 bytes");
  if (bytes > info_.limits.max_storage_buffer_bytes) {
    return absl::InvalidArgumentError(fmt::format("a buffer of {} bytes exceeds the device's storage buffer limit of {}",
                                                  bytes, info_.limits.max_storage_buffer_bytes));
  }
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  switch (use) {
    case Use::kDevice: return MakeBuffer(bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    // Weights are written in place where device memory can be mapped,
    // else staged.
    case Use::kConstant: return MappableDeviceBufferOr(bytes, usage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    // The host reads downloads: cached memory if there is any.
    case Use::kDownload: return MakeBuffer(bytes, usage, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    // The host only writes uploads, which device memory it can map takes
    // as fast as its own; the GPU then reads them locally (H200: 5% off
    // MobileNet v1's GPU time), and the allocation is not pinned.
    case Use::kUpload:
      return MappableDeviceBufferOr(bytes, usage, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  }
  return absl::InvalidArgumentError("unknown buffer use");
}

absl::StatusOr<std::unique_ptr<VulkanBuffer>> VulkanDevice::MappableDeviceBufferOr(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags mappable_preferred, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  if (mappable_device_memory_) {
    auto mapped = MakeBuffer(bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                             mappable_preferred);
    if (mapped.ok()) return mapped;
  }
  return MakeBuffer(bytes, usage, required, preferred);
}

absl::StatusOr<std::unique_ptr<VulkanBuffer>> VulkanDevice::MakeBuffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = (bytes + 3) / 4 * 4;  // storage buffers are read as 32-bit words
  bi.usage = usage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer;
  if (VkResult r = vkCreateBuffer(device_, &bi, nullptr, &buffer); r != VK_SUCCESS) return VkError("vkCreateBuffer", r);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, buffer, &req);
  auto allocation = allocator_->Allocate(req, required, preferred);
  if (!allocation.ok()) {
    vkDestroyBuffer(device_, buffer, nullptr);
    return allocation.status();
  }
  if (VkResult r = vkBindBufferMemory(device_, buffer, allocation->memory, allocation->offset); r != VK_SUCCESS) {
    vkDestroyBuffer(device_, buffer, nullptr);
    allocator_->Free(*allocation);
    return VkError("vkBindBufferMemory", r);
  }
  return std::make_unique<VulkanBuffer>(device_, allocator_.get(), buffer, *allocation, bytes);
}

absl::StatusOr<std::vector<GpuInfo>> ListDevices() {
  auto instance = Instance::Create(false);
  if (!instance.ok()) return std::vector<GpuInfo>{};  // no loader or driver: no devices
  std::vector<GpuInfo> infos;
  for (VkPhysicalDevice d : (*instance)->SortedDevices()) infos.push_back(QueryInfo(d, (*instance)->api_version()));
  return infos;
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceOptions& options) {
  return VulkanDevice::Create(options);
}

}  // namespace mgd::gpu::vulkan
