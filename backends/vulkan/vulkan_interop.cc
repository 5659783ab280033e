// Apps' buffers and semaphores: VkBuffers of mgd's device used in place of
// its own (zero-copy input and output), memory imported from opaque fds,
// binary and timeline semaphores waited on and signalled by a submission,
// and sync fds imported and exported where the driver has them.
#include <unistd.h>

#include "backends/vulkan/device.h"

namespace mgd::gpu::vulkan {
namespace {

bool SyncFdFeatures(VkPhysicalDevice physical, VkExternalSemaphoreFeatureFlags wanted) {
  VkPhysicalDeviceExternalSemaphoreInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
  info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
  VkExternalSemaphoreProperties props{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
  vkGetPhysicalDeviceExternalSemaphoreProperties(physical, &info, &props);
  return (props.externalSemaphoreFeatures & wanted) == wanted;
}

}  // namespace

// Timeline semaphores (core in 1.2) and the fd extensions, where the device
// has them; each one missing only makes that kind of sync object or buffer
// unavailable (Interop says which).
void VulkanDevice::EnableInterop(uint32_t api, std::vector<const char*>& extensions, VkPhysicalDeviceFeatures2& features) {
  VkPhysicalDeviceTimelineSemaphoreFeatures query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  const bool timeline_extension = api < VK_API_VERSION_1_2 && HasExtension(physical_, "VK_KHR_timeline_semaphore");
  if (api >= VK_API_VERSION_1_2 || timeline_extension) {
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &query;
    vkGetPhysicalDeviceFeatures2(physical_, &f2);
  }
  if (query.timelineSemaphore == VK_TRUE) {
    if (timeline_extension) extensions.push_back("VK_KHR_timeline_semaphore");
    timeline_features_ = query;
    timeline_features_.pNext = features.pNext;
    features.pNext = &timeline_features_;
    interop_.timeline_semaphores = true;
  }
  if (HasExtension(physical_, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
    if (api < VK_API_VERSION_1_1) extensions.push_back("VK_KHR_external_memory");
    extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    interop_.memory_fd_import = true;
  }
  if (HasExtension(physical_, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    interop_.sync_fd_wait = SyncFdFeatures(physical_, VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT);
    interop_.sync_fd_signal = SyncFdFeatures(physical_, VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT);
  }
}

void VulkanDevice::LoadInteropFunctions() {
  if (!interop_.sync_fd_wait && !interop_.sync_fd_signal) return;
  import_semaphore_fd_ = reinterpret_cast<PFN_vkImportSemaphoreFdKHR>(vkGetDeviceProcAddr(device_, "vkImportSemaphoreFdKHR"));
  get_semaphore_fd_ = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(vkGetDeviceProcAddr(device_, "vkGetSemaphoreFdKHR"));
  interop_.sync_fd_wait = interop_.sync_fd_wait && import_semaphore_fd_ != nullptr;
  interop_.sync_fd_signal = interop_.sync_fd_signal && get_semaphore_fd_ != nullptr;
}

Interop VulkanDevice::interop() const {
  Interop i = interop_;
  i.vk_instance = reinterpret_cast<uint64_t>(instance_->handle());
  i.vk_physical_device = reinterpret_cast<uint64_t>(physical_);
  i.vk_device = reinterpret_cast<uint64_t>(device_);
  i.vk_queue = reinterpret_cast<uint64_t>(queue_);
  i.vk_queue_family = queue_family_;
  return i;
}

absl::StatusOr<std::unique_ptr<Buffer>> VulkanDevice::ImportBuffer(const ExternalBuffer& external) {
  if (external.bytes == 0) return absl::InvalidArgumentError("an app's buffer of 0 bytes");
  const size_t alignment = std::max<size_t>(info_.limits.storage_buffer_offset_alignment, 1);
  if (external.offset % alignment != 0) {
    return absl::InvalidArgumentError(fmt::format("the app's buffer offset {} is not a multiple of the device's storage "
                                                  "buffer offset alignment ({})", external.offset, alignment));
  }
  const size_t size = external.offset + external.bytes;  // the buffer as bound: the data at `offset`
  if (external.type == ExternalBuffer::Type::kVulkanBuffer) {
    if (external.handle == 0) return absl::InvalidArgumentError("the app's VkBuffer is VK_NULL_HANDLE");
    return std::unique_ptr<Buffer>(std::make_unique<VulkanBuffer>(device_, reinterpret_cast<VkBuffer>(external.handle),
                                                                  /*owns_buffer=*/false, VK_NULL_HANDLE, size));
  }
  if (external.type != ExternalBuffer::Type::kVulkanMemoryFd) {
    return absl::InvalidArgumentError("a Vulkan device takes a VkBuffer or memory as an opaque fd, not a GL buffer");
  }
  if (!interop_.memory_fd_import) {
    return absl::UnimplementedError(fmt::format("{} cannot import memory from fds (no VK_KHR_external_memory_fd)", info_.device_name));
  }
  if (external.fd < 0) return absl::InvalidArgumentError("the app's memory fd is negative");
  // The buffer covers the memory from its start; the data is at `offset`.
  VkExternalMemoryBufferCreateInfo external_info{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  external_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.pNext = &external_info;
  bi.size = (size + 3) / 4 * 4;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  MGD_VK(vkCreateBuffer(device_, &bi, nullptr, &buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, buffer, &req);
  // An opaque fd's memory is imported with the exporter's size and type,
  // which the app passes (external.memory_bytes, memory_type).
  if (external.memory_bytes < req.size || (req.memoryTypeBits & (1u << external.memory_type)) == 0) {
    vkDestroyBuffer(device_, buffer, nullptr);
    return absl::InvalidArgumentError(fmt::format(
        "the app's memory ({} bytes of memory type {}) cannot hold a storage buffer of {} bytes (it needs {} bytes of a "
        "type in mask {:#x})", external.memory_bytes, external.memory_type, size, req.size, req.memoryTypeBits));
  }
  VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
  import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  import.fd = external.fd;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &import;
  ai.allocationSize = external.memory_bytes;
  ai.memoryTypeIndex = external.memory_type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  if (VkResult r = vkAllocateMemory(device_, &ai, nullptr, &memory); r != VK_SUCCESS) {
    vkDestroyBuffer(device_, buffer, nullptr);
    return VkError("vkAllocateMemory (importing the app's memory fd)", r);
  }
  // The fd belongs to the driver now.
  if (VkResult r = vkBindBufferMemory(device_, buffer, memory, 0); r != VK_SUCCESS) {
    vkDestroyBuffer(device_, buffer, nullptr);
    vkFreeMemory(device_, memory, nullptr);
    return VkError("vkBindBufferMemory", r);
  }
  return std::unique_ptr<Buffer>(std::make_unique<VulkanBuffer>(device_, buffer, /*owns_buffer=*/true, memory, size));
}

void VulkanDevice::DestroySemaphores(const std::vector<VkSemaphore>& own) {
  for (VkSemaphore s : own) vkDestroySemaphore(device_, s, nullptr);
}

absl::Status VulkanDevice::PrepareSemaphores(const SubmitSync& sync, SubmitSemaphores& out) {
  auto fail = [&](absl::Status status) {
    DestroySemaphores(out.own);
    out.own.clear();
    return status;
  };
  auto unusable = [&](const SyncObject& s, const char* why) {
    return absl::UnimplementedError(fmt::format("{} cannot use a {}: {}", info_.device_name, GpuSyncTypeName(s.type), why));
  };
  for (const SyncObject& s : sync.wait) {
    switch (s.type) {
      case SyncObject::Type::kVulkanSemaphore:
      case SyncObject::Type::kVulkanTimelineSemaphore:
        if (s.type == SyncObject::Type::kVulkanTimelineSemaphore && !interop_.timeline_semaphores) {
          return fail(unusable(s, "no timeline semaphores"));
        }
        if (s.handle == 0) return fail(absl::InvalidArgumentError("a semaphore to wait on is VK_NULL_HANDLE"));
        out.wait.push_back(reinterpret_cast<VkSemaphore>(s.handle));
        out.wait_values.push_back(s.value);
        break;
      case SyncObject::Type::kSyncFd: {
        if (!interop_.sync_fd_wait) return fail(unusable(s, "it cannot import sync fds"));
        // -1 is a sync file that has already signalled: nothing to wait for.
        if (s.fd < 0) continue;
        VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore made = VK_NULL_HANDLE;
        if (VkResult r = vkCreateSemaphore(device_, &ci, nullptr, &made); r != VK_SUCCESS) return fail(VkError("vkCreateSemaphore", r));
        out.own.push_back(made);
        VkImportSemaphoreFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR};
        import.semaphore = made;
        import.flags = VK_SEMAPHORE_IMPORT_TEMPORARY_BIT;
        import.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
        import.fd = s.fd;
        if (VkResult r = import_semaphore_fd_(device_, &import); r != VK_SUCCESS) return fail(VkError("vkImportSemaphoreFdKHR", r));
        out.wait.push_back(made);
        out.wait_values.push_back(0);
        break;
      }
      case SyncObject::Type::kEglSync: return fail(unusable(s, "EGL syncs are GL's"));
    }
    out.wait_stages.push_back(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  }
  for (const SyncObject& s : sync.signal) {
    if (s.type != SyncObject::Type::kVulkanSemaphore && s.type != SyncObject::Type::kVulkanTimelineSemaphore) {
      return fail(unusable(s, "only semaphores are signalled; ask for a new sync fd with signal_new"));
    }
    if (s.type == SyncObject::Type::kVulkanTimelineSemaphore && !interop_.timeline_semaphores) {
      return fail(unusable(s, "no timeline semaphores"));
    }
    if (s.handle == 0) return fail(absl::InvalidArgumentError("a semaphore to signal is VK_NULL_HANDLE"));
    out.signal.push_back(reinterpret_cast<VkSemaphore>(s.handle));
    out.signal_values.push_back(s.value);
  }
  if (sync.signal_new != nullptr) {
    if (sync.signal_new->type != SyncObject::Type::kSyncFd) {
      return fail(unusable(*sync.signal_new, "a new sync object from Vulkan is a sync fd"));
    }
    if (!interop_.sync_fd_signal) return fail(unusable(*sync.signal_new, "it cannot export sync fds; signal a semaphore instead"));
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
    VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    ci.pNext = &export_info;
    if (VkResult r = vkCreateSemaphore(device_, &ci, nullptr, &out.export_fd); r != VK_SUCCESS) {
      return fail(VkError("vkCreateSemaphore (exportable)", r));
    }
    out.own.push_back(out.export_fd);
    out.signal.push_back(out.export_fd);
    out.signal_values.push_back(0);
  }
  return absl::OkStatus();
}

}  // namespace mgd::gpu::vulkan
