#include "shared_buffers.h"

#include <EGL/egl.h>
#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include <cstring>

namespace view {
namespace {

class GlBuffer : public SharedBuffer {
 public:
  explicit GlBuffer(size_t bytes) : SharedBuffer(bytes) {
    glGenBuffers(1, &buffer_);
    glBindBuffer(GL_COPY_WRITE_BUFFER, buffer_);
    glBufferData(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, GL_DYNAMIC_COPY);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    glFinish();  // the buffer exists for the delegate's context too
  }
  ~GlBuffer() override { glDeleteBuffers(1, &buffer_); }
  unsigned gl_buffer() const override { return buffer_; }
  MgdGpuBuffer mgd_buffer() const override {
    MgdGpuBuffer b{};
    b.type = kMgdGpuBufferGl;
    b.handle = buffer_;
    b.bytes = bytes_;
    b.layout = kMgdGpuLayoutBhwc;
    return b;
  }

 private:
  GLuint buffer_ = 0;
};

// GL_EXT_memory_object(_fd)'s entry points, from the current context.
struct MemoryObjectGl {
  PFNGLCREATEMEMORYOBJECTSEXTPROC create = nullptr;
  PFNGLDELETEMEMORYOBJECTSEXTPROC destroy = nullptr;
  PFNGLIMPORTMEMORYFDEXTPROC import_fd = nullptr;
  PFNGLBUFFERSTORAGEMEMEXTPROC buffer_storage = nullptr;
  PFNGLGETUNSIGNEDBYTEI_VEXTPROC get_uuid = nullptr;
  bool Load() {
    bool found = false;
    GLint count = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &count);
    for (GLint i = 0; i < count && !found; ++i) {
      found = std::strcmp(reinterpret_cast<const char*>(glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i))),
                          "GL_EXT_memory_object_fd") == 0;
    }
    if (!found) return false;
    create = reinterpret_cast<PFNGLCREATEMEMORYOBJECTSEXTPROC>(eglGetProcAddress("glCreateMemoryObjectsEXT"));
    destroy = reinterpret_cast<PFNGLDELETEMEMORYOBJECTSEXTPROC>(eglGetProcAddress("glDeleteMemoryObjectsEXT"));
    import_fd = reinterpret_cast<PFNGLIMPORTMEMORYFDEXTPROC>(eglGetProcAddress("glImportMemoryFdEXT"));
    buffer_storage = reinterpret_cast<PFNGLBUFFERSTORAGEMEMEXTPROC>(eglGetProcAddress("glBufferStorageMemEXT"));
    get_uuid = reinterpret_cast<PFNGLGETUNSIGNEDBYTEI_VEXTPROC>(eglGetProcAddress("glGetUnsignedBytei_vEXT"));
    return create && destroy && import_fd && buffer_storage && get_uuid;
  }
};

// The delegate's Vulkan device and what it takes to allocate on it.
struct VulkanSide {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
};

std::string Check(MgdDelegate* delegate, VulkanSide& vk, MemoryObjectGl& gl) {
  MgdGpuInterop interop{};
  if (MgdGpuDelegateGetInterop(delegate, &interop) != kMgdOk || interop.api != kMgdGpuApiVulkan) return "not Vulkan";
  if (!gl.Load()) return "the window's GL has no GL_EXT_memory_object_fd";
  vk.physical = reinterpret_cast<VkPhysicalDevice>(interop.vk_physical_device);
  vk.device = reinterpret_cast<VkDevice>(interop.vk_device);
  vk.get_memory_fd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(vk.device, "vkGetMemoryFdKHR"));
  if (vk.get_memory_fd == nullptr) return "the Vulkan device exports no memory (VK_KHR_external_memory_fd)";
  // Opaque fds cross between APIs only on the same GPU and driver.
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &ids};
  vkGetPhysicalDeviceProperties2(vk.physical, &properties);
  GLubyte gl_uuid[GL_UUID_SIZE_EXT] = {};
  gl.get_uuid(GL_DEVICE_UUID_EXT, 0, gl_uuid);
  if (std::memcmp(gl_uuid, ids.deviceUUID, sizeof(gl_uuid)) != 0) return "the window's GL is on another GPU";
  return "";
}

class VulkanGlBuffer : public SharedBuffer {
 public:
  static constexpr size_t kSlack = 256;
  explicit VulkanGlBuffer(size_t bytes) : SharedBuffer(bytes) {}
  ~VulkanGlBuffer() override {
    if (gl_buffer_ != 0) glDeleteBuffers(1, &gl_buffer_);
    if (gl_memory_ != 0) gl_.destroy(1, &gl_memory_);
    if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(vk_.device, buffer_, nullptr);
    if (memory_ != VK_NULL_HANDLE) vkFreeMemory(vk_.device, memory_, nullptr);
  }

  bool Make(MgdDelegate* delegate, std::string& error) {
    if (error = Check(delegate, vk_, gl_); !error.empty()) return false;
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &external};
    // Slack past the end: llvmpipe wants an imported buffer's memory a little
    // larger than the buffer (its rasterizer reads whole blocks).
    info.size = bytes_ + kSlack;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (vkCreateBuffer(vk_.device, &info, nullptr, &buffer_) != VK_SUCCESS) return Fail(error, "vkCreateBuffer");
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(vk_.device, buffer_, &needs);
    VkPhysicalDeviceMemoryProperties types;
    vkGetPhysicalDeviceMemoryProperties(vk_.physical, &types);
    uint32_t type = UINT32_MAX;  // device-local where there is such memory
    for (uint32_t i = 0; i < types.memoryTypeCount; ++i) {
      if (!(needs.memoryTypeBits & (1u << i))) continue;
      if (type == UINT32_MAX || (types.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) type = i;
      if (types.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) break;
    }
    VkExportMemoryAllocateInfo exported{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    exported.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &exported};
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex = type;
    if (type == UINT32_MAX || vkAllocateMemory(vk_.device, &allocate, nullptr, &memory_) != VK_SUCCESS) {
      return Fail(error, "vkAllocateMemory (exportable)");
    }
    if (vkBindBufferMemory(vk_.device, buffer_, memory_, 0) != VK_SUCCESS) return Fail(error, "vkBindBufferMemory");
    VkMemoryGetFdInfoKHR get{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    get.memory = memory_;
    get.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    if (vk_.get_memory_fd(vk_.device, &get, &fd) != VK_SUCCESS) return Fail(error, "vkGetMemoryFdKHR");
    gl_.create(1, &gl_memory_);
    gl_.import_fd(gl_memory_, needs.size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);  // GL owns the fd now
    if (GLenum e = glGetError(); e != GL_NO_ERROR) return Fail(error, "glImportMemoryFdEXT (error " + std::to_string(e) + ")");
    glGenBuffers(1, &gl_buffer_);
    glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer_);
    gl_.buffer_storage(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(bytes_), gl_memory_, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (GLenum e = glGetError(); e != GL_NO_ERROR) return Fail(error, "importing the memory into GL (error " + std::to_string(e) + ")");
    return true;
  }

  unsigned gl_buffer() const override { return gl_buffer_; }
  MgdGpuBuffer mgd_buffer() const override {
    MgdGpuBuffer b{};
    b.type = kMgdGpuBufferVulkan;
    b.handle = reinterpret_cast<uint64_t>(buffer_);
    b.bytes = bytes_;
    b.layout = kMgdGpuLayoutBhwc;
    return b;
  }

 private:
  static bool Fail(std::string& error, const std::string& what) {
    error = what + " failed";
    return false;
  }
  VulkanSide vk_;
  MemoryObjectGl gl_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  GLuint gl_memory_ = 0, gl_buffer_ = 0;
};

}  // namespace

std::string VulkanSharingProblem(MgdDelegate* delegate) {
  VulkanSide vk;
  MemoryObjectGl gl;
  return Check(delegate, vk, gl);
}

std::unique_ptr<SharedBuffer> MakeSharedBuffer(MgdDelegate* delegate, size_t bytes, std::string& error) {
  MgdGpuInterop interop{};
  if (MgdGpuDelegateGetInterop(delegate, &interop) != kMgdOk) {
    error = "not a GPU delegate";
    return nullptr;
  }
  if (interop.api == kMgdGpuApiGles) return std::make_unique<GlBuffer>(bytes);
  auto buffer = std::make_unique<VulkanGlBuffer>(bytes);
  if (!buffer->Make(delegate, error)) return nullptr;
  return buffer;
}

}  // namespace view
