// Whole pipelines: an image in, detections in image pixels out, as
// MediaPipe's solutions compute them. A pipeline is one graph: the image
// (8-bit, as the app has it) -> MgdImageToTensor -> the model ->
// MgdDecodeDetections -> MgdNonMaxSuppression (ops/pipeline/), which a GPU
// delegate runs as one partition: one upload of the image, one submission,
// a few KB of detections back.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/interpreter.h"
#include "pipeline/image.h"
#include "pipeline/solutions.h"

namespace mgd::pipeline {

struct Detection {
  float score = 0.0f;
  std::array<float, 4> box{};  // x, y, width, height in image pixels
  std::vector<std::array<float, 2>> keypoints;
};

struct Result {
  std::vector<Detection> detections;
  double invoke_ms = 0.0;  // the graph's invoke (upload, GPU, download)
};

struct PipelineOptions {
  std::string models_dir;             // where the solution's .tflite files are
  std::vector<Delegate*> delegates;   // not owned; none: the CPU
  Logger logger;                      // the interpreter's (null: warnings to stderr)
};

class Pipeline {
 public:
  // `solution`: a name SolutionNames() lists.
  static absl::StatusOr<std::unique_ptr<Pipeline>> Create(const std::string& solution, PipelineOptions options);

  // Detections in `image`. The first image of each size prepares the graph
  // for that size (the delegate's cache makes later ones cheap).
  absl::StatusOr<Result> Process(const Image& image);

  const DetectorSpec& spec() const { return spec_; }
  // The interpreter of the last image's size (placements, timings).
  const Interpreter* interpreter() const { return current_; }

 private:
  Pipeline(DetectorSpec spec, Graph model, PipelineOptions options)
      : spec_(std::move(spec)), model_(std::move(model)), options_(std::move(options)) {}

  absl::StatusOr<Interpreter*> InterpreterFor(const Image& image);

  DetectorSpec spec_;
  Graph model_;
  std::vector<float> anchors_;
  PipelineOptions options_;
  std::map<std::array<int, 3>, std::unique_ptr<Interpreter>> interpreters_;  // by width, height, channels
  Interpreter* current_ = nullptr;
};

// The detector's graph for images of `width` x `height` x `channels`:
// input 0 the image (uint8), output 0 [1, max_detections, row] rows of
// ops/pipeline's NMS (image pixels).
absl::StatusOr<Graph> DetectorGraph(const Graph& model, const DetectorSpec& spec, const std::vector<float>& anchors,
                                    int width, int height, int channels);

}  // namespace mgd::pipeline
