// What an app does on the GPU around mgd, for the zero-copy and fenced
// invoke tests: buffers, semaphores and copies on the delegate's VkDevice
// and queue; a GL context sharing objects with the delegate's, its buffers
// and EGL fence syncs. Written against the APIs and gpu::Interop only, as an
// app would.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/gpu/gpu.h"

namespace mgd::testing {

#define APP_VK(call)                                                                          \
  do {                                                                                        \
    if (VkResult r_ = (call); r_ != VK_SUCCESS) throw std::runtime_error(#call " failed: " + std::to_string(r_)); \
  } while (false)

// A storage buffer on the delegate's device: host-visible and mapped, or
// (`device_local`) in the GPU's own memory, mapped only where that is
// host-visible too.
class AppVkBuffer {
 public:
  AppVkBuffer(const gpu::Interop& interop, size_t bytes, bool exportable = false, bool device_local = false)
      : device_(reinterpret_cast<VkDevice>(interop.vk_device)), bytes_(bytes) {
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.pNext = exportable ? &external : nullptr;
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    APP_VK(vkCreateBuffer(device_, &bi, nullptr, &buffer_));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(reinterpret_cast<VkPhysicalDevice>(interop.vk_physical_device), &props);
    const VkMemoryPropertyFlags wanted = device_local ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                                      : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
      if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & wanted) == wanted) {
        memory_type_ = i;
        break;
      }
    }
    const bool mappable = props.memoryTypes[memory_type_].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = exportable ? &export_info : nullptr;
    ai.allocationSize = memory_bytes_ = req.size;
    ai.memoryTypeIndex = memory_type_;
    APP_VK(vkAllocateMemory(device_, &ai, nullptr, &memory_));
    APP_VK(vkBindBufferMemory(device_, buffer_, memory_, 0));
    if (mappable) APP_VK(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_));
  }
  ~AppVkBuffer() {
    if (mapped_ != nullptr) vkUnmapMemory(device_, memory_);
    vkDestroyBuffer(device_, buffer_, nullptr);
    vkFreeMemory(device_, memory_, nullptr);
  }
  AppVkBuffer(const AppVkBuffer&) = delete;
  AppVkBuffer& operator=(const AppVkBuffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  void* data() const { return mapped_; }
  size_t bytes() const { return bytes_; }
  GpuBuffer AsGpuBuffer() const {
    GpuBuffer b;
    b.type = GpuBuffer::Type::kVulkanBuffer;
    b.handle = reinterpret_cast<uint64_t>(buffer_);
    b.bytes = bytes_;
    return b;
  }
  // The memory as an opaque fd, for mgd to import (it owns the fd then).
  GpuBuffer AsMemoryFd() const {
    auto get_fd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
    if (get_fd == nullptr) throw std::runtime_error("no vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR info{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    info.memory = memory_;
    info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    APP_VK(get_fd(device_, &info, &fd));
    GpuBuffer b;
    b.type = GpuBuffer::Type::kVulkanMemoryFd;
    b.fd = fd;
    b.bytes = bytes_;
    b.memory_bytes = memory_bytes_;
    b.memory_type = memory_type_;
    return b;
  }

 private:
  VkDevice device_;
  size_t bytes_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint32_t memory_type_ = 0;
  VkDeviceSize memory_bytes_ = 0;
  void* mapped_ = nullptr;
};

// Copies between buffers on the delegate's queue, waiting on and signalling
// semaphores: an app's producer or consumer.
class AppVkQueue {
 public:
  AppVkQueue(const gpu::Interop& interop, gpu::Device& device)
      : device_(reinterpret_cast<VkDevice>(interop.vk_device)),
        queue_(reinterpret_cast<VkQueue>(interop.vk_queue)),
        mgd_(device) {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = interop.vk_queue_family;
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    APP_VK(vkCreateCommandPool(device_, &pi, nullptr, &pool_));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    APP_VK(vkCreateFence(device_, &fi, nullptr, &fence_));
  }
  ~AppVkQueue() {
    vkDeviceWaitIdle(device_);
    for (VkSemaphore s : semaphores_) vkDestroySemaphore(device_, s, nullptr);
    vkDestroyFence(device_, fence_, nullptr);
    vkDestroyCommandPool(device_, pool_, nullptr);
  }

  VkSemaphore Semaphore(bool timeline) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    ci.pNext = timeline ? &type : nullptr;
    VkSemaphore s;
    APP_VK(vkCreateSemaphore(device_, &ci, nullptr, &s));
    semaphores_.push_back(s);
    return s;
  }

  struct CopyRegion {
    VkBuffer src, dst;
    size_t bytes;
  };
  // Copies each region after `wait` (at `wait_value` if a timeline), then
  // signals `signal` (at `signal_value`); `fenced` signals the queue's
  // fence too, for WaitForFence.
  void Copy(const std::vector<CopyRegion>& regions, VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
            uint64_t signal_value, bool fenced) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    APP_VK(vkAllocateCommandBuffers(device_, &ai, &cb));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    APP_VK(vkBeginCommandBuffer(cb, &bi));
    for (const CopyRegion& r : regions) {
      VkBufferCopy region{0, 0, r.bytes};
      vkCmdCopyBuffer(cb, r.src, r.dst, 1, &region);
    }
    // The copy becomes visible to the host (the consumer's readback).
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    APP_VK(vkEndCommandBuffer(cb));
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = wait != VK_NULL_HANDLE ? 1 : 0;
    values.pWaitSemaphoreValues = &wait_value;
    values.signalSemaphoreValueCount = signal != VK_NULL_HANDLE ? 1 : 0;
    values.pSignalSemaphoreValues = &signal_value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &values;
    si.waitSemaphoreCount = wait != VK_NULL_HANDLE ? 1 : 0;
    si.pWaitSemaphores = &wait;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = signal != VK_NULL_HANDLE ? 1 : 0;
    si.pSignalSemaphores = &signal;
    mgd_.LockQueue();  // the queue is shared with mgd
    const VkResult submitted = vkQueueSubmit(queue_, 1, &si, fenced ? fence_ : VK_NULL_HANDLE);
    mgd_.UnlockQueue();
    APP_VK(submitted);
    command_buffers_.push_back(cb);
  }
  void WaitForFence() {
    APP_VK(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX));
    APP_VK(vkResetFences(device_, 1, &fence_));
  }

 private:
  VkDevice device_;
  VkQueue queue_;
  gpu::Device& mgd_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkSemaphore> semaphores_;
  std::vector<VkCommandBuffer> command_buffers_;  // freed with the pool
};

// An app's GL context sharing objects with the delegate's, current on the
// calling thread while it lives.
class AppGlContext {
 public:
  explicit AppGlContext(const gpu::Interop& interop)
      : display_(reinterpret_cast<EGLDisplay>(interop.egl_display)) {
    EGLint config_id = 0;
    const auto shared = reinterpret_cast<EGLContext>(interop.egl_context);
    eglQueryContext(display_, shared, EGL_CONFIG_ID, &config_id);
    EGLConfig config = nullptr;  // EGL_NO_CONFIG_KHR when the delegate's has none
    if (config_id != 0) {
      const EGLint wanted[] = {EGL_CONFIG_ID, config_id, EGL_NONE};
      EGLint n = 0;
      eglChooseConfig(display_, wanted, &config, 1, &n);
    }
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION_KHR, 3, EGL_CONTEXT_MINOR_VERSION_KHR, 1, EGL_NONE};
    context_ = eglCreateContext(display_, config, shared, attributes);
    if (context_ == EGL_NO_CONTEXT) throw std::runtime_error("eglCreateContext sharing mgd's failed");
    if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) throw std::runtime_error("eglMakeCurrent failed");
    create_sync_ = reinterpret_cast<PFNEGLCREATESYNCKHRPROC>(eglGetProcAddress("eglCreateSyncKHR"));
    destroy_sync_ = reinterpret_cast<PFNEGLDESTROYSYNCKHRPROC>(eglGetProcAddress("eglDestroySyncKHR"));
    wait_sync_ = reinterpret_cast<PFNEGLWAITSYNCKHRPROC>(eglGetProcAddress("eglWaitSyncKHR"));
  }
  ~AppGlContext() {
    if (!buffers_.empty()) glDeleteBuffers(static_cast<GLsizei>(buffers_.size()), buffers_.data());
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display_, context_);
    eglReleaseThread();  // EGL's state for this thread
  }
  AppGlContext(const AppGlContext&) = delete;
  AppGlContext& operator=(const AppGlContext&) = delete;

  GLuint Buffer(size_t bytes, const void* data = nullptr) {
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), data, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    buffers_.push_back(b);
    return b;
  }
  void Write(GLuint buffer, const void* data, size_t bytes) {
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffer);
    glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), data);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  }
  std::vector<uint8_t> Read(GLuint buffer, size_t bytes) {
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buffer);
    const void* p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, static_cast<GLsizeiptr>(bytes), GL_MAP_READ_BIT);
    std::vector<uint8_t> out(bytes);
    if (p != nullptr) std::memcpy(out.data(), p, bytes);
    glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    return out;
  }
  // A fence after the commands so far, flushed: what mgd waits on.
  EGLSyncKHR Fence() {
    EGLSyncKHR s = create_sync_(display_, EGL_SYNC_FENCE_KHR, nullptr);
    glFlush();
    return s;
  }
  // The app's later commands wait on the GPU for `sync`, which is then destroyed.
  void WaitAndDestroy(EGLSyncKHR sync) {
    wait_sync_(display_, sync, 0);
    destroy_sync_(display_, sync);
  }
  void Destroy(EGLSyncKHR sync) { destroy_sync_(display_, sync); }

 private:
  EGLDisplay display_;
  EGLContext context_ = EGL_NO_CONTEXT;
  std::vector<GLuint> buffers_;
  PFNEGLCREATESYNCKHRPROC create_sync_ = nullptr;
  PFNEGLDESTROYSYNCKHRPROC destroy_sync_ = nullptr;
  PFNEGLWAITSYNCKHRPROC wait_sync_ = nullptr;
};

}  // namespace mgd::testing
