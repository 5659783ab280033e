// Whole pipelines: an image in, detections (and landmarks) in image pixels
// out, as MediaPipe's solutions compute them. Each stage is one graph that
// a GPU delegate runs as one partition: one upload of the 8-bit image, one
// submission, a few KB back.
//   detector: image -> MgdImageToTensor -> the model -> MgdDecodeDetections
//             -> MgdNonMaxSuppression (ops/pipeline/)
//   landmarks (face_mesh): image, crop matrix, projection matrix ->
//             MgdImageToTensor -> the model -> TransformLandmarks (image pixels)
// With landmarks, a frame's landmarks give the next frame's crop (MediaPipe's
// tracking): the detector runs on the first frame and when the landmark
// model loses the face, so that a tracked frame is one submission.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/interpreter.h"
#include "pipeline/geometry.h"
#include "pipeline/image.h"
#include "pipeline/solutions.h"

namespace mgd::pipeline {

struct Detection {
  float score = 0.0f;          // the detector's, or the landmark model's presence
  std::array<float, 4> box{};  // x, y, width, height in image pixels
  std::vector<std::array<float, 2>> keypoints;   // the detector's (none when tracked)
  std::vector<std::array<float, 3>> landmarks;   // x, y in image pixels, z at the same scale
};

struct Result {
  std::vector<Detection> detections;
  bool detector_ran = false;   // false: the landmarks came from the previous frame's crop
  int submissions = 0;         // GPU submissions (graph invokes) this frame took
  double invoke_ms = 0.0;      // the graphs' invokes (uploads, GPU, downloads)
  std::optional<double> gpu_ms;  // their time on the GPU (PipelineOptions::measure_timing)
};

struct PipelineOptions {
  std::string models_dir;             // where the solution's .tflite files are
  std::vector<Delegate*> delegates;   // not owned; none: the CPU
  Logger logger;                      // the interpreters' (null: warnings to stderr)
  bool measure_timing = false;        // time the GPU's part too (Result::gpu_ms)
};

class Pipeline {
 public:
  // `solution`: a name SolutionNames() lists.
  static absl::StatusOr<std::unique_ptr<Pipeline>> Create(const std::string& solution, PipelineOptions options);

  // What `image` shows. Frames of one video in order: landmarks track from
  // frame to frame. The first image of each size prepares the graphs for
  // that size (the delegate's cache makes later ones cheap).
  absl::StatusOr<Result> Process(const Image& image);
  // Forget the tracked face: the next frame runs the detector.
  void ResetTracking() { tracked_.reset(); }

  // The graphs Process runs for images like `image`, by stage name
  // ("detector", "landmarks"): to inspect, dump or bench them as models.
  absl::StatusOr<std::vector<std::pair<std::string, Graph>>> Graphs(const Image& image) const;

  const SolutionSpec& spec() const { return spec_; }
  // The detector's interpreter of the last image's size (placements).
  const Interpreter* interpreter() const { return current_; }
  const Interpreter* landmark_interpreter() const { return current_landmarks_; }

 private:
  Pipeline(SolutionSpec spec, PipelineOptions options) : spec_(std::move(spec)), options_(std::move(options)) {}

  using Key = std::array<int, 3>;  // width, height, channels
  absl::StatusOr<Interpreter*> Make(std::map<Key, std::unique_ptr<Interpreter>>& cache, const Image& image, bool landmarks);
  absl::StatusOr<std::vector<Detection>> Detect(const Image& image, Result& result);
  // The landmarks in `roi`, or nothing when the model sees no face there.
  absl::StatusOr<std::optional<Detection>> Landmarks(const Image& image, const Roi& roi, Result& result);
  absl::Status Invoke(Interpreter& interpreter, Result& result);

  SolutionSpec spec_;
  PipelineOptions options_;
  Graph detector_model_, landmark_model_;
  std::vector<float> anchors_;
  std::map<Key, std::unique_ptr<Interpreter>> detectors_, landmarkers_;
  Interpreter* current_ = nullptr;
  Interpreter* current_landmarks_ = nullptr;
  std::optional<Roi> tracked_;
  Key tracked_size_{};
};

// The detector's graph for images of `width` x `height` x `channels`:
// input 0 the image (uint8), output 0 [1, max_detections, row] rows of
// ops/pipeline's NMS (image pixels).
absl::StatusOr<Graph> DetectorGraph(const Graph& model, const DetectorSpec& spec, const std::vector<float>& anchors,
                                    int width, int height, int channels);
// The landmark model's graph: inputs the image (uint8), the crop matrix
// [1, 1, 4, 4] (CropMatrix) and the projection [1, 4, 4] (tensor pixels to
// image pixels); outputs the mesh [.., 3N] and each extra [.., 2M] in image
// pixels, then the presence logit.
absl::StatusOr<Graph> LandmarkGraph(const Graph& model, const LandmarkSpec& spec, int width, int height, int channels);

}  // namespace mgd::pipeline
