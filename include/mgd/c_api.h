/* mgd C API, in the shape of TFLite's C API: load a model, set options
 * (delegates, custom ops, error reporter), create an interpreter, copy inputs
 * in, invoke, copy outputs out. libmgd exports these functions and those of
 * mgd/gpu_delegate.h, nothing else (pkg-config --cflags --libs mgd, or
 * find_package(mgd) and the target mgd::mgd).
 *
 * Ownership: every Create has a matching Delete; Delete takes NULL. Tensors
 * belong to their interpreter (or, inside a custom op or delegate callback,
 * to that call).
 *
 * Errors: every function checks its arguments. A NULL where an object is
 * needed, an index out of range or a size that does not match is not a
 * crash: the function reports one line and returns kMgdError, NULL, -1
 * (dimensions), 0 (counts, sizes) or kMgdNoType. Reports go to the error
 * reporter of the object concerned (the model's, or the interpreter's set
 * through its options, also for its tensors; inside a custom op, to the
 * op's error, reported with its node), else to stderr.
 *
 * Inputs: an invoke never changes its input tensors, so invoking again
 * without copying them in again gives the same outputs. NaN and Inf in
 * inputs flow through as TFLite's CPU kernels let them (docs/numerics.md);
 * MgdInterpreterOptionsSetCheckFinite makes an invoke fail, naming the
 * first non-finite input or output instead.
 *
 * Threads: every function may be called from any thread. Separate
 * interpreters may be created, invoked and deleted on different threads at
 * once, also when they share one delegate (its prepares take turns; their
 * invokes run side by side). Several threads may invoke one interpreter at
 * once: runs take turns and each gives what a single-threaded run gives,
 * but the interpreter's tensors are shared, so such threads pass their own
 * buffers (MgdInterpreterInvokeWithBuffers, MgdInterpreterInvokeAsync)
 * rather than copying into and out of its tensors. Delete an interpreter
 * when no call on it is running; its pending async invokes complete first.
 * Delegates may be created and deleted on any thread (after their
 * interpreters). Error reporters and async callbacks may be called on mgd's
 * threads. */
#ifndef MGD_C_API_H_
#define MGD_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum MgdStatus { kMgdOk = 0, kMgdError = 1 } MgdStatus;

/* Tensor element types (same numbers as TFLite's TfLiteType). */
typedef enum MgdType {
  kMgdNoType = 0,
  kMgdFloat32 = 1,
  kMgdInt32 = 2,
  kMgdUInt8 = 3,
  kMgdInt64 = 4,
  kMgdBool = 6,
  kMgdInt8 = 9,
  kMgdFloat16 = 10,
} MgdType;

typedef void (*MgdErrorReporter)(void* user_data, const char* message);

typedef struct MgdModel MgdModel;
typedef struct MgdInterpreterOptions MgdInterpreterOptions;
typedef struct MgdInterpreter MgdInterpreter;
typedef struct MgdTensor MgdTensor;

/* ---- Models ---- */

/* Copies the bytes; returns NULL (and reports why) on a malformed model. */
MgdModel* MgdModelCreate(const void* model_data, size_t model_size);
MgdModel* MgdModelCreateWithErrorReporter(const void* model_data, size_t model_size,
                                          MgdErrorReporter reporter, void* user_data);
MgdModel* MgdModelCreateFromFile(const char* model_path);
MgdModel* MgdModelCreateFromFileWithErrorReporter(const char* model_path,
                                                  MgdErrorReporter reporter, void* user_data);
void MgdModelDelete(MgdModel* model);

/* ---- Custom ops ---- */

typedef struct MgdOpContext MgdOpContext;
typedef struct MgdOpNode MgdOpNode;

/* As TfLiteRegistration: init once per node with the op's custom_options,
 * prepare once after shapes are known (may resize outputs), invoke per run. */
typedef struct MgdRegistration {
  void* (*init)(MgdOpContext* context, const char* buffer, size_t length);
  void (*free)(MgdOpContext* context, void* buffer);
  MgdStatus (*prepare)(MgdOpContext* context, MgdOpNode* node);
  MgdStatus (*invoke)(MgdOpContext* context, MgdOpNode* node);
} MgdRegistration;

int32_t MgdOpNodeNumInputs(const MgdOpNode* node);
int32_t MgdOpNodeNumOutputs(const MgdOpNode* node);
/* NULL for an omitted optional input. */
MgdTensor* MgdOpNodeGetInput(const MgdOpNode* node, int32_t index);
MgdTensor* MgdOpNodeGetOutput(const MgdOpNode* node, int32_t index);
/* What init returned. */
void* MgdOpNodeGetUserData(const MgdOpNode* node);
/* Only during prepare: gives `tensor` (an output) a new shape. */
MgdStatus MgdOpContextResizeTensor(MgdOpContext* context, MgdTensor* tensor, const int32_t* dims,
                                   int32_t num_dims);
void MgdOpContextReportError(MgdOpContext* context, const char* format, ...);

/* ---- Delegates ---- */

/* A delegate claims nodes it supports; the interpreter hands it maximal
 * subgraphs of them that run between CPU nodes (partitions, as TFLite
 * partitions) and runs the rest on the CPU. */
typedef struct MgdDelegate {
  void* data;
  const char* name;
  /* Returns 1 if the node is supported; otherwise 0, with a reason written to
   * reason (NUL-terminated, at most reason_size bytes). builtin_code is the
   * TFLite builtin operator code; custom_name is set for CUSTOM (32). */
  int (*is_node_supported)(void* data, int32_t node_index, int32_t builtin_code,
                           const char* custom_name, char* reason, size_t reason_size);
  /* Compiles one partition. Returns a kernel handle, or NULL with an error
   * message (the partition then runs on the CPU). */
  void* (*prepare)(void* data, const int32_t* nodes, int32_t num_nodes, const int32_t* inputs,
                   int32_t num_inputs, const int32_t* outputs, int32_t num_outputs, char* error,
                   size_t error_size);
  MgdStatus (*invoke)(void* data, void* kernel, MgdTensor* const* inputs, int32_t num_inputs,
                      MgdTensor* const* outputs, int32_t num_outputs);
  void (*free_kernel)(void* data, void* kernel);
  /* Set by mgd's own delegates (MgdGpuDelegateCreate in mgd/gpu_delegate.h),
   * which see the whole model rather than node indices; leave it NULL in
   * yours (zero-initialize the struct). */
  void* native_delegate;
} MgdDelegate;

/* ---- Interpreter ---- */

MgdInterpreterOptions* MgdInterpreterOptionsCreate(void);
void MgdInterpreterOptionsDelete(MgdInterpreterOptions* options);
/* The delegate must outlive interpreters created with these options. A C
 * delegate needs is_node_supported, prepare and invoke (free_kernel may be
 * NULL); one without them is reported and not added. */
void MgdInterpreterOptionsAddDelegate(MgdInterpreterOptions* options, MgdDelegate* delegate);
/* 0 (default) means no limit; a negative max is reported and ignored. */
void MgdInterpreterOptionsSetMaxDelegatedPartitions(MgdInterpreterOptions* options, int32_t max);
/* Nonzero: a delegate's partition is kept only where its expected cost (the
 * delegate's estimate of its work, dispatches and transfers) is below its
 * nodes' on the CPU; the GPU delegate measures its rates first. Delegates
 * that give no estimate (C delegates) keep every partition. */
void MgdInterpreterOptionsSetPartitionByCost(MgdInterpreterOptions* options, int32_t by_cost);
/* Nonzero: MgdInterpreterInvoke fails (reported) when a float input holds
 * NaN or Inf (nothing runs) or an output does, naming the tensor and the
 * first such element. */
void MgdInterpreterOptionsSetCheckFinite(MgdInterpreterOptions* options, int32_t check);
/* Adds or overrides a custom op for versions [min_version, max_version]. The
 * registration must outlive interpreters created with these options; its
 * invoke is required, init, free and prepare may be NULL. */
void MgdInterpreterOptionsAddCustomOp(MgdInterpreterOptions* options, const char* name,
                                      const MgdRegistration* registration, int32_t min_version,
                                      int32_t max_version);
void MgdInterpreterOptionsSetErrorReporter(MgdInterpreterOptions* options,
                                           MgdErrorReporter reporter, void* user_data);

/* Resolves ops, checks shapes, applies delegates. NULL (reported) on error.
 * The model may be deleted afterwards. */
MgdInterpreter* MgdInterpreterCreate(const MgdModel* model, const MgdInterpreterOptions* options);
void MgdInterpreterDelete(MgdInterpreter* interpreter);

int32_t MgdInterpreterGetInputTensorCount(const MgdInterpreter* interpreter);
MgdTensor* MgdInterpreterGetInputTensor(const MgdInterpreter* interpreter, int32_t index);
int32_t MgdInterpreterGetOutputTensorCount(const MgdInterpreter* interpreter);
const MgdTensor* MgdInterpreterGetOutputTensor(const MgdInterpreter* interpreter, int32_t index);
/* Plans tensor memory; also done by the first Invoke. */
MgdStatus MgdInterpreterAllocateTensors(MgdInterpreter* interpreter);
MgdStatus MgdInterpreterInvoke(MgdInterpreter* interpreter);
/* Zeroes the state that stateful ops (LSTM) keep from one invoke to the
 * next (TFLite's variable tensors), as TfLiteInterpreterResetVariableTensors:
 * call it between two independent sequences. */
MgdStatus MgdInterpreterResetVariableTensors(MgdInterpreter* interpreter);

/* ---- Invokes with the caller's buffers, from several threads, in flight ---- */

/* One run, as a turn of its own: copies inputs[i] (input_sizes[i] bytes,
 * exactly input i's size) in, invokes, copies output j out (output_sizes[j]
 * bytes, exactly its size). What threads sharing an interpreter call. */
MgdStatus MgdInterpreterInvokeWithBuffers(MgdInterpreter* interpreter, const void* const* inputs,
                                          const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                          const size_t* output_sizes, int32_t num_outputs);

typedef struct MgdInvokeEvent MgdInvokeEvent;
/* status: kMgdOk, or kMgdError after the error was reported. */
typedef void (*MgdInvokeCallback)(void* user_data, MgdStatus status);

/* How many async invokes may be in flight (default 2, at least 1); one more
 * waits in MgdInterpreterInvokeAsync for the oldest to complete. A GPU
 * delegate keeps this many extra sets of its per-invoke buffers once the
 * first async invoke is made. */
void MgdInterpreterOptionsSetMaxInFlight(MgdInterpreterOptions* options, int32_t max_in_flight);

/* Starts an invoke and returns at once (or when fewer than max_in_flight are
 * pending): the inputs are read before it returns, so their buffers may be
 * reused; the outputs are written before the invoke completes, so theirs
 * must stay valid until then. On completion, `callback` (may be NULL) is
 * called on mgd's completion thread, in the order the invokes were made
 * (it may invoke again, but must not delete the interpreter), then the
 * event completes. Where the model runs wholly on mgd's GPU delegate the
 * invokes overlap (frame N+1 is uploaded while frame N computes); otherwise
 * they run one after another on that thread. Returns NULL (reported) on bad
 * arguments; a failed run is reported and completes the event with an
 * error. */
MgdInvokeEvent* MgdInterpreterInvokeAsync(MgdInterpreter* interpreter, const void* const* inputs,
                                          const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                          const size_t* output_sizes, int32_t num_outputs, MgdInvokeCallback callback,
                                          void* user_data);
/* Waits for the invoke, at most timeout_ns (negative: without a limit).
 * kMgdOk when it completed and succeeded; kMgdError when it failed or the
 * timeout passed first (MgdInvokeEventIsDone tells which). */
MgdStatus MgdInvokeEventWait(const MgdInvokeEvent* event, int64_t timeout_ns);
int32_t MgdInvokeEventIsDone(const MgdInvokeEvent* event);
/* May be called before the invoke completed: it still completes. */
void MgdInvokeEventDelete(MgdInvokeEvent* event);

/* ---- The app's GPU buffers and sync objects (zero-copy, fenced) ---- */

/* An app's GPU buffer to bind to a model input or output instead of host
 * memory (TFLite's BindBufferToTensor, LiteRT's tensor buffers): the model
 * then reads or writes it on the GPU, with no copy through host memory.
 * Vulkan: a VkBuffer made on the GPU delegate's VkDevice
 * (MgdGpuDelegateGetInterop) with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, in a
 * queue family it may use (the delegate's, or VK_SHARING_MODE_CONCURRENT);
 * or memory exported as an opaque fd (VK_KHR_external_memory_fd) from any
 * VkDevice of the same GPU, with its allocation size and memory type index
 * (the fd is mgd's once bound). GL: a buffer object of a context that shares
 * objects with the delegate's EGL context. */
typedef enum MgdGpuBufferType {
  kMgdGpuBufferVulkan = 0,
  kMgdGpuBufferVulkanMemoryFd = 1,
  kMgdGpuBufferGl = 2,
  kMgdGpuBufferMaxEnum = 0x7FFFFFFF, /* any int32 is a value (checked) */
} MgdGpuBufferType;

/* BHWC: the tensor's own layout, float32. PHWC4: the GPU delegate's own
 * (channels in slices of 4, zero-padded; float16 when the delegate computes
 * in fp16), which skips a conversion dispatch. */
typedef enum MgdGpuLayout {
  kMgdGpuLayoutBhwc = 0,
  kMgdGpuLayoutPhwc4 = 1,
  kMgdGpuLayoutMaxEnum = 0x7FFFFFFF, /* any int32 is a value (checked) */
} MgdGpuLayout;

typedef struct MgdGpuBuffer {
  MgdGpuBufferType type;
  uint64_t handle;       /* the VkBuffer or the GL buffer name */
  int32_t fd;            /* kMgdGpuBufferVulkanMemoryFd */
  uint64_t offset;       /* where the tensor begins (a multiple of the
                            device's storage buffer offset alignment) */
  uint64_t bytes;        /* at least MgdInterpreterGetGpuBufferBytes */
  uint64_t memory_bytes; /* kMgdGpuBufferVulkanMemoryFd: the allocation's size */
  uint32_t memory_type;  /* ... and its memory type index */
  MgdGpuLayout layout;
} MgdGpuBuffer;

/* Binds `buffer` to input (output) `index`; NULL unbinds. The tensor must be
 * read (written) only by the GPU delegate. Invokes then neither read nor
 * write its host bytes: pass NULL and 0 for it to the invokes that take
 * buffers. Waits for async invokes in flight; do not call it while another
 * thread invokes. The buffer must outlive the binding. Invokes in flight
 * use it in turn on the GPU: the app must not touch it until the invoke has
 * signalled (fences below) or completed. */
MgdStatus MgdInterpreterBindInputBuffer(MgdInterpreter* interpreter, int32_t index, const MgdGpuBuffer* buffer);
MgdStatus MgdInterpreterBindOutputBuffer(MgdInterpreter* interpreter, int32_t index, const MgdGpuBuffer* buffer);
/* The bytes a buffer bound to input (output) `index` in `layout` must hold,
 * and (PHWC4) whether its elements are float16. */
MgdStatus MgdInterpreterGetGpuBufferBytes(const MgdInterpreter* interpreter, int32_t is_output, int32_t index,
                                          MgdGpuLayout layout, uint64_t* bytes, int32_t* half);

/* GPU synchronization objects an invoke waits on before its GPU work and
 * signals after it, so that a producer (camera, renderer) and a consumer
 * chain with mgd on the GPU without the CPU waiting. Objects of the GPU
 * delegate's device (MgdGpuDelegateGetInterop says which kinds it has).
 * Vulkan: binary and timeline semaphores to wait on and signal; sync fds to
 * wait on (mgd then owns the fd) and, as signal_new, to export. GL: EGL syncs
 * (EGL_KHR_fence_sync, waited for with EGL_KHR_wait_sync) and sync fds
 * (EGL_ANDROID_native_fence_sync) to wait on; as signal_new, a new EGL fence
 * sync or sync fd for the app (the app destroys or closes it). */
typedef enum MgdSyncType {
  kMgdSyncVulkanSemaphore = 0,
  kMgdSyncVulkanTimelineSemaphore = 1,
  kMgdSyncFd = 2,
  kMgdSyncEgl = 3,
  kMgdSyncMaxEnum = 0x7FFFFFFF, /* any int32 is a value (checked) */
} MgdSyncType;

typedef struct MgdSync {
  MgdSyncType type;
  uint64_t handle; /* VkSemaphore or EGLSync */
  uint64_t value;  /* timeline semaphores: the value waited for or signalled */
  int32_t fd;      /* kMgdSyncFd */
} MgdSync;

typedef struct MgdFences {
  const MgdSync* wait;
  int32_t num_wait;
  const MgdSync* signal;
  int32_t num_signal;
  /* When not NULL: mgd makes a sync object of signal_new->type (kMgdSyncFd or
   * kMgdSyncEgl) that signals with the invoke's GPU work, and fills in its
   * fd or handle before the call returns. */
  MgdSync* signal_new;
} MgdFences;

/* MgdInterpreterInvokeWithBuffers and MgdInterpreterInvokeAsync with
 * fences (NULL: none). Fenced invokes need the whole model delegated to the
 * GPU in one partition. The async one submits the GPU work before it
 * returns, so that a consumer may be submitted right after it to wait on
 * its signal (binary semaphores must be signalled by work already
 * submitted). */
MgdStatus MgdInterpreterInvokeFenced(MgdInterpreter* interpreter, const void* const* inputs, const size_t* input_sizes,
                                     int32_t num_inputs, void* const* outputs, const size_t* output_sizes,
                                     int32_t num_outputs, const MgdFences* fences);
MgdInvokeEvent* MgdInterpreterInvokeAsyncFenced(MgdInterpreter* interpreter, const void* const* inputs,
                                                const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                                const size_t* output_sizes, int32_t num_outputs, const MgdFences* fences,
                                                MgdInvokeCallback callback, void* user_data);

/* ---- Deadlines and timing ---- */

/* Every later invoke of this interpreter (of any kind) must be done within
 * timeout_ns of its call; a missed one fails, reported as "deadline
 * exceeded", and its GPU work is abandoned (the next invoke waits for it
 * before reusing its buffers, and then succeeds). 0 or negative: no limit
 * (the default). */
void MgdInterpreterSetInvokeTimeout(MgdInterpreter* interpreter, int64_t timeout_ns);

/* Nonzero: invokes are also timed on the GPU (NNAPI's measureTiming), which
 * costs a little (timestamps around each dispatch). */
void MgdInterpreterOptionsSetMeasureTiming(MgdInterpreterOptions* options, int32_t measure);

/* What one invoke took: in all, inside delegates (uploads, GPU work,
 * downloads) and on the GPU; gpu_ms is -1 when unknown (timing not asked
 * for, nothing delegated, or no GPU timestamps). */
typedef struct MgdTiming {
  double total_ms;
  double in_delegates_ms;
  double gpu_ms;
} MgdTiming;
/* The last successful MgdInterpreterInvoke or InvokeWithBuffers. */
MgdStatus MgdInterpreterGetLastTiming(const MgdInterpreter* interpreter, MgdTiming* timing);
/* A completed, successful async invoke; kMgdError (reported) otherwise. */
MgdStatus MgdInvokeEventGetTiming(const MgdInvokeEvent* event, MgdTiming* timing);

/* ---- Tensors ---- */

MgdType MgdTensorType(const MgdTensor* tensor);
int32_t MgdTensorNumDims(const MgdTensor* tensor);
int32_t MgdTensorDim(const MgdTensor* tensor, int32_t dim_index);
size_t MgdTensorByteSize(const MgdTensor* tensor);
void* MgdTensorData(const MgdTensor* tensor);
const char* MgdTensorName(const MgdTensor* tensor);
/* Fail (reported) when input_data_size differs from the tensor's size. */
MgdStatus MgdTensorCopyFromBuffer(MgdTensor* tensor, const void* input_data, size_t input_data_size);
MgdStatus MgdTensorCopyToBuffer(const MgdTensor* tensor, void* output_data, size_t output_data_size);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* MGD_C_API_H_ */
