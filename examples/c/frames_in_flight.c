/* Frames through mgd as a camera app sends them: each frame's invoke is
 * started at once (MgdInterpreterInvokeAsync) with up to IN_FLIGHT pending,
 * so that the next frame is uploaded while the GPU computes the one before;
 * a callback hears of each completion, in order. Prints frames per second
 * and the last frame's timing (in all, in the delegate, on the GPU).
 *   frames_in_flight MODEL.tflite INPUT.f32 [FRAMES [IN_FLIGHT]]
 * The model runs on the best GPU (fp16); every frame here is INPUT. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"

#define MAX_IN_FLIGHT 8
#define MAX_OUTPUTS 8

static void report(void* user_data, const char* message) {
  (void)user_data;
  fprintf(stderr, "frames_in_flight: %s\n", message);
}

/* Called on mgd's completion thread, frame after frame. */
static void frame_done(void* user_data, MgdStatus status) {
  int* completed = (int*)user_data;
  if (status == kMgdOk) ++*completed;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: frames_in_flight MODEL.tflite INPUT.f32 [FRAMES [IN_FLIGHT]]\n");
    return 2;
  }
  const int frames = argc > 3 ? atoi(argv[3]) : 100;
  const int in_flight = argc > 4 ? atoi(argv[4]) : 2;
  if (frames < 1 || in_flight < 1 || in_flight > MAX_IN_FLIGHT) {
    fprintf(stderr, "frames_in_flight: FRAMES >= 1 and 1 <= IN_FLIGHT <= %d\n", MAX_IN_FLIGHT);
    return 2;
  }
  MgdGpuDelegateOptions gpu_options = MgdGpuDelegateOptionsDefault();
  gpu_options.precision_loss_allowed = 1;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&gpu_options, report, NULL);
  MgdModel* model = MgdModelCreateFromFileWithErrorReporter(argv[1], report, NULL);
  if (gpu == NULL || model == NULL) return 2;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, report, NULL);
  MgdInterpreterOptionsAddDelegate(options, gpu);
  MgdInterpreterOptionsSetMaxInFlight(options, in_flight);
  MgdInterpreterOptionsSetMeasureTiming(options, 1);
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
  if (interpreter == NULL) return 2;

  /* The frame, and one set of output buffers per frame in flight: set
   * f % in_flight is free again when frame f may start. */
  FILE* f = fopen(argv[2], "rb");
  const size_t input_size = MgdTensorByteSize(MgdInterpreterGetInputTensor(interpreter, 0));
  void* input = malloc(input_size);
  if (f == NULL || fread(input, 1, input_size, f) != input_size) {
    fprintf(stderr, "frames_in_flight: %s does not hold %zu bytes\n", argv[2], input_size);
    return 2;
  }
  fclose(f);
  const int32_t num_outputs = MgdInterpreterGetOutputTensorCount(interpreter);
  if (num_outputs > MAX_OUTPUTS) return 2;
  size_t output_sizes[MAX_OUTPUTS];
  void* outputs[MAX_IN_FLIGHT][MAX_OUTPUTS];
  for (int32_t k = 0; k < num_outputs; ++k) {
    output_sizes[k] = MgdTensorByteSize(MgdInterpreterGetOutputTensor(interpreter, k));
    for (int s = 0; s < in_flight; ++s) outputs[s][k] = malloc(output_sizes[k]);
  }

  int completed = 0;
  MgdInvokeEvent* last = NULL;
  const void* inputs[1] = {input};
  const double start = now_ms();
  for (int frame = 0; frame < frames; ++frame) {
    /* Returns once fewer than in_flight frames are pending. */
    MgdInvokeEvent* event = MgdInterpreterInvokeAsync(interpreter, inputs, &input_size, 1, outputs[frame % in_flight],
                                                      output_sizes, num_outputs, frame_done, &completed);
    if (event == NULL) break;
    MgdInvokeEventDelete(last); /* a frame's event may go before it completes */
    last = event;
  }
  int status = 1;
  if (last != NULL && MgdInvokeEventWait(last, -1) == kMgdOk) {
    const double ms = now_ms() - start;
    MgdTiming timing;
    MgdInvokeEventGetTiming(last, &timing);
    printf("%d of %d frames, %d in flight: %.1f frames/s\n", completed, frames, in_flight, 1e3 * completed / ms);
    printf("last frame: %.3f ms in all, %.3f in the delegate, ", timing.total_ms, timing.in_delegates_ms);
    if (timing.gpu_ms >= 0) {
      printf("%.3f on the GPU\n", timing.gpu_ms);
    } else {
      printf("GPU time unknown\n");
    }
    status = completed == frames ? 0 : 1;
  }
  MgdInvokeEventDelete(last);
  MgdInterpreterDelete(interpreter); /* waits for what is still in flight */
  MgdGpuDelegateDelete(gpu);
  for (int32_t k = 0; k < num_outputs; ++k) {
    for (int s = 0; s < in_flight; ++s) free(outputs[s][k]);
  }
  free(input);
  return status;
}
