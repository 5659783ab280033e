/* A MediaPipe solution through mgd's C API: an image file in, what the
 * solution finds printed in image pixels.
 *   pipeline SOLUTION MODELS_DIR IMAGE [FRAMES]
 * SOLUTION is face, face_full_range, face_mesh, hands, pose or selfie; the
 * image runs FRAMES times (default 2) as frames of one video, on the best GPU
 * (fp16) or, without one, on the CPU: after the first frame, landmarks are
 * tracked without the detector. */
#include <stdio.h>
#include <stdlib.h>

#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"
#include "mgd/pipeline.h"

static void report(void* user_data, const char* message) {
  (void)user_data;
  fprintf(stderr, "pipeline: %s\n", message);
}

static void print_result(int frame, const MgdPipelineResult* r) {
  int32_t n = MgdPipelineResultDetectionCount(r);
  printf("frame %d: %d object%s, %d submission%s%s\n", frame, n, n == 1 ? "" : "s", MgdPipelineResultSubmissions(r),
         MgdPipelineResultSubmissions(r) == 1 ? "" : "s", MgdPipelineResultDetectorRan(r) ? "" : " (tracked)");
  for (int32_t i = 0; i < n; ++i) {
    MgdPipelineDetection d;
    if (MgdPipelineResultGetDetection(r, i, &d) != kMgdOk) continue;
    printf("  %d: score %.3f, box %.1f %.1f %.1f %.1f, %d keypoints, %d landmarks", i + 1, d.score, d.box[0], d.box[1],
           d.box[2], d.box[3], d.num_keypoints, d.num_landmarks);
    if (d.num_landmarks > 0) printf(", the first at (%.1f, %.1f)", d.landmarks[0], d.landmarks[1]);
    if (d.label[0] != '\0') printf(", %s (%.2f)", d.label, d.label_score);
    printf("\n");
  }
  int32_t width = 0, height = 0;
  const float* mask = MgdPipelineResultMask(r, &width, &height);
  if (mask != NULL) {
    size_t covered = 0;
    for (size_t i = 0; i < (size_t)width * (size_t)height; ++i) covered += mask[i] >= 0.5f;
    printf("  mask %dx%d: %.1f%% foreground\n", width, height, 100.0 * (double)covered / ((double)width * height));
  }
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: pipeline SOLUTION MODELS_DIR IMAGE [FRAMES]\n");
    return 2;
  }
  int frames = argc == 5 ? atoi(argv[4]) : 2;
  MgdGpuDelegateOptions gpu_options = MgdGpuDelegateOptionsDefault();
  gpu_options.precision_loss_allowed = 1;
  MgdDelegate* gpu = MgdGpuDelegateCreate(&gpu_options, report, NULL);
  if (gpu == NULL) fprintf(stderr, "pipeline: no GPU, running on the CPU\n");

  MgdPipelineOptions options = MgdPipelineOptionsDefault();
  options.solution = argv[1];
  options.models_dir = argv[2];
  options.delegate = gpu;
  options.reporter = report;
  MgdPipeline* p = MgdPipelineCreate(&options);
  int status = p != NULL ? 0 : 2;
  for (int frame = 0; status == 0 && frame < frames; ++frame) {
    MgdPipelineResult* r = MgdPipelineProcessFile(p, argv[3]);
    if (r == NULL) {
      status = 1;
      break;
    }
    print_result(frame, r);
    MgdPipelineResultDelete(r);
  }
  MgdPipelineDelete(p);
  MgdGpuDelegateDelete(gpu);
  return status;
}
