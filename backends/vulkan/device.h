// The Vulkan device's parts, shared by the files that implement it
// (vulkan_device.cc: creation and buffers; vulkan_transfers.cc: uploads,
// downloads and queue submission; vulkan_programs.cc: programs, layouts and
// the pipeline cache; vulkan_recording.cc: recording and running). Private to
// backends/vulkan/.
#pragma once

#include <fmt/format.h>
#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/gpu/faults.h"
#include "backends/vulkan/instance.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/vulkan_device.h"

namespace mgd::gpu::vulkan {

inline constexpr uint64_t kRunTimeoutNs = static_cast<uint64_t>(kRunTimeout.count());

#ifdef NDEBUG
inline constexpr bool kOptimizeSpirv = true;
#else
inline constexpr bool kOptimizeSpirv = false;
#endif

// A lost device is for good (Unavailable, saying what to do); running out
// of memory may pass (ResourceExhausted).
inline absl::Status VkError(const char* call, VkResult result) {
  if (result == VK_ERROR_DEVICE_LOST) return DeviceLostError(call);
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
    return absl::ResourceExhaustedError(fmt::format("{} failed: out of {} memory", call,
                                                    result == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "device" : "host"));
  }
  return absl::InternalError(fmt::format("{} failed (VkResult {})", call, static_cast<int>(result)));
}

#define MGD_VK(call)                                            \
  do {                                                          \
    VkResult mgd_vk_result_ = (call);                           \
    if (mgd_vk_result_ != VK_SUCCESS) return VkError(#call, mgd_vk_result_); \
  } while (false)

class VulkanDevice;

class VulkanBuffer : public Buffer {
 public:
  VulkanBuffer(VkDevice device, MemoryAllocator* allocator, VkBuffer buffer, Allocation allocation, size_t size)
      : device_(device), allocator_(allocator), buffer_(buffer), allocation_(allocation), size_(size) {}
  // An app's buffer (ImportBuffer): its VkBuffer is the app's, or mgd's own
  // over imported memory (`memory`, then freed with it).
  VulkanBuffer(VkDevice device, VkBuffer buffer, bool owns_buffer, VkDeviceMemory memory, size_t size)
      : device_(device), allocator_(nullptr), buffer_(buffer), allocation_{}, size_(size), owns_buffer_(owns_buffer),
        imported_memory_(memory) {}
  ~VulkanBuffer() override {
    if (owns_buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
    if (allocator_ != nullptr) allocator_->Free(allocation_);
    if (imported_memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, imported_memory_, nullptr);
  }
  size_t size() const override { return size_; }
  VkBuffer handle() const { return buffer_; }
  const Allocation& allocation() const { return allocation_; }

 private:
  VkDevice device_;
  MemoryAllocator* allocator_;
  VkBuffer buffer_;
  Allocation allocation_;
  size_t size_;
  bool owns_buffer_ = true;
  VkDeviceMemory imported_memory_ = VK_NULL_HANDLE;
};

class VulkanProgram : public Program {
 public:
  VulkanProgram(VkDevice device, std::string name) : device_(device), name_(std::move(name)) {}
  ~VulkanProgram() override {
    if (pipeline != VK_NULL_HANDLE) vkDestroyPipeline(device_, pipeline, nullptr);
    if (module != VK_NULL_HANDLE) vkDestroyShaderModule(device_, module, nullptr);
  }
  const std::string& name() const override { return name_; }
  std::array<uint32_t, 3> workgroup_size() const override { return workgroup; }
  std::vector<uint32_t> spirv() const override { return spirv_words; }
  // The shader module identifier, tagged with its algorithm's UUID, where the
  // driver offers them (VK_EXT_shader_module_identifier).
  std::vector<uint8_t> binary() const override { return identifier; }
  bool from_binary() const override { return from_identifier; }
  BuildFeedback build_feedback() const override { return feedback; }

  VkShaderModule module = VK_NULL_HANDLE;              // none when made from an identifier
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;  // both owned by the device, shared
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::array<uint32_t, 3> workgroup{1, 1, 1};
  uint32_t num_bindings = 0;
  uint32_t push_constant_bytes = 0;
  std::vector<uint32_t> spirv_words;
  std::vector<uint8_t> identifier;
  bool from_identifier = false;
  BuildFeedback feedback;

 private:
  VkDevice device_;
  std::string name_;
};

class VulkanRecording : public Recording {
 public:
  // `pool_mutex` guards the command pool, which Vulkan requires callers to
  // synchronize.
  VulkanRecording(VkDevice device, VkCommandPool pool, std::mutex* pool_mutex)
      : device_(device), pool_(pool), pool_mutex_(pool_mutex) {}
  ~VulkanRecording() override {
    if (command_buffer != VK_NULL_HANDLE) {
      std::lock_guard<std::mutex> lock(*pool_mutex_);
      vkFreeCommandBuffers(device_, pool_, 1, &command_buffer);
    }
    if (descriptor_pool != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, descriptor_pool, nullptr);
    if (queries != VK_NULL_HANDLE) vkDestroyQueryPool(device_, queries, nullptr);
  }
  size_t num_dispatches() const override { return dispatches; }
  size_t num_barriers() const override { return barriers; }
  std::vector<double> dispatch_ns() const override { return last_ns; }
  std::vector<double> dispatch_start_ns() const override { return last_start_ns; }

  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  size_t dispatches = 0, barriers = 0;
  std::vector<double> last_ns, last_start_ns;

 private:
  VkDevice device_;
  VkCommandPool pool_;
  std::mutex* pool_mutex_;
};

inline void ComputeBarrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src;
  barrier.dstAccessMask = dst;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

class VulkanDevice : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<Device>> Create(const DeviceOptions& options);

  ~VulkanDevice() override;

  const GpuInfo& info() const override { return info_; }
  std::vector<std::string> validation_messages() const override { return instance_->messages(); }

  using Device::CreateBuffer;
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes, Use use) override;

  absl::Status Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset) override;

  void ReserveUploadBytes(size_t bytes) override;

  absl::Status UploadAll(const std::vector<UploadRequest>& uploads) override;

  absl::Status Download(const Buffer& buffer, void* data, size_t bytes, size_t offset) override;

  absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSource& source) override;

  std::vector<uint8_t> PipelineCacheData() const override;

  // The header is checked here rather than left to the driver: the spec
  // lets a driver ignore foreign data, but not every driver parses what it
  // is given with care, and the error says which field did not match.
  absl::Status MergePipelineCacheData(const std::vector<uint8_t>& data) override;

  absl::StatusOr<std::unique_ptr<Recording>> Record(const std::vector<Dispatch>& dispatches,
                                                    const RecordOptions& options) override;

  absl::Status Run(Recording& recording) override;
  using Device::Submit;
  absl::StatusOr<uint64_t> Submit(Recording& recording, const SubmitSync& sync) override;
  using Device::Wait;
  absl::Status Wait(uint64_t ticket, std::chrono::nanoseconds timeout) override;

  // vulkan_interop.cc: an app's buffers and semaphores.
  absl::StatusOr<std::unique_ptr<Buffer>> ImportBuffer(const ExternalBuffer& external) override;
  Interop interop() const override;
  void LockQueue() override { mutex_.lock(); }
  void UnlockQueue() override { mutex_.unlock(); }

 private:
  VulkanDevice() = default;

  absl::Status Init(Priority priority);

  // The descriptor set and pipeline layouts for programs of this shape, made
  // once per device: every program with n storage buffers and the same push
  // constants has the same layouts, and creating them per program costs
  // driver time at start-up.
  // NVIDIA's driver sets something up at a device's first pipeline layout:
  // ~6 ms on the H200, which delayed the first program of the first prepare
  // (and every program after it). Made on another thread as the device is
  // created, it overlaps the app's reading its model (warm prepares 3-5 ms
  // shorter; docs/perf.md). The layout made, three bindings without push
  // constants, is the commonest, and is kept for the programs that use it.
  void WarmUpLayouts();

  absl::Status SharedLayouts(uint32_t num_bindings, uint32_t push_constant_bytes, VulkanProgram& p);

  // vkCreateComputePipelines through the device's pipeline cache, with the
  // driver's creation feedback (Vulkan 1.3) kept in the program.
  VkResult CreatePipeline(const VkPipelineShaderStageCreateInfo& stage, VkPipelineCreateFlags flags, VulkanProgram& p);

  // A pipeline the driver already has, named by the shader module identifier
  // a cache kept (ProgramSource::binary: the identifier algorithm's UUID,
  // then the identifier): nothing is compiled, and the SPIR-V is neither
  // parsed by the driver nor validated, since the driver never sees it.
  // False when the driver would have to compile (another driver, an evicted
  // pipeline): the caller then builds from the SPIR-V.
  bool CreateFromIdentifier(const ProgramSource& source, VulkanProgram& p);

  // In device-local memory the host can map where there is some and it has
  // room (the mappable heap is 256 MiB without resizable BAR), else in
  // memory with `required` (and preferably `preferred`) properties.
  absl::StatusOr<std::unique_ptr<VulkanBuffer>> MappableDeviceBufferOr(size_t bytes, VkBufferUsageFlags usage,
                                                                       VkMemoryPropertyFlags mappable_preferred,
                                                                       VkMemoryPropertyFlags required,
                                                                       VkMemoryPropertyFlags preferred);

  absl::StatusOr<std::unique_ptr<VulkanBuffer>> MakeBuffer(size_t bytes, VkBufferUsageFlags usage,
                                                           VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);

  absl::Status EnsureStaging(size_t bytes);

  absl::Status Flush(const Allocation& a, size_t offset, size_t bytes);

  absl::Status Invalidate(const Allocation& a, size_t, size_t);

  // One-off copy between buffers, waited for. Caller holds mutex_.
  absl::Status CopyNow(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t bytes);

  // Copies from `src` into each destination in one submission, and waits.
  // Caller holds mutex_.
  absl::Status CopyNow(VkBuffer src, const std::vector<std::pair<VkBuffer, VkBufferCopy>>& copies);

  // Caller holds mutex_.
  absl::Status SubmitAndWait(VkCommandBuffer cb);

  // What Init enables for apps' buffers and semaphores, and their entry points.
  void EnableInterop(uint32_t api, std::vector<const char*>& extensions, VkPhysicalDeviceFeatures2& features);
  void LoadInteropFunctions();
  // The semaphores a submission waits on and signals (vulkan_interop.cc),
  // with those mgd made for it (sync fds), freed once it completes. Caller
  // holds mutex_.
  struct SubmitSemaphores {
    std::vector<VkSemaphore> wait, signal, own;
    std::vector<uint64_t> wait_values, signal_values;
    std::vector<VkPipelineStageFlags> wait_stages;
    VkSemaphore export_fd = VK_NULL_HANDLE;  // signal_new: exported after submitting
  };
  absl::Status PrepareSemaphores(const SubmitSync& sync, SubmitSemaphores& out);
  void DestroySemaphores(const std::vector<VkSemaphore>& own);

  // A completed timestamped recording's times (last_ns, last_start_ns).
  absl::Status ReadTimestamps(VulkanRecording& r);

  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  GpuInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  uint32_t device_api_ = VK_API_VERSION_1_1;  // the Vulkan version the device is used at
  // VK_EXT_shader_module_identifier, when the driver has it (else null).
  PFN_vkGetShaderModuleIdentifierEXT get_identifier_ = nullptr;
  std::array<uint8_t, VK_UUID_SIZE> identifier_algorithm_{};
  struct Layouts {
    VkDescriptorSetLayout set = VK_NULL_HANDLE;
    VkPipelineLayout pipeline = VK_NULL_HANDLE;
  };
  std::map<std::pair<uint32_t, uint32_t>, Layouts> layouts_;  // (bindings, push constant bytes) -> layouts
  std::mutex layouts_mutex_;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  // vkMergePipelineCaches needs its destination to itself; pipeline creation
  // synchronizes on the cache inside the driver.
  mutable std::shared_mutex cache_mutex_;
  uint32_t cache_vendor_ = 0, cache_device_ = 0;  // what pipeline cache data must name
  std::array<uint8_t, VK_UUID_SIZE> cache_uuid_{};
  float timestamp_period_ = 1.0f;
  std::unique_ptr<MemoryAllocator> allocator_;
  std::unique_ptr<VulkanBuffer> staging_;
  std::mutex mutex_;  // the queue, the command pool, the fences and staging
  // Submit's fences: one per submission not yet waited for, by ticket, and
  // those free for the next (reset).
  struct Submitted {
    VkFence fence = VK_NULL_HANDLE;
    VulkanRecording* recording = nullptr;  // its timestamps are read when it completes
    std::vector<VkSemaphore> semaphores;   // made for it (SubmitSemaphores::own)
    std::chrono::steady_clock::time_point at;  // when it was submitted (Recording::last_run)
  };
  std::map<uint64_t, Submitted> submitted_;
  std::vector<VkFence> free_fences_;
  uint64_t last_ticket_ = 0;
  std::thread glslang_warm_up_;  // WarmUpGlslang, begun first in Create; joined first at destruction
  std::thread layouts_warm_up_;  // WarmUpLayouts; joined next
  bool mappable_device_memory_ = false;  // some device-local memory type is host-visible
  std::chrono::nanoseconds poll_time_{0};  // how long a wait polls its fence first (gpu::PollTime)
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline_features_{};  // in the device's feature chain
  Interop interop_;  // what was enabled (handles filled in by interop())
  PFN_vkImportSemaphoreFdKHR import_semaphore_fd_ = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd_ = nullptr;
};

}  // namespace mgd::gpu::vulkan
