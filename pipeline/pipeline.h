// Whole pipelines: an image in, detections, landmarks and masks in image
// pixels out, as MediaPipe's solutions compute them. Each stage is one
// graph (pipeline/graphs.h) that a GPU delegate runs as one partition: one
// upload of the 8-bit image, one submission, a few KB back.
//   detector:  image -> MgdImageToTensor -> the model -> MgdDecodeDetections
//              -> MgdNonMaxSuppression (ops/pipeline/)
//   landmarks: image, crop matrix -> MgdImageToTensor -> the model ->
//              TransformLandmarks (image pixels), the mask resampled over
//              the image (pose)
//   segmenter: image -> MgdImageToTensor -> the model -> the mask over the
//              image (selfie)
// With landmarks, a frame's landmarks give the next frame's crops
// (MediaPipe's tracking): the detector runs on the first frame, when an
// object is lost and, for hands, while fewer than two are tracked, so that
// a tracked frame is one submission per object.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/gpu_interop.h"
#include "interpreter/interpreter.h"
#include "pipeline/geometry.h"
#include "pipeline/graphs.h"
#include "pipeline/image.h"
#include "pipeline/solutions.h"

namespace mgd::pipeline {

struct Detection {
  float score = 0.0f;          // the detector's, or the landmark model's presence
  std::array<float, 4> box{};  // x, y, width, height in image pixels
  std::vector<std::array<float, 2>> keypoints;   // the detector's (none when tracked)
  std::vector<std::array<float, 3>> landmarks;   // x, y in image pixels, z at the same scale
  std::vector<float> visibility;                 // per landmark, where the model gives it (pose)
  std::string label;                             // handedness ("left"/"right", as MediaPipe labels a mirrored image)
  float label_score = 0.0f;
};

// A landmark at least this visible counts as in the picture (MediaPipe's
// drawing utilities' threshold).
inline constexpr float kMinVisibility = 0.5f;

// A segmentation over the image: per pixel, the probability of the
// foreground (person).
struct Mask {
  int width = 0, height = 0;
  std::vector<float> values;  // row-major, width x height
};

// What a person would want to know of a mask: how much of the image it
// covers (probability >= 0.5), where (x, y, width, height; zeros when
// empty) and its mean probability.
struct MaskSummary {
  float coverage = 0.0f;
  std::array<float, 4> box{};
  float mean = 0.0f;
};
MaskSummary Summarize(const Mask& mask);

struct Result {
  std::vector<Detection> detections;
  std::optional<Mask> mask;    // selfie; pose (the first person's)
  bool detector_ran = false;   // false: the landmarks came from the previous frame's crops
  int submissions = 0;         // GPU submissions (graph invokes) this frame took
  double invoke_ms = 0.0;      // the graphs' invokes (uploads, GPU, downloads)
  std::optional<double> gpu_ms;  // their time on the GPU (PipelineOptions::measure_timing)
};

// A frame in an app's GPU buffer (base/gpu_interop.h) on the device of the
// pipeline's GPU delegate: 8-bit RGB or RGBA pixels, rows packed (width x
// channels bytes a row; the buffer's `bytes` at least that times height,
// rounded up to 4). The graphs read it in place: no upload.
struct GpuImage {
  int width = 0, height = 0, channels = 0;
  GpuBuffer buffer;
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
  // The same for a frame already on the GPU: each stage binds the buffer
  // to its image input (Interpreter::BindBuffer) instead of copying pixels.
  // The app must not write the buffer until Process returns.
  absl::StatusOr<Result> Process(const GpuImage& image);
  // Forget the tracked objects: the next frame runs the detector.
  void ResetTracking() { tracked_.clear(); }

  // The graphs Process runs for images like `image`, by stage name
  // ("detector", "landmarks", "segmenter"): to inspect, dump or bench them
  // as models.
  absl::StatusOr<std::vector<std::pair<std::string, Graph>>> Graphs(const Image& image) const;

  const SolutionSpec& spec() const { return spec_; }
  // The first stage's interpreter (detector or segmenter) of the last
  // image's size, and the landmark model's (placements).
  const Interpreter* interpreter() const { return current_; }
  const Interpreter* landmark_interpreter() const { return current_landmarks_; }
  // How many graphs are prepared (kept for the next frames of their size).
  size_t prepared_graphs() const { return interpreters_.size(); }
  static constexpr size_t kMaxPrepared = 8;

 private:
  enum class Stage { kDetector, kLandmarks, kSegmenter };
  Pipeline(SolutionSpec spec, PipelineOptions options) : spec_(std::move(spec)), options_(std::move(options)) {}

  using Key = std::array<int, 3>;  // width, height, channels
  // A frame from either source: its size and its pixels or its buffer.
  struct Frame {
    Key size{};
    const uint8_t* pixels = nullptr;
    const GpuBuffer* buffer = nullptr;
  };
  absl::StatusOr<Result> Run(const Frame& frame);
  // `copies`: the landmark model's, one per crop run together.
  absl::StatusOr<Graph> StageGraph(Stage stage, const Key& size, int copies = 1) const;
  absl::StatusOr<Interpreter*> Make(Stage stage, const Key& size, int copies = 1);
  // The frame into `interpreter`'s image input: copied, or its buffer bound.
  absl::Status Feed(Interpreter& interpreter, const Frame& frame);
  absl::StatusOr<std::vector<Detection>> Detect(const Frame& frame, Result& result);
  // The landmarks in each of `rois`, all in one submission; nothing where
  // the model sees no object.
  absl::StatusOr<std::vector<std::optional<Detection>>> Landmarks(const Frame& frame, const std::vector<Roi>& rois,
                                                                  Result& result);
  // Copy `first`'s outputs (of a landmark graph) as an object in `roi`.
  std::optional<Detection> ReadObject(const Interpreter& in, size_t first, const Roi& roi, Result& result) const;
  absl::Status Track(const Frame& frame, Result& result);
  absl::Status Segment(const Frame& frame, Result& result);
  absl::Status Invoke(Interpreter& interpreter, Result& result);

  SolutionSpec spec_;
  PipelineOptions options_;
  Graph detector_model_, landmark_model_, segmenter_model_;
  std::vector<float> anchors_;
  std::array<int, 2> landmark_mask_size_{1, 1};  // width, height of the landmark model's mask
  LandmarkOutputs landmark_outputs_;             // where each of a copy's outputs is (graphs.h)
  // The graphs prepared per stage, image size and copies, the least recently
  // used dropped past kMaxPrepared: an app that shows images of many sizes
  // (a gallery) must not keep every size's GPU memory.
  struct Prepared {
    std::unique_ptr<Interpreter> interpreter;
    uint64_t last_frame = 0;  // the frame that last used it
  };
  std::map<std::tuple<Stage, Key, int>, Prepared> interpreters_;
  uint64_t frame_ = 0;  // counts Process calls
  Interpreter* current_ = nullptr;
  Interpreter* current_landmarks_ = nullptr;
  std::map<Interpreter*, GpuBuffer> bound_;  // the app's buffer each interpreter's image input is bound to
  std::vector<Roi> tracked_;
  Key tracked_size_{};
};

}  // namespace mgd::pipeline
