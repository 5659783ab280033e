// The GPU delegate behind the C API (include/mgd/gpu_delegate.h): an
// MgdDelegate whose native_delegate is the C++ GpuDelegate.
#include "mgd/gpu_delegate.h"

#include <fmt/format.h>

#include <cstdio>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "delegate/capabilities.h"
#include "delegate/gpu_delegate.h"

namespace {

struct GpuCDelegate {
  MgdDelegate c{};
  std::unique_ptr<mgd::GpuDelegate> delegate;
  std::string name;
  std::string device_name;
  std::mutex capabilities_mutex;
  std::optional<mgd::Capabilities> capabilities;  // measured at the first ask
};

void Report(MgdErrorReporter reporter, void* user_data, const std::string& message) {
  if (reporter != nullptr) {
    reporter(user_data, message.c_str());
  } else {
    std::fprintf(stderr, "mgd: %s\n", message.c_str());
  }
}

absl::StatusOr<std::unique_ptr<mgd::GpuDelegate>> CreateFor(const MgdGpuDelegateOptions& o, MgdErrorReporter reporter,
                                                             void* user_data) {
  mgd::GpuDelegateOptions options;
  // Warnings (a cache folder that cannot be used, each said once) go where
  // the app's errors go.
  options.logger = [reporter, user_data](mgd::LogLevel level, const std::string& message) {
    if (level >= mgd::LogLevel::kWarning) Report(reporter, user_data, message);
  };
  options.precision = mgd::Precision::Of(o.precision_loss_allowed != 0);
  options.device = o.device != nullptr ? o.device : "";
  options.cache_dir = o.cache_dir != nullptr ? o.cache_dir : "";
  options.model_token = o.model_token != nullptr ? o.model_token : "";
  options.recompile = o.allow_recompile != 0;
  options.share_programs = o.share_programs != 0;
  options.priority = o.priority == kMgdGpuPriorityLow    ? mgd::gpu::Priority::kLow
                     : o.priority == kMgdGpuPriorityHigh ? mgd::gpu::Priority::kHigh
                                                         : mgd::gpu::Priority::kMedium;
  options.wait = o.wait == kMgdGpuWaitPassive  ? mgd::gpu::WaitMode::kPassive
                 : o.wait == kMgdGpuWaitActive ? mgd::gpu::WaitMode::kActive
                                               : mgd::gpu::WaitMode::kAuto;
  options.egl_display = o.egl_display;
  options.egl_share_context = o.egl_share_context;
  if (o.api == kMgdGpuApiAuto) {
    auto best = mgd::CreateOnBestGpu(options);
    if (!best.ok()) return best.status();
    return std::move(best->delegate);
  }
  options.api = o.api == kMgdGpuApiVulkan ? mgd::gpu::Api::kVulkan : mgd::gpu::Api::kGles;
  return mgd::GpuDelegate::Create(options);
}

// The GPU delegate behind a C delegate MgdGpuDelegateCreate made; null
// (said on stderr) otherwise.
mgd::GpuDelegate* GpuDelegateOf(MgdDelegate* delegate, const char* function) {
  auto* native = delegate != nullptr ? static_cast<mgd::Delegate*>(delegate->native_delegate) : nullptr;
  auto* gpu = dynamic_cast<mgd::GpuDelegate*>(native);
  if (gpu == nullptr) std::fprintf(stderr, "mgd: %s: not a delegate from MgdGpuDelegateCreate\n", function);
  return gpu;
}

}  // namespace

extern "C" {

MgdGpuDelegateOptions MgdGpuDelegateOptionsDefault(void) { return MgdGpuDelegateOptions{}; }

MgdDelegate* MgdGpuDelegateCreate(const MgdGpuDelegateOptions* options, MgdErrorReporter reporter, void* user_data) {
  const MgdGpuDelegateOptions o = options != nullptr ? *options : MgdGpuDelegateOptionsDefault();
  if (o.api != kMgdGpuApiAuto && o.api != kMgdGpuApiVulkan && o.api != kMgdGpuApiGles) {
    Report(reporter, user_data, fmt::format("MgdGpuDelegateCreate: api {} is not an MgdGpuApi", static_cast<int>(o.api)));
    return nullptr;
  }
  if (o.priority != kMgdGpuPriorityMedium && o.priority != kMgdGpuPriorityLow && o.priority != kMgdGpuPriorityHigh) {
    Report(reporter, user_data,
           fmt::format("MgdGpuDelegateCreate: priority {} is not an MgdGpuPriority", static_cast<int>(o.priority)));
    return nullptr;
  }
  if (o.wait != kMgdGpuWaitAuto && o.wait != kMgdGpuWaitPassive && o.wait != kMgdGpuWaitActive) {
    Report(reporter, user_data, fmt::format("MgdGpuDelegateCreate: wait {} is not an MgdGpuWait", static_cast<int>(o.wait)));
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<mgd::GpuDelegate>> delegate = absl::InternalError("unexpected failure");
  try {  // nothing may unwind into the app's C code
    delegate = CreateFor(o, reporter, user_data);
  } catch (const std::exception& e) {
    delegate = absl::InternalError(std::string("unexpected failure: ") + e.what());
  }
  if (!delegate.ok()) {
    Report(reporter, user_data, "MgdGpuDelegateCreate: " + std::string(delegate.status().message()));
    return nullptr;
  }
  auto* d = new GpuCDelegate;
  d->delegate = std::move(*delegate);
  d->name = d->delegate->name();
  d->device_name = d->delegate->device().info().device_name;
  d->c.data = d;
  d->c.name = d->name.c_str();
  d->c.native_delegate = static_cast<mgd::Delegate*>(d->delegate.get());
  return &d->c;
}

void MgdGpuDelegateDelete(MgdDelegate* delegate) {
  if (delegate == nullptr) return;
  delete static_cast<GpuCDelegate*>(delegate->data);
}

MgdStatus MgdGpuDelegateGetInterop(MgdDelegate* delegate, MgdGpuInterop* interop) {
  mgd::GpuDelegate* gpu = GpuDelegateOf(delegate, "MgdGpuDelegateGetInterop");
  if (gpu == nullptr) return kMgdError;
  if (interop == nullptr) {
    std::fprintf(stderr, "mgd: MgdGpuDelegateGetInterop: interop is NULL\n");
    return kMgdError;
  }
  const mgd::gpu::Interop i = gpu->device().interop();
  *interop = MgdGpuInterop{};
  interop->api = gpu->device().info().api == mgd::gpu::Api::kVulkan ? kMgdGpuApiVulkan : kMgdGpuApiGles;
  interop->vk_instance = i.vk_instance;
  interop->vk_physical_device = i.vk_physical_device;
  interop->vk_device = i.vk_device;
  interop->vk_queue = i.vk_queue;
  interop->vk_queue_family = i.vk_queue_family;
  interop->egl_display = i.egl_display;
  interop->egl_context = i.egl_context;
  interop->timeline_semaphores = i.timeline_semaphores ? 1 : 0;
  interop->memory_fd_import = i.memory_fd_import ? 1 : 0;
  interop->sync_fd_wait = i.sync_fd_wait ? 1 : 0;
  interop->sync_fd_signal = i.sync_fd_signal ? 1 : 0;
  interop->egl_fence_sync = i.egl_fence_sync ? 1 : 0;
  return kMgdOk;
}

MgdStatus MgdGpuDelegateGetCapabilities(MgdDelegate* delegate, MgdGpuCapabilities* capabilities) {
  if (GpuDelegateOf(delegate, "MgdGpuDelegateGetCapabilities") == nullptr) return kMgdError;
  if (capabilities == nullptr) {
    std::fprintf(stderr, "mgd: MgdGpuDelegateGetCapabilities: capabilities is NULL\n");
    return kMgdError;
  }
  auto* d = static_cast<GpuCDelegate*>(delegate->data);
  std::lock_guard<std::mutex> lock(d->capabilities_mutex);
  if (!d->capabilities) {
    absl::StatusOr<mgd::Capabilities> measured = absl::InternalError("unexpected failure");
    try {
      measured = mgd::MeasureCapabilities(d->delegate->options());
    } catch (const std::exception& e) {
      measured = absl::InternalError(e.what());
    }
    if (!measured.ok()) {
      std::fprintf(stderr, "mgd: MgdGpuDelegateGetCapabilities: %s\n", std::string(measured.status().message()).c_str());
      return kMgdError;
    }
    d->capabilities = *measured;
  }
  *capabilities = {d->capabilities->fp32_ms, d->capabilities->fp16_ms, d->capabilities->fp32_gflops,
                   d->capabilities->fp16_gflops};
  return kMgdOk;
}

const char* MgdGpuDelegateGetDeviceName(MgdDelegate* delegate) {
  if (GpuDelegateOf(delegate, "MgdGpuDelegateGetDeviceName") == nullptr) return nullptr;
  return static_cast<GpuCDelegate*>(delegate->data)->device_name.c_str();
}

void MgdGpuDelegateLockQueue(MgdDelegate* delegate) {
  if (mgd::GpuDelegate* gpu = GpuDelegateOf(delegate, "MgdGpuDelegateLockQueue")) gpu->device().LockQueue();
}

void MgdGpuDelegateUnlockQueue(MgdDelegate* delegate) {
  if (mgd::GpuDelegate* gpu = GpuDelegateOf(delegate, "MgdGpuDelegateUnlockQueue")) gpu->device().UnlockQueue();
}

}  // extern "C"
