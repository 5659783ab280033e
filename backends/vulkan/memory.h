// Device memory: a few large VkDeviceMemory blocks per memory type,
// sub-allocated first-fit (drivers limit the number of allocations, and each
// one is slow).
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"

namespace mgd::gpu::vulkan {

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  uint8_t* mapped = nullptr;  // host pointer at `offset` when the memory is host-visible
  bool coherent = false;
  size_t block = 0;
};

// The size of a new block for `bytes` of a memory type with `flags`, of
// which `blocks` exist: device memory comes in blocks of 4 MiB, doubling
// per block up to 64 MiB; system memory the driver pins (host-visible, not
// device-local) in blocks that fit (at least 64 KiB).
VkDeviceSize NewBlockSize(VkMemoryPropertyFlags flags, size_t blocks, VkDeviceSize bytes);

class MemoryAllocator {
 public:
  MemoryAllocator(VkDevice device, const VkPhysicalDeviceMemoryProperties& properties);
  ~MemoryAllocator();
  MemoryAllocator(const MemoryAllocator&) = delete;
  MemoryAllocator& operator=(const MemoryAllocator&) = delete;

  // The first memory type allowed by `requirements` that has all of
  // `required`, preferring one that also has `preferred`.
  absl::StatusOr<Allocation> Allocate(const VkMemoryRequirements& requirements, VkMemoryPropertyFlags required,
                                      VkMemoryPropertyFlags preferred);
  void Free(const Allocation& allocation);

  size_t num_blocks() const;

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint32_t type = 0;
    VkDeviceSize size = 0;
    uint8_t* mapped = nullptr;
    bool coherent = false;
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size
  };

  absl::StatusOr<size_t> NewBlock(uint32_t type, VkDeviceSize size);

  VkDevice device_;
  VkPhysicalDeviceMemoryProperties properties_;
  std::vector<std::unique_ptr<Block>> blocks_;
  mutable std::mutex mutex_;
};

}  // namespace mgd::gpu::vulkan
