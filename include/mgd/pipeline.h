/* mgd's whole pipelines for the C API: MediaPipe's solutions end to end, an
 * 8-bit image in, detections, landmarks and masks in image pixels out
 * (docs/pipeline.md). Each stage is one graph that a GPU delegate runs as
 * one submission; frames of one video track from frame to frame.
 *
 *   MgdPipelineOptions o = MgdPipelineOptionsDefault();
 *   o.solution = "face_mesh";             // face, face_full_range, face_mesh, hands, pose, selfie
 *   o.models_dir = "/data/app/models";    // the solution's .tflite files
 *   o.delegate = gpu;                     // MgdGpuDelegateCreate; NULL: the CPU
 *   MgdPipeline* p = MgdPipelineCreate(&o);
 *   for each frame:
 *     MgdPipelineResult* r = MgdPipelineProcess(p, rgba, width, height, 4, width * 4);
 *     for (int32_t i = 0; i < MgdPipelineResultDetectionCount(r); ++i) {
 *       MgdPipelineDetection d;
 *       MgdPipelineResultGetDetection(r, i, &d);   // d.box, d.landmarks, ...
 *     }
 *     MgdPipelineResultDelete(r);
 *   MgdPipelineDelete(p);                 // then the delegate
 *
 * Errors are reported (the options' reporter, else stderr) and give NULL,
 * kMgdError, 0 or -1, as in mgd/c_api.h. A pipeline is used by one thread
 * at a time (it tracks across frames); separate pipelines may run on
 * separate threads, also sharing one delegate. */
#ifndef MGD_PIPELINE_H_
#define MGD_PIPELINE_H_

#include <stddef.h>
#include <stdint.h>

#include "mgd/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct MgdPipeline MgdPipeline;
typedef struct MgdPipelineResult MgdPipelineResult;

typedef struct MgdPipelineOptions {
  const char* solution;   /* face, face_full_range, face_mesh, hands, pose or selfie */
  const char* models_dir; /* where its .tflite files are (NULL: the working directory) */
  MgdDelegate* delegate;  /* not owned, outlives the pipeline; NULL: the CPU */
  MgdErrorReporter reporter;
  void* reporter_data;
} MgdPipelineOptions;

MgdPipelineOptions MgdPipelineOptionsDefault(void);
/* Reads the solution's models; the graphs are prepared for each image size
 * on its first frame. */
MgdPipeline* MgdPipelineCreate(const MgdPipelineOptions* options);
void MgdPipelineDelete(MgdPipeline* pipeline);

/* One frame: `channels` 3 (RGB) or 4 (RGBA) bytes per pixel, rows
 * `row_bytes` apart (at least width x channels). The caller deletes the
 * result. */
MgdPipelineResult* MgdPipelineProcess(MgdPipeline* pipeline, const uint8_t* pixels, int32_t width, int32_t height,
                                      int32_t channels, size_t row_bytes);
/* A frame already on the GPU: `buffer` (mgd/c_api.h, layout
 * kMgdGpuLayoutBhwc) holds the 8-bit pixels, rows packed (width x channels
 * bytes a row), on the device of the pipeline's GPU delegate (Vulkan: a
 * VkBuffer of its interop device or memory from an fd; GL: a buffer of a
 * context sharing its objects). The graphs read it in place, no upload; do
 * not write it until the call returns. It stays bound to the graphs for the
 * frame's size, so that the next frame in the same buffer binds nothing
 * again: keep it alive while the pipeline lives, or until a frame of that
 * size comes from host memory or another buffer. */
MgdPipelineResult* MgdPipelineProcessGpuBuffer(MgdPipeline* pipeline, const MgdGpuBuffer* buffer, int32_t width,
                                               int32_t height, int32_t channels);
/* A PNG or JPEG file as a frame. */
MgdPipelineResult* MgdPipelineProcessFile(MgdPipeline* pipeline, const char* path);
/* Forget the tracked objects: the next frame runs the detector. */
MgdStatus MgdPipelineResetTracking(MgdPipeline* pipeline);

/* One detected or tracked object, in image pixels. The arrays belong to the
 * result. */
typedef struct MgdPipelineDetection {
  float score;          /* the detector's score, or the landmark model's presence */
  float box[4];         /* x, y, width, height */
  int32_t num_keypoints;
  const float* keypoints; /* x, y per keypoint (the detector's; none when tracked) */
  int32_t num_landmarks;
  const float* landmarks;  /* x, y, z per landmark */
  const float* visibility; /* per landmark, or NULL (pose has it) */
  const char* label;       /* handedness ("left", "right"), or "" */
  float label_score;
} MgdPipelineDetection;

int32_t MgdPipelineResultDetectionCount(const MgdPipelineResult* result);
MgdStatus MgdPipelineResultGetDetection(const MgdPipelineResult* result, int32_t index, MgdPipelineDetection* detection);
/* The segmentation mask over the image (probabilities, row-major, width x
 * height), or NULL where the solution has none (pose, selfie have one). */
const float* MgdPipelineResultMask(const MgdPipelineResult* result, int32_t* width, int32_t* height);
/* GPU submissions the frame took; whether the detector ran (0: tracked). */
int32_t MgdPipelineResultSubmissions(const MgdPipelineResult* result);
/* Milliseconds the frame's graph invokes took (uploads, the GPU, downloads);
 * the rest of the call is the host's part (tracking, reading results). */
double MgdPipelineResultInvokeMilliseconds(const MgdPipelineResult* result);
int32_t MgdPipelineResultDetectorRan(const MgdPipelineResult* result);
void MgdPipelineResultDelete(MgdPipelineResult* result);

/* The landmarks the solution joins with lines in pictures (the hand and
 * pose skeletons): `*pairs` points at 2 x the returned count landmark
 * indices, owned by the pipeline; 0 where it joins none. */
int32_t MgdPipelineGetConnections(const MgdPipeline* pipeline, const int32_t** pairs);

/* 8-bit images, as apps around a pipeline read and save frames. */
typedef struct MgdImage {
  int32_t width, height;
  int32_t channels; /* 3 (RGB) or 4 (RGBA) */
  uint8_t* pixels;  /* rows top to bottom, packed (width x channels bytes) */
} MgdImage;

/* A PNG or JPEG file (told apart by its first bytes) as RGB, or RGBA where
 * it has alpha; NULL (reported, naming the file and what is wrong) when it
 * cannot be read. */
MgdImage* MgdImageReadFile(const char* path, MgdErrorReporter reporter, void* reporter_data);
/* `image` as a PNG file; kMgdError (reported) when it cannot be written. */
MgdStatus MgdImageWritePng(const MgdImage* image, const char* path, MgdErrorReporter reporter, void* reporter_data);
void MgdImageDelete(MgdImage* image);

#ifdef __cplusplus
}
#endif

#endif /* MGD_PIPELINE_H_ */
