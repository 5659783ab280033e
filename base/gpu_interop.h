// An app's GPU objects as mgd takes them: buffers bound to a model's inputs
// and outputs (zero-copy I/O) and the sync objects an invoke waits on and
// signals (fenced invokes). Plain data, shared by the GPU backends, the
// interpreter and the C API; handles are the API's own as integers.
#pragma once

#include <cstdint>
#include <vector>

namespace mgd {

// Vulkan: a VkBuffer made on mgd's VkDevice (the delegate's interop handles)
// with STORAGE_BUFFER usage, or memory exported from any VkDevice on the same
// physical device as an opaque fd (VK_KHR_external_memory_fd; the fd is
// mgd's once imported). GL: a buffer object of a context that shares objects
// with mgd's.
struct GpuBuffer {
  enum class Type { kVulkanBuffer, kVulkanMemoryFd, kGlBuffer };
  Type type = Type::kVulkanBuffer;
  uint64_t handle = 0;  // kVulkanBuffer: the VkBuffer; kGlBuffer: the buffer's name
  int fd = -1;          // kVulkanMemoryFd
  uint64_t offset = 0;  // where the data begins (in the memory, for an fd)
  uint64_t bytes = 0;   // how many bytes from `offset` mgd may use
  // kVulkanMemoryFd: the exported allocation's size and memory type index
  // (Vulkan imports opaque memory only as it was allocated).
  uint64_t memory_bytes = 0;
  uint32_t memory_type = 0;
  bool operator==(const GpuBuffer&) const = default;
};

struct GpuSync {
  enum class Type {
    kVulkanSemaphore,          // a binary VkSemaphore of mgd's VkDevice
    kVulkanTimelineSemaphore,  // a timeline VkSemaphore of mgd's VkDevice, at `value`
    kSyncFd,                   // a Linux sync file; waiting on one takes ownership of `fd` (-1: signalled)
    kEglSync,                  // an EGLSync of mgd's EGLDisplay
  };
  Type type = Type::kVulkanSemaphore;
  uint64_t handle = 0;
  uint64_t value = 0;
  int fd = -1;
};

inline const char* GpuSyncTypeName(GpuSync::Type type) {
  switch (type) {
    case GpuSync::Type::kVulkanSemaphore: return "Vulkan semaphore";
    case GpuSync::Type::kVulkanTimelineSemaphore: return "Vulkan timeline semaphore";
    case GpuSync::Type::kSyncFd: return "sync fd";
    case GpuSync::Type::kEglSync: return "EGL sync";
  }
  return "sync object";
}

// What GPU work waits for before it starts, what it signals when done, and
// a new sync object of the type asked for in `signal_new->type` (kSyncFd or
// kEglSync), filled in for the app, which then owns it (closes the fd,
// destroys the EGLSync). Vulkan signals the app's semaphores; GL signals
// only what it makes.
struct GpuFences {
  std::vector<GpuSync> wait;
  std::vector<GpuSync> signal;
  GpuSync* signal_new = nullptr;
  bool empty() const { return wait.empty() && signal.empty() && signal_new == nullptr; }
};

}  // namespace mgd
