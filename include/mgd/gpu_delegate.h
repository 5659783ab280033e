/* mgd's GPU delegate for the C API, in the shape of TFLite's
 * TfLiteGpuDelegateV2Create: options with defaults, create, add to the
 * interpreter options, delete after the interpreter.
 *
 *   MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
 *   o.precision_loss_allowed = 1;          // fp16
 *   o.cache_dir = "/data/app/mgd-cache";   // the second start skips compiling
 *   MgdDelegate* gpu = MgdGpuDelegateCreate(&o, reporter, NULL);
 *   MgdInterpreterOptionsAddDelegate(options, gpu);
 *   ... MgdInterpreterCreate(model, options) ... MgdInterpreterDelete(...)
 *   MgdGpuDelegateDelete(gpu);
 *
 * Models from `mgd compile` load through MgdModelCreateFromFile like any
 * .tflite; the delegate then uses the code compiled into them, and
 * MgdInterpreterCreate fails (reported) when they were compiled for another
 * GPU, driver or precision, unless allow_recompile is set. */
#ifndef MGD_GPU_DELEGATE_H_
#define MGD_GPU_DELEGATE_H_

#include <stdint.h>

#include "mgd/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum MgdGpuApi {
  kMgdGpuApiAuto = 0, /* a hardware GPU (Vulkan before GL), else a software one */
  kMgdGpuApiVulkan = 1,
  kMgdGpuApiGles = 2,
  kMgdGpuApiMaxEnum = 0x7FFFFFFF, /* any int32 is a value (checked), as Vulkan's MAX_ENUM */
} MgdGpuApi;

typedef enum MgdGpuPriority {
  kMgdGpuPriorityMedium = 0, /* the driver's default */
  kMgdGpuPriorityLow = 1,
  kMgdGpuPriorityHigh = 2,
  kMgdGpuPriorityMaxEnum = 0x7FFFFFFF, /* any int32 is a value (checked), as Vulkan's MAX_ENUM */
} MgdGpuPriority;

/* How an invoke waits for the GPU's work (TFLite's Metal delegate's wait
 * types). Passive sleeps in the driver until it wakes the thread, tens of
 * microseconds after the GPU finished on desktop drivers; active polls for up
 * to 2 ms around when the work should end (a model whose last invoke took
 * longer sleeps until 1 ms before that), answering as soon as
 * the GPU finishes while keeping a core busy. Auto: active on a hardware GPU,
 * passive on a software one (whose work runs on the cores a poll would
 * take). */
typedef enum MgdGpuWait {
  kMgdGpuWaitAuto = 0,
  kMgdGpuWaitPassive = 1,
  kMgdGpuWaitActive = 2,
  kMgdGpuWaitMaxEnum = 0x7FFFFFFF,
} MgdGpuWait;

typedef struct MgdGpuDelegateOptions {
  MgdGpuApi api;
  /* Nonzero: fp16 storage and arithmetic (TFLite's precision loss allowed). */
  int32_t precision_loss_allowed;
  /* Which device: an index or a name substring; NULL: the best one. */
  const char* device;
  /* The compilation cache's folder; NULL: no cache. */
  const char* cache_dir;
  /* Names the model in the cache instead of a hash of its bytes (TFLite's
   * model_token); NULL: hash the model. One token must name one model. */
  const char* model_token;
  /* Nonzero: a model from `mgd compile` made for another GPU, driver or
   * precision is compiled again from the model it embeds instead of refused. */
  int32_t allow_recompile;
  /* Nonzero: dispatches that differ only in sizes and constants share one
   * program, reading those as parameters: fewer programs to compile (a
   * faster first start without a cache), a little slower to run. */
  int32_t share_programs;
  /* How the delegate's GPU work competes with other work on the GPU (NNAPI's
   * priority): a background model at low priority leaves the GPU to the
   * app's rendering. Applied where the driver allows (Vulkan:
   * VK_EXT_global_priority; GL: EGL_IMG_context_priority); high may need
   * privileges, and falls back to medium. */
  MgdGpuPriority priority;
  /* GL: make the delegate's context on the app's EGLDisplay (initialized,
   * e.g. its window's), sharing objects with egl_share_context (the app's
   * context, e.g. its window's): the app's GL buffers are then bound in
   * place (MgdGpuBuffer), and a window draws the delegate's outputs without
   * a copy through host memory. 0: mgd's own display, with no window
   * system. Handles as integers (EGLDisplay, EGLContext); Vulkan ignores
   * them. */
  uint64_t egl_display;
  uint64_t egl_share_context;
  /* How an invoke waits for the GPU (MgdGpuWait; last, so that the fields
   * before it keep their offsets). */
  MgdGpuWait wait;
} MgdGpuDelegateOptions;

MgdGpuDelegateOptions MgdGpuDelegateOptionsDefault(void);

/* NULL (reported) when no GPU of the requested API can be used. */
MgdDelegate* MgdGpuDelegateCreate(const MgdGpuDelegateOptions* options, MgdErrorReporter reporter, void* user_data);
/* After every interpreter that uses it is deleted. */
void MgdGpuDelegateDelete(MgdDelegate* delegate);

/* The delegate's GPU objects, for apps that share buffers and sync objects
 * with it (MgdGpuBuffer, MgdFences in mgd/c_api.h), and which kinds it can
 * use. Vulkan: make buffers and semaphores on vk_device; to submit to
 * vk_queue (the app's producer or consumer on the same queue), hold
 * MgdGpuDelegateLockQueue (Vulkan requires queue access to be externally
 * synchronized). GL: make a context with egl_context as its share context on
 * egl_display; its buffers and EGL syncs are then the delegate's too.
 * Handles are the API's own, as integers; 0 where the API is the other. */
typedef struct MgdGpuInterop {
  MgdGpuApi api;
  uint64_t vk_instance, vk_physical_device, vk_device, vk_queue;
  uint32_t vk_queue_family;
  uint64_t egl_display, egl_context;
  int32_t timeline_semaphores; /* Vulkan timeline semaphores */
  int32_t memory_fd_import;    /* kMgdGpuBufferVulkanMemoryFd */
  int32_t sync_fd_wait;        /* kMgdSyncFd waits */
  int32_t sync_fd_signal;      /* signal_new of kMgdSyncFd */
  int32_t egl_fence_sync;      /* kMgdSyncEgl waits and signal_new */
} MgdGpuInterop;

MgdStatus MgdGpuDelegateGetInterop(MgdDelegate* delegate, MgdGpuInterop* interop);

/* What the delegate's device can do, measured (NNAPI's getCapabilities): one
 * run of mgd's reference workload (three convolutions, 0.083 GFLOP) in fp32
 * and in relaxed fp16, median of 15. Measured at the first call (a few
 * milliseconds on a GPU, seconds on a software one), then kept. */
typedef struct MgdGpuCapabilities {
  double fp32_ms, fp16_ms;
  double fp32_gflops, fp16_gflops;
} MgdGpuCapabilities;
MgdStatus MgdGpuDelegateGetCapabilities(MgdDelegate* delegate, MgdGpuCapabilities* capabilities);
/* The device the delegate runs on, as its driver names it ("NVIDIA H200",
 * "llvmpipe (LLVM 15.0.6, 256 bits)"); owned by the delegate. NULL
 * (said on stderr) for a delegate MgdGpuDelegateCreate did not make. */
const char* MgdGpuDelegateGetDeviceName(MgdDelegate* delegate);
void MgdGpuDelegateLockQueue(MgdDelegate* delegate);
void MgdGpuDelegateUnlockQueue(MgdDelegate* delegate);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* MGD_GPU_DELEGATE_H_ */
