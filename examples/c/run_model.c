/* A minimal mgd C API program: load a model, feed a raw float32 input file,
 * run, and print each output's shape and first values.
 *   run_model MODEL.tflite INPUT.f32 [CACHE_DIR]
 * With CACHE_DIR, the model runs on the GPU delegate (the best GPU, fp16)
 * with its compilation cache in CACHE_DIR: the second start skips compiling.
 * MODEL may also come from `mgd compile`. */
#include <stdio.h>
#include <stdlib.h>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"

static void report(void* user_data, const char* message) {
  (void)user_data;
  fprintf(stderr, "run_model: %s\n", message);
}

static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long length = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* data = length > 0 ? malloc((size_t)length) : NULL;
  if (data != NULL && fread(data, 1, (size_t)length, f) != (size_t)length) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data != NULL ? (size_t)length : 0;
  return data;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: run_model MODEL.tflite INPUT.f32 [CACHE_DIR]\n");
    return 2;
  }
  MgdModel* model = MgdModelCreateFromFileWithErrorReporter(argv[1], report, NULL);
  if (model == NULL) return 2;
  MgdInterpreterOptions* options = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(options, report, NULL);
  MgdDelegate* gpu = NULL;
  if (argc == 4) {
    MgdGpuDelegateOptions gpu_options = MgdGpuDelegateOptionsDefault();
    gpu_options.precision_loss_allowed = 1;
    gpu_options.cache_dir = argv[3];
    gpu = MgdGpuDelegateCreate(&gpu_options, report, NULL);
    if (gpu == NULL) return 2;
    MgdInterpreterOptionsAddDelegate(options, gpu);
  }
  MgdInterpreter* interpreter = MgdInterpreterCreate(model, options);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model); /* the interpreter keeps what it needs */
  if (interpreter == NULL) return 2;

  int status = 1;
  size_t input_size = 0;
  void* input = read_file(argv[2], &input_size);
  MgdTensor* input_tensor = MgdInterpreterGetInputTensor(interpreter, 0);
  if (input == NULL) {
    fprintf(stderr, "run_model: cannot read %s\n", argv[2]);
  } else if (MgdInterpreterAllocateTensors(interpreter) == kMgdOk &&
             MgdTensorCopyFromBuffer(input_tensor, input, input_size) == kMgdOk &&
             MgdInterpreterInvoke(interpreter) == kMgdOk) {
    for (int32_t k = 0; k < MgdInterpreterGetOutputTensorCount(interpreter); ++k) {
      const MgdTensor* out = MgdInterpreterGetOutputTensor(interpreter, k);
      printf("output %d '%s' [", (int)k, MgdTensorName(out));
      for (int32_t d = 0; d < MgdTensorNumDims(out); ++d) printf(d ? ",%d" : "%d", (int)MgdTensorDim(out, d));
      const float* values = (const float*)MgdTensorData(out);
      size_t count = MgdTensorByteSize(out) / sizeof(float);
      printf("]:");
      for (size_t i = 0; i < count && i < 4; ++i) printf(" %.6g", values[i]);
      printf("\n");
    }
    status = 0;
  }
  free(input);
  MgdInterpreterDelete(interpreter);
  MgdGpuDelegateDelete(gpu); /* after the interpreters that use it */
  return status;
}
