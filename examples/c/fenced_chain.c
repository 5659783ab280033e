/* A producer, mgd and a consumer chained on the GPU, as a camera app and a
 * renderer would chain with a model: the producer (here a copy from a
 * staging buffer, standing in for a camera or a render pass) writes each
 * frame into a GPU buffer bound to the model's input and signals a
 * semaphore; mgd waits on it, runs the model into GPU buffers bound to its
 * outputs and signals a second semaphore; the consumer waits on that and
 * copies the outputs where the host can read them. The CPU waits only for
 * the consumer, once per frame, and never copies a tensor.
 *   fenced_chain MODEL.tflite INPUT.f32 [FRAMES]
 * Vulkan; every buffer and semaphore is made on the delegate's own VkDevice
 * (MgdGpuDelegateGetInterop), and the app's submissions to the shared queue
 * hold MgdGpuDelegateLockQueue. Each frame's outputs are checked against an
 * ordinary invoke through host memory: they must be the same bytes. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"

#define MAX_OUTPUTS 8

static void report(void* user_data, const char* message) {
  (void)user_data;
  fprintf(stderr, "fenced_chain: %s\n", message);
}

#define CHECK_VK(call)                                                        \
  do {                                                                        \
    VkResult r_ = (call);                                                     \
    if (r_ != VK_SUCCESS) {                                                   \
      fprintf(stderr, "fenced_chain: %s failed (%d)\n", #call, (int)r_);      \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

typedef struct {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* mapped; /* host-visible buffers only */
  VkDeviceSize bytes;
} Buffer;

static VkDevice device;
static VkPhysicalDevice physical;

/* A storage buffer the GPU copies to and from; `host` maps it. */
static Buffer make_buffer(VkDeviceSize bytes, int host) {
  Buffer b = {0};
  b.bytes = bytes;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  CHECK_VK(vkCreateBuffer(device, &bi, NULL, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical, &props);
  const VkMemoryPropertyFlags wanted = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                            : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < props.memoryTypeCount && type == UINT32_MAX; ++i) {
    if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & wanted) == wanted) type = i;
  }
  if (type == UINT32_MAX) {
    fprintf(stderr, "fenced_chain: no memory type for a buffer\n");
    exit(1);
  }
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  CHECK_VK(vkAllocateMemory(device, &ai, NULL, &b.memory));
  CHECK_VK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  if (host) CHECK_VK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

static void free_buffer(Buffer* b) {
  if (b->mapped) vkUnmapMemory(device, b->memory);
  vkDestroyBuffer(device, b->buffer, NULL);
  vkFreeMemory(device, b->memory, NULL);
}

/* Records copies src[i] -> dst[i] into `cb` and submits it to the shared
 * queue after `wait` (if any), signalling `signal` (if any) and `fence`. */
static void submit_copies(MgdDelegate* gpu, VkQueue queue, VkCommandBuffer cb, const Buffer* src, const Buffer* dst, int n,
                          VkSemaphore wait, VkSemaphore signal, VkFence fence) {
  CHECK_VK(vkResetCommandBuffer(cb, 0));
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CHECK_VK(vkBeginCommandBuffer(cb, &begin));
  for (int i = 0; i < n; ++i) {
    VkBufferCopy region = {0, 0, src[i].bytes};
    vkCmdCopyBuffer(cb, src[i].buffer, dst[i].buffer, 1, &region);
  }
  /* What the copies wrote becomes visible to the host (the readback). */
  VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
  CHECK_VK(vkEndCommandBuffer(cb));
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.waitSemaphoreCount = wait != VK_NULL_HANDLE ? 1 : 0;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = signal != VK_NULL_HANDLE ? 1 : 0;
  si.pSignalSemaphores = &signal;
  MgdGpuDelegateLockQueue(gpu); /* mgd submits to the same queue */
  const VkResult r = vkQueueSubmit(queue, 1, &si, fence);
  MgdGpuDelegateUnlockQueue(gpu);
  CHECK_VK(r);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, n > 0 ? (size_t)n : 0, f);
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: fenced_chain MODEL.tflite INPUT.f32 [FRAMES]\n");
    return 2;
  }
  const int frames = argc > 3 ? atoi(argv[3]) : 10;
  size_t input_size = 0;
  void* input = read_file(argv[2], &input_size);
  if (input == NULL || frames < 1) {
    fprintf(stderr, "fenced_chain: cannot read %s (or FRAMES < 1)\n", argv[2]);
    return 2;
  }
  MgdGpuDelegateOptions gpu_options = MgdGpuDelegateOptionsDefault();
  gpu_options.api = kMgdGpuApiVulkan;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&gpu_options, report, NULL);
  MgdModel* model = MgdModelCreateFromFileWithErrorReporter(argv[1], report, NULL);
  if (gpu == NULL || model == NULL) return 2;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, report, NULL);
  MgdInterpreterOptionsAddDelegate(options, gpu);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
  if (interpreter == NULL) return 1;
  const int outputs = MgdInterpreterGetOutputTensorCount(interpreter);
  if (MgdInterpreterGetInputTensorCount(interpreter) != 1 || outputs > MAX_OUTPUTS ||
      input_size != MgdTensorByteSize(MgdInterpreterGetInputTensor(interpreter, 0))) {
    fprintf(stderr, "fenced_chain: a model of one input of %zu bytes and at most %d outputs, please\n", input_size, MAX_OUTPUTS);
    return 2;
  }

  /* The answer through host memory, before anything is bound. */
  void* expected[MAX_OUTPUTS];
  size_t output_sizes[MAX_OUTPUTS];
  for (int k = 0; k < outputs; ++k) {
    output_sizes[k] = MgdTensorByteSize(MgdInterpreterGetOutputTensor(interpreter, k));
    expected[k] = malloc(output_sizes[k]);
  }
  const void* inputs[1] = {input};
  if (MgdInterpreterInvokeWithBuffers(interpreter, inputs, &input_size, 1, expected, output_sizes, outputs) != kMgdOk) return 1;

  MgdGpuInterop interop;
  if (MgdGpuDelegateGetInterop(gpu, &interop) != kMgdOk) return 1;
  device = (VkDevice)(uintptr_t)interop.vk_device;
  physical = (VkPhysicalDevice)(uintptr_t)interop.vk_physical_device;
  VkQueue queue = (VkQueue)(uintptr_t)interop.vk_queue;

  /* The staging buffer the producer copies from, the model's bound input
   * and outputs on the GPU, and the buffers the consumer copies into. */
  Buffer staging = make_buffer(input_size, 1), bound_input = make_buffer(input_size, 0);
  Buffer bound_outputs[MAX_OUTPUTS], readback[MAX_OUTPUTS];
  MgdGpuBuffer binding = {kMgdGpuBufferVulkan, (uint64_t)(uintptr_t)bound_input.buffer, -1, 0, input_size, 0, 0,
                          kMgdGpuLayoutBhwc};
  if (MgdInterpreterBindInputBuffer(interpreter, 0, &binding) != kMgdOk) return 1;
  for (int k = 0; k < outputs; ++k) {
    bound_outputs[k] = make_buffer(output_sizes[k], 0);
    readback[k] = make_buffer(output_sizes[k], 1);
    binding.handle = (uint64_t)(uintptr_t)bound_outputs[k].buffer;
    binding.bytes = output_sizes[k];
    if (MgdInterpreterBindOutputBuffer(interpreter, k, &binding) != kMgdOk) return 1;
  }
  VkSemaphore produced, computed;
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  CHECK_VK(vkCreateSemaphore(device, &sci, NULL, &produced));
  CHECK_VK(vkCreateSemaphore(device, &sci, NULL, &computed));
  VkFence consumed;
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  CHECK_VK(vkCreateFence(device, &fci, NULL, &consumed));
  VkCommandPool pool;
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = interop.vk_queue_family;
  CHECK_VK(vkCreateCommandPool(device, &pci, NULL, &pool));
  VkCommandBuffer producer, consumer;
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  CHECK_VK(vkAllocateCommandBuffers(device, &cai, &producer));
  CHECK_VK(vkAllocateCommandBuffers(device, &cai, &consumer));

  int matching = 0;
  double total_ms = 0;
  for (int f = 0; f < frames; ++f) {
    memcpy(staging.mapped, input, input_size); /* the "camera" */
    memset(readback[0].mapped, 0xEE, readback[0].bytes);
    const double start = now_ms();
    submit_copies(gpu, queue, producer, &staging, &bound_input, 1, VK_NULL_HANDLE, produced, VK_NULL_HANDLE);
    /* mgd waits for the producer and signals the consumer, on the GPU; its
     * work is submitted before the call returns. No host buffers: NULL. */
    const MgdSync wait = {kMgdSyncVulkanSemaphore, (uint64_t)(uintptr_t)produced, 0, -1};
    const MgdSync signal = {kMgdSyncVulkanSemaphore, (uint64_t)(uintptr_t)computed, 0, -1};
    const MgdFences fences = {&wait, 1, &signal, 1, NULL};
    const void* no_inputs[1] = {NULL};
    size_t no_sizes[MAX_OUTPUTS + 1] = {0};
    void* no_outputs[MAX_OUTPUTS] = {NULL};
    MgdInvokeEvent* event = MgdInterpreterInvokeAsyncFenced(interpreter, no_inputs, no_sizes, 1, no_outputs, no_sizes,
                                                            outputs, &fences, NULL, NULL);
    if (event == NULL) return 1;
    submit_copies(gpu, queue, consumer, bound_outputs, readback, outputs, computed, VK_NULL_HANDLE, consumed);
    CHECK_VK(vkWaitForFences(device, 1, &consumed, VK_TRUE, UINT64_MAX));
    CHECK_VK(vkResetFences(device, 1, &consumed));
    total_ms += now_ms() - start;
    if (MgdInvokeEventWait(event, -1) != kMgdOk) return 1;
    MgdInvokeEventDelete(event);
    int same = 1;
    for (int k = 0; k < outputs; ++k) same = same && memcmp(readback[k].mapped, expected[k], output_sizes[k]) == 0;
    matching += same;
  }
  printf("%d of %d frames through producer -> mgd -> consumer match the host-copy run; %.3f ms per frame\n", matching,
         frames, total_ms / frames);

  MgdInterpreterDelete(interpreter); /* before the buffers it binds */
  vkDeviceWaitIdle(device);
  vkDestroyCommandPool(device, pool, NULL);
  vkDestroyFence(device, consumed, NULL);
  vkDestroySemaphore(device, produced, NULL);
  vkDestroySemaphore(device, computed, NULL);
  free_buffer(&staging);
  free_buffer(&bound_input);
  for (int k = 0; k < outputs; ++k) {
    free_buffer(&bound_outputs[k]);
    free_buffer(&readback[k]);
    free(expected[k]);
  }
  free(input);
  MgdGpuDelegateDelete(gpu);
  return matching == frames ? 0 : 1;
}
