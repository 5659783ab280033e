// Command buffers recorded once and resubmitted per run, with timestamps
// when asked.
#include <algorithm>

#include "backends/vulkan/device.h"

namespace mgd::gpu::vulkan {

absl::StatusOr<std::unique_ptr<Recording>> VulkanDevice::Record(const std::vector<Dispatch>& dispatches, const RecordOptions& options) {
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
  // Uploads (host writes, transfers) become visible to the shaders; with
  // after_earlier_work, so do earlier submissions' dispatches, which also
  // finish first.
  const VkPipelineStageFlags earlier = options.after_earlier_work ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT : 0;
  ComputeBarrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | earlier,
                 VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | (earlier != 0 ? VK_ACCESS_SHADER_WRITE_BIT : 0),
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
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

absl::StatusOr<uint64_t> VulkanDevice::Submit(Recording& recording, const SubmitSync& sync) {
  auto& r = static_cast<VulkanRecording&>(recording);
  std::lock_guard<std::mutex> lock(mutex_);
  SubmitSemaphores semaphores;
  if (absl::Status s = PrepareSemaphores(sync, semaphores); !s.ok()) return s;
  VkFence fence = VK_NULL_HANDLE;
  if (!free_fences_.empty()) {
    fence = free_fences_.back();
    free_fences_.pop_back();
  } else {
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (VkResult result = vkCreateFence(device_, &fci, nullptr, &fence); result != VK_SUCCESS) {
      DestroySemaphores(semaphores.own);
      return VkError("vkCreateFence", result);
    }
  }
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &r.command_buffer;
  si.waitSemaphoreCount = static_cast<uint32_t>(semaphores.wait.size());
  si.pWaitSemaphores = semaphores.wait.data();
  si.pWaitDstStageMask = semaphores.wait_stages.data();
  si.signalSemaphoreCount = static_cast<uint32_t>(semaphores.signal.size());
  si.pSignalSemaphores = semaphores.signal.data();
  // Timeline values (ignored for binary semaphores), where there are any.
  VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  values.waitSemaphoreValueCount = si.waitSemaphoreCount;
  values.pWaitSemaphoreValues = semaphores.wait_values.data();
  values.signalSemaphoreValueCount = si.signalSemaphoreCount;
  values.pSignalSemaphoreValues = semaphores.signal_values.data();
  if (interop_.timeline_semaphores && (si.waitSemaphoreCount > 0 || si.signalSemaphoreCount > 0)) si.pNext = &values;
  if (VkResult result = vkQueueSubmit(queue_, 1, &si, fence); result != VK_SUCCESS) {
    free_fences_.push_back(fence);
    DestroySemaphores(semaphores.own);
    return VkError("vkQueueSubmit", result);
  }
  submitted_[++last_ticket_] = {fence, &r, semaphores.own, std::chrono::steady_clock::now()};
  if (semaphores.export_fd != VK_NULL_HANDLE) {
    VkSemaphoreGetFdInfoKHR get{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    get.semaphore = semaphores.export_fd;
    get.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
    int fd = -1;
    if (VkResult result = get_semaphore_fd_(device_, &get, &fd); result != VK_SUCCESS) {
      // Rare (out of fds): the work is waited for here, so that the caller,
      // who gets no ticket, may free what it uses.
      if (vkWaitForFences(device_, 1, &fence, VK_TRUE, kRunTimeoutNs) == VK_SUCCESS) {
        submitted_.erase(last_ticket_);
        DestroySemaphores(semaphores.own);
        if (vkResetFences(device_, 1, &fence) == VK_SUCCESS) free_fences_.push_back(fence);
      }
      return VkError("vkGetSemaphoreFdKHR", result);
    }
    sync.signal_new->fd = fd;
  }
  return last_ticket_;
}

// The fence is waited for without the device's lock, so that other threads
// submit and upload meanwhile (vkWaitForFences needs no external
// synchronization; resetting it does).
absl::Status VulkanDevice::Wait(uint64_t ticket, std::chrono::nanoseconds timeout) {
  Submitted submitted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = submitted_.find(ticket);
    if (it == submitted_.end()) {
      return absl::InvalidArgumentError(fmt::format("Wait: no submission {} is waiting (completed already?)", ticket));
    }
    submitted = it->second;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  auto finished = [&] { return vkGetFenceStatus(device_, submitted.fence) != VK_NOT_READY; };
  const bool finished_before = finished();  // then how long it ran is not known here
  if (!finished_before && poll_time_.count() > 0) {
    // An active wait sleeps through most of the time the recording's last
    // run took, then polls (PlanWait); vkWaitForFences then returns at once.
    const WaitPlan plan = PlanWait(poll_time_, submitted.recording->last_run(), Clock::now() - submitted.at);
    const auto sleep = std::min(plan.sleep, timeout);
    if (!SleepFor(sleep, finished)) PollFor(std::min(plan.poll, timeout - sleep), finished);
  }
  const auto ns = static_cast<uint64_t>(std::max<int64_t>((deadline - Clock::now()).count(), 0));
  const VkResult waited = vkWaitForFences(device_, 1, &submitted.fence, VK_TRUE, ns);
  if (waited == VK_SUCCESS && !finished_before) submitted.recording->set_last_run(Clock::now() - submitted.at);
  if (waited == VK_TIMEOUT) {
    return absl::DeadlineExceededError(
        fmt::format("the GPU did not finish within {:.3f} ms", std::chrono::duration<double, std::milli>(timeout).count()));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    submitted_.erase(ticket);
    DestroySemaphores(submitted.semaphores);
    if (waited != VK_SUCCESS) {
      vkDestroyFence(device_, submitted.fence, nullptr);  // its state is unknown (device lost)
      return VkError("vkWaitForFences", waited);
    }
    MGD_VK(vkResetFences(device_, 1, &submitted.fence));
    free_fences_.push_back(submitted.fence);
  }
  return ReadTimestamps(*submitted.recording);
}

absl::Status VulkanDevice::ReadTimestamps(VulkanRecording& r) {
  if (r.queries == VK_NULL_HANDLE) return absl::OkStatus();
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
  return absl::OkStatus();
}

absl::Status VulkanDevice::Run(Recording& recording) {
  absl::StatusOr<uint64_t> ticket = Submit(recording);
  if (!ticket.ok()) return ticket.status();
  return Wait(*ticket);
}

}  // namespace mgd::gpu::vulkan
