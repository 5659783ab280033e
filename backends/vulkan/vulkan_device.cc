// Vulkan backend: device choice (the instance and device queries are in
// instance.h), one compute queue, sub-allocated memory, programs compiled in
// process, command buffers recorded once and resubmitted per run.
#include "backends/vulkan/vulkan_device.h"

#include <fmt/format.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "backends/vulkan/glsl_compiler.h"
#include "backends/vulkan/instance.h"
#include "backends/vulkan/memory.h"
#include "base/parallel.h"

namespace mgd::gpu::vulkan {
namespace {

// Generous: a software GPU compiles pipelines lazily at their first dispatch,
// which on a loaded 2-core machine can take minutes for a whole model.
constexpr uint64_t kRunTimeoutNs = uint64_t{600} * 1000 * 1000 * 1000;

#ifdef NDEBUG
constexpr bool kOptimizeSpirv = true;
#else
constexpr bool kOptimizeSpirv = false;
#endif

absl::Status VkError(const char* call, VkResult result) {
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
  ~VulkanBuffer() override {
    vkDestroyBuffer(device_, buffer_, nullptr);
    allocator_->Free(allocation_);
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

void ComputeBarrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src;
  barrier.dstAccessMask = dst;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

class VulkanDevice : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<Device>> Create(const DeviceOptions& options) {
    auto instance = Instance::Create(ValidationRequested(options));
    if (!instance.ok()) return instance.status();
    auto self = std::unique_ptr<VulkanDevice>(new VulkanDevice());
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
    if (absl::Status s = self->Init(); !s.ok()) return s;
    self->WarmUpLayouts();
    return std::unique_ptr<Device>(std::move(self));
  }

  ~VulkanDevice() override {
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
      if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);
      vkDestroyDevice(device_, nullptr);
    }
  }

  const GpuInfo& info() const override { return info_; }
  std::vector<std::string> validation_messages() const override { return instance_->messages(); }

  using Device::CreateBuffer;
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes, Use use) override {
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

  absl::Status Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset) override {
    auto& b = static_cast<VulkanBuffer&>(buffer);
    if (offset > b.size() || bytes > b.size() - offset) {
      return absl::OutOfRangeError(fmt::format("upload of {} bytes at offset {} into a {}-byte buffer", bytes, offset, b.size()));
    }
    if (bytes == 0) return absl::OkStatus();
    const Allocation& a = b.allocation();
    std::lock_guard<std::mutex> lock(mutex_);
    if (a.mapped != nullptr) {  // unified memory (integrated and CPU devices): no copy through staging
      std::memcpy(a.mapped + offset, data, bytes);
      return Flush(a, offset, bytes);
    }
    if (absl::Status s = EnsureStaging(bytes); !s.ok()) return s;
    std::memcpy(staging_->allocation().mapped, data, bytes);
    if (absl::Status s = Flush(staging_->allocation(), 0, bytes); !s.ok()) return s;
    return CopyNow(staging_->handle(), 0, b.handle(), offset, bytes);
  }

  void ReserveUploadBytes(size_t bytes) override {
    if (mappable_device_memory_ || bytes == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    (void)EnsureStaging(bytes);
  }

  absl::Status UploadAll(const std::vector<UploadRequest>& uploads) override {
    size_t staged = 0;
    for (const UploadRequest& u : uploads) {
      const auto& b = static_cast<const VulkanBuffer&>(*u.buffer);
      if (u.offset > b.size() || u.bytes > b.size() - u.offset) {
        return absl::OutOfRangeError(fmt::format("upload of {} bytes at offset {} into a {}-byte buffer", u.bytes, u.offset, b.size()));
      }
      if (b.allocation().mapped == nullptr) staged += (u.bytes + 15) / 16 * 16;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<VkBuffer, VkBufferCopy>> copies;
    if (staged > 0) {
      if (absl::Status s = EnsureStaging(staged); !s.ok()) return s;
    }
    size_t at = 0;
    struct Write {
      uint8_t* to;
      const void* from;
      size_t bytes;
    };
    std::vector<Write> writes;  // into mapped memory: the buffer's own, or staging for a copy
    std::vector<const Allocation*> to_flush;  // mapped, not coherent, each once
    size_t written = 0;
    for (const UploadRequest& u : uploads) {
      if (u.bytes == 0) continue;
      auto& b = static_cast<VulkanBuffer&>(*u.buffer);
      const Allocation& a = b.allocation();
      written += u.bytes;
      if (a.mapped != nullptr) {  // mappable device memory: no copy through staging
        writes.push_back({a.mapped + u.offset, u.data, u.bytes});
        if (!a.coherent && std::find(to_flush.begin(), to_flush.end(), &a) == to_flush.end()) to_flush.push_back(&a);
        continue;
      }
      copies.push_back({b.handle(), VkBufferCopy{at, u.offset, u.bytes}});
      writes.push_back({staging_->allocation().mapped + at, u.data, u.bytes});
      at += (u.bytes + 15) / 16 * 16;
    }
    // Megabytes of weights copy faster on several cores.
    ParallelFor(writes.size(), [&](size_t k) { std::memcpy(writes[k].to, writes[k].from, writes[k].bytes); },
                written < (size_t{4} << 20) ? 1 : SIZE_MAX);
    for (const Allocation* a : to_flush) {
      if (absl::Status s = Flush(*a, 0, a->size); !s.ok()) return s;
    }
    if (copies.empty()) return absl::OkStatus();
    if (absl::Status s = Flush(staging_->allocation(), 0, at); !s.ok()) return s;
    return CopyNow(staging_->handle(), copies);
  }

  absl::Status Download(const Buffer& buffer, void* data, size_t bytes, size_t offset) override {
    const auto& b = static_cast<const VulkanBuffer&>(buffer);
    if (offset > b.size() || bytes > b.size() - offset) {
      return absl::OutOfRangeError(fmt::format("download of {} bytes at offset {} from a {}-byte buffer", bytes, offset, b.size()));
    }
    if (bytes == 0) return absl::OkStatus();
    const Allocation& a = b.allocation();
    std::lock_guard<std::mutex> lock(mutex_);
    if (a.mapped != nullptr) {
      if (absl::Status s = Invalidate(a, offset, bytes); !s.ok()) return s;
      std::memcpy(data, a.mapped + offset, bytes);
      return absl::OkStatus();
    }
    if (absl::Status s = EnsureStaging(bytes); !s.ok()) return s;
    if (absl::Status s = CopyNow(b.handle(), offset, staging_->handle(), 0, bytes); !s.ok()) return s;
    if (absl::Status s = Invalidate(staging_->allocation(), 0, bytes); !s.ok()) return s;
    std::memcpy(data, staging_->allocation().mapped, bytes);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSource& source) override {
    using Clock = std::chrono::steady_clock;
    const auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    const auto t0 = Clock::now();
    auto p = std::make_unique<VulkanProgram>(device_, source.name);
    p->num_bindings = source.num_bindings;
    p->push_constant_bytes = source.push_constant_bytes;
    if (absl::Status s = SharedLayouts(source.num_bindings, source.push_constant_bytes, *p); !s.ok()) return s;
    if (CreateFromIdentifier(source, *p)) {
      p->feedback.phases = {{"SPIR-V", 0}, {"modules and layouts", 0}, {"pipelines", ms(t0, Clock::now())}};
      return std::unique_ptr<Program>(std::move(p));
    }
    auto module = source.spirv.empty() ? CompileGlsl(source.name, source.glsl, kOptimizeSpirv, info_.ieee_inf_nan)
                                       : LoadSpirv(source.name, source.spirv);
    if (!module.ok()) return module.status();
    if (absl::Status s = CheckProgramLimits(info_, source, module->workgroup_size); !s.ok()) return s;
    p->workgroup = module->workgroup_size;
    p->spirv_words = std::move(module->words);
    const auto t1 = Clock::now();
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = p->spirv_words.size() * 4;
    smi.pCode = p->spirv_words.data();
    MGD_VK(vkCreateShaderModule(device_, &smi, nullptr, &p->module));
    if (get_identifier_ != nullptr) {
      VkShaderModuleIdentifierEXT id{VK_STRUCTURE_TYPE_SHADER_MODULE_IDENTIFIER_EXT};
      get_identifier_(device_, p->module, &id);
      if (id.identifierSize > 0 && id.identifierSize <= VK_MAX_SHADER_MODULE_IDENTIFIER_SIZE_EXT) {
        p->identifier.assign(identifier_algorithm_.begin(), identifier_algorithm_.end());
        p->identifier.insert(p->identifier.end(), id.identifier, id.identifier + id.identifierSize);
      }
    }
    const auto t2 = Clock::now();
    VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stage.module = p->module;
    stage.pName = "main";
    if (VkResult r = CreatePipeline(stage, 0, *p); r != VK_SUCCESS) return VkError("vkCreateComputePipelines", r);
    p->feedback.phases = {{"SPIR-V", ms(t0, t1)}, {"modules and layouts", ms(t1, t2)}, {"pipelines", ms(t2, Clock::now())}};
    return std::unique_ptr<Program>(std::move(p));
  }

  std::vector<uint8_t> PipelineCacheData() const override {
    std::unique_lock<std::shared_mutex> lock(cache_mutex_);
    size_t size = 0;
    if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS) return {};
    std::vector<uint8_t> data(size);
    // VK_INCOMPLETE (the cache grew in between) cannot happen under the lock.
    if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return {};
    data.resize(size);
    return data;
  }

  // The header is checked here rather than left to the driver: the spec
  // lets a driver ignore foreign data, but not every driver parses what it
  // is given with care, and the error says which field did not match.
  absl::Status MergePipelineCacheData(const std::vector<uint8_t>& data) override {
    if (data.empty()) return absl::OkStatus();
    VkPipelineCacheHeaderVersionOne header{};
    if (data.size() < sizeof(header)) {
      return absl::InvalidArgumentError(fmt::format("pipeline cache data: {} bytes, shorter than its header", data.size()));
    }
    std::memcpy(&header, data.data(), sizeof(header));
    if (header.headerSize < sizeof(header) || header.headerSize > data.size()) {
      return absl::InvalidArgumentError(fmt::format("pipeline cache data: header size {} of {} bytes", header.headerSize, data.size()));
    }
    if (header.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
      return absl::InvalidArgumentError(fmt::format("pipeline cache data: header version {}", static_cast<int>(header.headerVersion)));
    }
    if (header.vendorID != cache_vendor_ || header.deviceID != cache_device_) {
      return absl::InvalidArgumentError(fmt::format("pipeline cache data: made by device {:04x}:{:04x}, this is {:04x}:{:04x}",
                                                    header.vendorID, header.deviceID, cache_vendor_, cache_device_));
    }
    if (std::memcmp(header.pipelineCacheUUID, cache_uuid_.data(), VK_UUID_SIZE) != 0) {
      return absl::InvalidArgumentError("pipeline cache data: made by another driver version (pipelineCacheUUID differs)");
    }
    VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    pci.initialDataSize = data.size();
    pci.pInitialData = data.data();
    VkPipelineCache loaded = VK_NULL_HANDLE;
    MGD_VK(vkCreatePipelineCache(device_, &pci, nullptr, &loaded));
    std::unique_lock<std::shared_mutex> lock(cache_mutex_);
    const VkResult merged = vkMergePipelineCaches(device_, pipeline_cache_, 1, &loaded);
    vkDestroyPipelineCache(device_, loaded, nullptr);
    if (merged != VK_SUCCESS) return VkError("vkMergePipelineCaches", merged);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Recording>> Record(const std::vector<Dispatch>& dispatches,
                                                    const RecordOptions& options) override {
    if (dispatches.empty()) return absl::InvalidArgumentError("cannot record an empty sequence of dispatches");
    uint32_t total_bindings = 0;
    for (size_t i = 0; i < dispatches.size(); ++i) {
      const auto* p = static_cast<const VulkanProgram*>(dispatches[i].program);
      if (p == nullptr) return absl::InvalidArgumentError(fmt::format("dispatch {} has no program", i));
      if (absl::Status s = CheckDispatch(info_, dispatches[i], p->name(), p->num_bindings, p->push_constant_bytes, i); !s.ok()) {
        return s;
      }
      total_bindings += p->num_bindings;
    }
    if (options.timestamps && !info_.timestamps) {
      return absl::FailedPreconditionError(fmt::format("{} has no timestamp queries on its compute queue", info_.device_name));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto r = std::make_unique<VulkanRecording>(device_, command_pool_, &mutex_);
    r->dispatches = dispatches.size();
    const auto n = static_cast<uint32_t>(dispatches.size());
    VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(total_bindings, 1u)};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = n;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &pool_size;
    MGD_VK(vkCreateDescriptorPool(device_, &dpi, nullptr, &r->descriptor_pool));
    std::vector<VkDescriptorSet> sets(n);
    for (uint32_t i = 0; i < n; ++i) {
      const auto* p = static_cast<const VulkanProgram*>(dispatches[i].program);
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = r->descriptor_pool;
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &p->set_layout;
      MGD_VK(vkAllocateDescriptorSets(device_, &ai, &sets[i]));
      std::vector<VkDescriptorBufferInfo> infos(p->num_bindings);
      std::vector<VkWriteDescriptorSet> writes(p->num_bindings);
      for (uint32_t b = 0; b < p->num_bindings; ++b) {
        const Binding& binding = dispatches[i].bindings[b];
        infos[b] = {static_cast<VulkanBuffer*>(binding.buffer)->handle(), binding.offset,
                    binding.bytes != 0 ? binding.bytes : VK_WHOLE_SIZE};
        writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[b].dstSet = sets[i];
        writes[b].dstBinding = b;
        writes[b].descriptorCount = 1;
        writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[b].pBufferInfo = &infos[b];
      }
      if (!writes.empty()) vkUpdateDescriptorSets(device_, p->num_bindings, writes.data(), 0, nullptr);
    }
    if (options.timestamps) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = 2 * n;
      MGD_VK(vkCreateQueryPool(device_, &qi, nullptr, &r->queries));
    }
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = command_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    MGD_VK(vkAllocateCommandBuffers(device_, &cai, &r->command_buffer));
    VkCommandBuffer cb = r->command_buffer;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    MGD_VK(vkBeginCommandBuffer(cb, &begin));
    if (r->queries != VK_NULL_HANDLE) vkCmdResetQueryPool(cb, r->queries, 0, 2 * n);
    // Uploads (host writes, transfers) become visible to the shaders.
    ComputeBarrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    const std::vector<bool> barrier = PlanBarriers(dispatches);
    for (uint32_t i = 0; i < n; ++i) {
      const Dispatch& d = dispatches[i];
      const auto* p = static_cast<const VulkanProgram*>(d.program);
      if (barrier[i]) {
        ComputeBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        ++r->barriers;
      }
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline_layout, 0, 1, &sets[i], 0, nullptr);
      if (p->push_constant_bytes > 0) {
        vkCmdPushConstants(cb, p->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_constant_bytes,
                           d.push_constants.data());
      }
      if (r->queries != VK_NULL_HANDLE) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, r->queries, 2 * i);
      vkCmdDispatch(cb, d.groups[0], d.groups[1], d.groups[2]);
      if (r->queries != VK_NULL_HANDLE) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->queries, 2 * i + 1);
    }
    // Results become visible to the host and to later transfers.
    ComputeBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    MGD_VK(vkEndCommandBuffer(cb));
    return std::unique_ptr<Recording>(std::move(r));
  }

  absl::Status Run(Recording& recording) override {
    auto& r = static_cast<VulkanRecording&>(recording);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (absl::Status s = SubmitAndWait(r.command_buffer); !s.ok()) return s;
    }
    if (r.queries != VK_NULL_HANDLE) {
      std::vector<uint64_t> stamps(2 * r.dispatches);
      MGD_VK(vkGetQueryPoolResults(device_, r.queries, 0, static_cast<uint32_t>(stamps.size()),
                                   stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      r.last_ns.resize(r.dispatches);
      r.last_start_ns.resize(r.dispatches);
      for (size_t i = 0; i < r.dispatches; ++i) {
        r.last_start_ns[i] = static_cast<double>(stamps[2 * i] - stamps[0]) * timestamp_period_;
        r.last_ns[i] = static_cast<double>(stamps[2 * i + 1] - stamps[2 * i]) * timestamp_period_;
      }
    }
    return absl::OkStatus();
  }

 private:
  VulkanDevice() = default;

  absl::Status Init() {
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

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = queue_family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
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
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &features;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    MGD_VK(vkCreateDevice(physical_, &dci, nullptr, &device_));
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
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
  void WarmUpLayouts() {
    layouts_warm_up_ = std::thread([this] {
      VulkanProgram unused(device_, "layouts warm-up");
      (void)SharedLayouts(3, 0, unused);  // a failure here is met again, and reported, by the first program
    });
  }

  absl::Status SharedLayouts(uint32_t num_bindings, uint32_t push_constant_bytes, VulkanProgram& p) {
    std::lock_guard<std::mutex> lock(layouts_mutex_);
    auto [it, added] = layouts_.try_emplace({num_bindings, push_constant_bytes});
    if (added) {
      std::vector<VkDescriptorSetLayoutBinding> bindings(num_bindings);
      for (uint32_t i = 0; i < num_bindings; ++i) {
        bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
      }
      VkDescriptorSetLayoutCreateInfo dsl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
      dsl.bindingCount = num_bindings;
      dsl.pBindings = bindings.data();
      VkResult r = vkCreateDescriptorSetLayout(device_, &dsl, nullptr, &it->second.set);
      VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
      VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
      pl.setLayoutCount = 1;
      pl.pSetLayouts = &it->second.set;
      pl.pushConstantRangeCount = push_constant_bytes > 0 ? 1 : 0;
      pl.pPushConstantRanges = &range;
      if (r == VK_SUCCESS) r = vkCreatePipelineLayout(device_, &pl, nullptr, &it->second.pipeline);
      if (r != VK_SUCCESS) {
        if (it->second.set != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, it->second.set, nullptr);
        layouts_.erase(it);
        return VkError("creating the pipeline layout", r);
      }
    }
    p.set_layout = it->second.set;
    p.pipeline_layout = it->second.pipeline;
    return absl::OkStatus();
  }

  // vkCreateComputePipelines through the device's pipeline cache, with the
  // driver's creation feedback (Vulkan 1.3) kept in the program.
  VkResult CreatePipeline(const VkPipelineShaderStageCreateInfo& stage, VkPipelineCreateFlags flags, VulkanProgram& p) {
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.flags = flags;
    ci.stage = stage;
    ci.layout = p.pipeline_layout;
    VkPipelineCreationFeedback whole{}, stage_feedback{};
    VkPipelineCreationFeedbackCreateInfo feedback{VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO};
    feedback.pPipelineCreationFeedback = &whole;
    feedback.pipelineStageCreationFeedbackCount = 1;
    feedback.pPipelineStageCreationFeedbacks = &stage_feedback;
    if (device_api_ >= VK_API_VERSION_1_3) ci.pNext = &feedback;
    VkResult r;
    {
      std::shared_lock<std::shared_mutex> lock(cache_mutex_);  // many creations at once; no merge meanwhile
      r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p.pipeline);
    }
    if (r != VK_SUCCESS) p.pipeline = VK_NULL_HANDLE;
    if ((whole.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT) != 0) {
      p.feedback.driver_known = true;
      p.feedback.cache_hit = (whole.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT) != 0;
      p.feedback.driver_ms = static_cast<double>(whole.duration) / 1e6;
    }
    return r;
  }

  // A pipeline the driver already has, named by the shader module identifier
  // a cache kept (ProgramSource::binary: the identifier algorithm's UUID,
  // then the identifier): nothing is compiled, and the SPIR-V is neither
  // parsed by the driver nor validated, since the driver never sees it.
  // False when the driver would have to compile (another driver, an evicted
  // pipeline): the caller then builds from the SPIR-V.
  bool CreateFromIdentifier(const ProgramSource& source, VulkanProgram& p) {
    const std::vector<uint8_t>& tagged = source.binary;
    if (get_identifier_ == nullptr || source.spirv.empty() || tagged.size() <= VK_UUID_SIZE ||
        tagged.size() > VK_UUID_SIZE + VK_MAX_SHADER_MODULE_IDENTIFIER_SIZE_EXT ||
        std::memcmp(tagged.data(), identifier_algorithm_.data(), VK_UUID_SIZE) != 0) {
      return false;
    }
    const std::array<uint32_t, 3> workgroup = SpirvLocalSize(source.spirv);
    if (!CheckProgramLimits(info_, source, workgroup).ok()) return false;
    VkPipelineShaderStageModuleIdentifierCreateInfoEXT id{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_MODULE_IDENTIFIER_CREATE_INFO_EXT};
    id.identifierSize = static_cast<uint32_t>(tagged.size() - VK_UUID_SIZE);
    id.pIdentifier = tagged.data() + VK_UUID_SIZE;
    VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stage.pNext = &id;
    stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stage.pName = "main";
    if (CreatePipeline(stage, VK_PIPELINE_CREATE_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT, p) != VK_SUCCESS) return false;
    p.workgroup = workgroup;
    p.spirv_words = source.spirv;
    p.identifier = tagged;
    p.from_identifier = true;
    return true;
  }

  // In device-local memory the host can map where there is some and it has
  // room (the mappable heap is 256 MiB without resizable BAR), else in
  // memory with `required` (and preferably `preferred`) properties.
  absl::StatusOr<std::unique_ptr<VulkanBuffer>> MappableDeviceBufferOr(size_t bytes, VkBufferUsageFlags usage,
                                                                       VkMemoryPropertyFlags mappable_preferred,
                                                                       VkMemoryPropertyFlags required,
                                                                       VkMemoryPropertyFlags preferred) {
    if (mappable_device_memory_) {
      auto mapped = MakeBuffer(bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                               mappable_preferred);
      if (mapped.ok()) return mapped;
    }
    return MakeBuffer(bytes, usage, required, preferred);
  }

  absl::StatusOr<std::unique_ptr<VulkanBuffer>> MakeBuffer(size_t bytes, VkBufferUsageFlags usage,
                                                           VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
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

  absl::Status EnsureStaging(size_t bytes) {
    if (staging_ != nullptr && staging_->size() >= bytes) return absl::OkStatus();
    staging_.reset();
    auto staging = MakeBuffer(std::max<size_t>(bytes, size_t{1} << 20),
                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (!staging.ok()) return staging.status();
    staging_ = std::move(*staging);
    if (staging_->allocation().mapped == nullptr) return absl::InternalError("staging memory could not be mapped");
    return absl::OkStatus();
  }

  absl::Status Flush(const Allocation& a, size_t offset, size_t bytes) {
    if (a.coherent) return absl::OkStatus();
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = a.memory;
    range.offset = a.offset + offset;
    range.size = bytes;
    // Ranges must be aligned to nonCoherentAtomSize: flush the whole allocation.
    range.offset = a.offset;
    range.size = a.size;
    MGD_VK(vkFlushMappedMemoryRanges(device_, 1, &range));
    return absl::OkStatus();
  }

  absl::Status Invalidate(const Allocation& a, size_t, size_t) {
    if (a.coherent) return absl::OkStatus();
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = a.memory;
    range.offset = a.offset;
    range.size = a.size;
    MGD_VK(vkInvalidateMappedMemoryRanges(device_, 1, &range));
    return absl::OkStatus();
  }

  // One-off copy between buffers, waited for. Caller holds mutex_.
  absl::Status CopyNow(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t bytes) {
    return CopyNow(src, {{dst, VkBufferCopy{src_offset, dst_offset, bytes}}});
  }

  // Copies from `src` into each destination in one submission, and waits.
  // Caller holds mutex_.
  absl::Status CopyNow(VkBuffer src, const std::vector<std::pair<VkBuffer, VkBufferCopy>>& copies) {
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = command_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb;
    MGD_VK(vkAllocateCommandBuffers(device_, &cai, &cb));
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    // Earlier shader writes and host writes are complete (every submit is
    // waited for) but must be made visible to the transfer.
    ComputeBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    for (const auto& [dst, region] : copies) vkCmdCopyBuffer(cb, src, dst, 1, &region);
    ComputeBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
    vkEndCommandBuffer(cb);
    absl::Status s = SubmitAndWait(cb);
    vkFreeCommandBuffers(device_, command_pool_, 1, &cb);
    return s;
  }

  // Caller holds mutex_.
  absl::Status SubmitAndWait(VkCommandBuffer cb) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    MGD_VK(vkResetFences(device_, 1, &fence_));
    MGD_VK(vkQueueSubmit(queue_, 1, &si, fence_));
    const VkResult r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, kRunTimeoutNs);
    if (r == VK_TIMEOUT) return absl::DeadlineExceededError("the GPU did not finish within 600 s");
    if (r != VK_SUCCESS) return VkError("vkWaitForFences", r);
    return absl::OkStatus();
  }

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
  std::mutex mutex_;  // the queue, the command pool, the fence and staging
  std::thread layouts_warm_up_;  // WarmUpLayouts; joined first at destruction
  bool mappable_device_memory_ = false;  // some device-local memory type is host-visible
};

}  // namespace

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
