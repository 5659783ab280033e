// How the Vulkan allocator sizes its blocks: few allocations for device
// memory, none larger than needed where the driver pins system memory.
#include <gtest/gtest.h>

#include "backends/vulkan/memory.h"

namespace mgd::gpu::vulkan {
namespace {

constexpr VkDeviceSize kKiB = 1024, kMiB = 1024 * 1024;

TEST(VulkanMemory, DeviceBlocksGrowFrom4To64MiB) {
  const VkMemoryPropertyFlags device = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  EXPECT_EQ(NewBlockSize(device, 0, 1000), 4 * kMiB);
  EXPECT_EQ(NewBlockSize(device, 1, 1000), 8 * kMiB);
  EXPECT_EQ(NewBlockSize(device, 4, 1000), 64 * kMiB);
  EXPECT_EQ(NewBlockSize(device, 40, 1000), 64 * kMiB);
  EXPECT_EQ(NewBlockSize(device, 0, 100 * kMiB), 100 * kMiB) << "a larger request gets a block of its own size";
  // Device memory the host can map (resizable BAR, integrated GPUs) is not
  // pinned system memory: it grows the same way.
  const VkMemoryPropertyFlags mappable = device | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  EXPECT_EQ(NewBlockSize(mappable, 0, 1000), 4 * kMiB);
  EXPECT_EQ(NewBlockSize(mappable, 2, 7 * kMiB), 16 * kMiB);
}

TEST(VulkanMemory, PinnedSystemMemoryBlocksFitTheRequest) {
  for (VkMemoryPropertyFlags system :
       {VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT},
        VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT}}) {
    EXPECT_EQ(NewBlockSize(system, 0, 4004), 64 * kKiB) << "small ones share a 64 KiB block";
    EXPECT_EQ(NewBlockSize(system, 0, 602112), 602112u);
    EXPECT_EQ(NewBlockSize(system, 5, 602112), 602112u) << "and do not grow with the number of blocks";
  }
}

}  // namespace
}  // namespace mgd::gpu::vulkan
