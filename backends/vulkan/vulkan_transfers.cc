// Uploads, downloads and the copies and submissions behind them: a staging
// buffer where device memory cannot be mapped, one fence, one queue.
#include <algorithm>
#include <cstring>

#include "backends/vulkan/device.h"
#include "base/parallel.h"

namespace mgd::gpu::vulkan {

absl::Status VulkanDevice::Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset) {
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

void VulkanDevice::ReserveUploadBytes(size_t bytes) {
  if (mappable_device_memory_ || bytes == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  (void)EnsureStaging(bytes);
}

absl::Status VulkanDevice::UploadAll(const std::vector<UploadRequest>& uploads) {
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

absl::Status VulkanDevice::Download(const Buffer& buffer, void* data, size_t bytes, size_t offset) {
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

absl::Status VulkanDevice::EnsureStaging(size_t bytes) {
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

absl::Status VulkanDevice::Flush(const Allocation& a, size_t offset, size_t bytes) {
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

absl::Status VulkanDevice::Invalidate(const Allocation& a, size_t, size_t) {
  if (a.coherent) return absl::OkStatus();
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = a.memory;
  range.offset = a.offset;
  range.size = a.size;
  MGD_VK(vkInvalidateMappedMemoryRanges(device_, 1, &range));
  return absl::OkStatus();
}

absl::Status VulkanDevice::CopyNow(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t bytes) {
  return CopyNow(src, {{dst, VkBufferCopy{src_offset, dst_offset, bytes}}});
}

absl::Status VulkanDevice::CopyNow(VkBuffer src, const std::vector<std::pair<VkBuffer, VkBufferCopy>>& copies) {
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

absl::Status VulkanDevice::SubmitAndWait(VkCommandBuffer cb) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  MGD_VK(vkResetFences(device_, 1, &fence_));
  MGD_VK(vkQueueSubmit(queue_, 1, &si, fence_));
  PollFor(poll_time_, [&] { return vkGetFenceStatus(device_, fence_) != VK_NOT_READY; });  // an active wait, as Wait
  const VkResult r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, kRunTimeoutNs);
  if (r == VK_TIMEOUT) return absl::DeadlineExceededError("the GPU did not finish within 600 s");
  if (r != VK_SUCCESS) return VkError("vkWaitForFences", r);
  return absl::OkStatus();
}

}  // namespace mgd::gpu::vulkan
