#include "backends/vulkan/memory.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd::gpu::vulkan {
namespace {

// Blocks of a memory type grow from 4 MiB to 64 MiB: a small model then
// never allocates (and, host-visible, maps) 64 MiB blocks, which took ~45 ms
// of every start on the H200; a large one still makes few allocations.
constexpr VkDeviceSize kFirstBlockSize = VkDeviceSize{4} << 20;
constexpr VkDeviceSize kMaxBlockSize = VkDeviceSize{64} << 20;
constexpr VkDeviceSize kSmallestPinnedBlockSize = VkDeviceSize{64} << 10;

VkDeviceSize AlignUp(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

}  // namespace

MemoryAllocator::MemoryAllocator(VkDevice device, const VkPhysicalDeviceMemoryProperties& properties)
    : device_(device), properties_(properties) {}

MemoryAllocator::~MemoryAllocator() {
  for (auto& block : blocks_) {
    if (block->mapped != nullptr) vkUnmapMemory(device_, block->memory);
    vkFreeMemory(device_, block->memory, nullptr);
  }
}

size_t MemoryAllocator::num_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

VkDeviceSize NewBlockSize(VkMemoryPropertyFlags flags, size_t blocks, VkDeviceSize bytes) {
  // System memory the GPU can reach (host-visible, not device-local) is
  // pinned by the driver as it is allocated: NVIDIA took 1.2-1.9 ms per
  // 4 MiB block, for a model's input and output of a few KiB to a MiB.
  if ((flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && !(flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
    return std::max(kSmallestPinnedBlockSize, bytes);
  }
  VkDeviceSize size = kFirstBlockSize;
  for (size_t b = 0; b < blocks && size < kMaxBlockSize; ++b) size *= 2;
  return std::max(std::min(size, kMaxBlockSize), bytes);
}

absl::StatusOr<size_t> MemoryAllocator::NewBlock(uint32_t type, VkDeviceSize size) {
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = size;
  info.memoryTypeIndex = type;
  auto block = std::make_unique<Block>();
  if (VkResult r = vkAllocateMemory(device_, &info, nullptr, &block->memory); r != VK_SUCCESS) {
    return absl::ResourceExhaustedError(fmt::format("vkAllocateMemory of {} bytes failed ({})", size, static_cast<int>(r)));
  }
  block->type = type;
  block->size = size;
  const VkMemoryPropertyFlags flags = properties_.memoryTypes[type].propertyFlags;
  if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* mapped = nullptr;
    if (vkMapMemory(device_, block->memory, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS) {
      block->mapped = static_cast<uint8_t*>(mapped);
      block->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    }
  }
  block->free[0] = size;
  blocks_.push_back(std::move(block));
  return blocks_.size() - 1;
}

absl::StatusOr<Allocation> MemoryAllocator::Allocate(const VkMemoryRequirements& req, VkMemoryPropertyFlags required,
                                                     VkMemoryPropertyFlags preferred) {
  int type = -1;
  for (int pass = 0; pass < 2 && type < 0; ++pass) {
    const VkMemoryPropertyFlags wanted = pass == 0 ? (required | preferred) : required;
    for (uint32_t t = 0; t < properties_.memoryTypeCount; ++t) {
      if ((req.memoryTypeBits & (1u << t)) && (properties_.memoryTypes[t].propertyFlags & wanted) == wanted) {
        type = static_cast<int>(t);
        break;
      }
    }
  }
  if (type < 0) return absl::NotFoundError("no Vulkan memory type fits the buffer");
  const VkDeviceSize alignment = std::max<VkDeviceSize>(req.alignment, 16);
  std::lock_guard<std::mutex> lock(mutex_);
  auto try_block = [&](size_t b) -> std::optional<Allocation> {
    Block& block = *blocks_[b];
    if (block.type != static_cast<uint32_t>(type)) return std::nullopt;
    for (auto it = block.free.begin(); it != block.free.end(); ++it) {
      const VkDeviceSize start = AlignUp(it->first, alignment);
      const VkDeviceSize end = it->first + it->second;
      if (start + req.size > end) continue;
      const VkDeviceSize free_offset = it->first;
      block.free.erase(it);
      if (start > free_offset) block.free[free_offset] = start - free_offset;
      if (end > start + req.size) block.free[start + req.size] = end - start - req.size;
      return Allocation{block.memory, start, req.size, block.mapped ? block.mapped + start : nullptr, block.coherent, b};
    }
    return std::nullopt;
  };
  for (size_t b = 0; b < blocks_.size(); ++b) {
    if (auto a = try_block(b)) return *a;
  }
  size_t same_type = 0;
  for (const auto& block : blocks_) same_type += block->type == static_cast<uint32_t>(type) ? 1 : 0;
  auto b = NewBlock(static_cast<uint32_t>(type),
                    NewBlockSize(properties_.memoryTypes[type].propertyFlags, same_type, AlignUp(req.size, alignment)));
  if (!b.ok()) return b.status();
  if (auto a = try_block(*b)) return *a;
  return absl::InternalError("a new memory block could not hold the allocation");
}

void MemoryAllocator::Free(const Allocation& allocation) {
  if (allocation.memory == VK_NULL_HANDLE) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Block& block = *blocks_[allocation.block];
  auto [it, inserted] = block.free.emplace(allocation.offset, allocation.size);
  // Merge with the neighbours.
  auto next = std::next(it);
  if (next != block.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    block.free.erase(next);
  }
  if (it != block.free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      block.free.erase(it);
    }
  }
}

}  // namespace mgd::gpu::vulkan
