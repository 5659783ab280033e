// Buffers the window's OpenGL ES context and mgd's GPU delegate both use,
// so that a frame or a model's output crosses between them without a copy
// through host memory:
//   GL delegate made on the window's context: a GL buffer of the window;
//   Vulkan delegate: Vulkan memory on the delegate's device, exported as an
//   opaque fd and imported into GL (GL_EXT_memory_object_fd), where the two
//   are the same GPU.
// Made and used on the thread whose GL context is current (the window's).
#pragma once

#include <mgd/c_api.h>
#include <mgd/gpu_delegate.h>

#include <cstddef>
#include <memory>
#include <string>

namespace view {

class SharedBuffer {
 public:
  virtual ~SharedBuffer() = default;
  virtual unsigned gl_buffer() const = 0;     // for the window
  virtual MgdGpuBuffer mgd_buffer() const = 0;  // for MgdInterpreterBind*/MgdPipelineProcessGpuBuffer
  size_t bytes() const { return bytes_; }

 protected:
  explicit SharedBuffer(size_t bytes) : bytes_(bytes) {}
  size_t bytes_;
};

// Why the window's GL context and `delegate`'s Vulkan device cannot share
// memory, or "" when they can.
std::string VulkanSharingProblem(MgdDelegate* delegate);

// A buffer of `bytes` for `delegate`: a GL buffer when the delegate shares
// the window's GL context, else Vulkan memory seen by GL. Null with `error`.
std::unique_ptr<SharedBuffer> MakeSharedBuffer(MgdDelegate* delegate, size_t bytes, std::string& error);

}  // namespace view
