// The graphs a pipeline runs: a solution's models with the app's 8-bit
// image as input and MediaPipe's pre- and post-processing as nodes
// (ops/pipeline/, ops/transform/), so that a GPU delegate runs each as one
// partition: one upload of the image, one submission, a few KB back (an
// image-sized mask where the solution segments).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"
#include "pipeline/solutions.h"

namespace mgd::pipeline {

// The detector's graph for images of `width` x `height` x `channels`:
// input 0 the image (uint8), output 0 [1, max_detections, row] rows of
// ops/pipeline's NMS (image pixels).
absl::StatusOr<Graph> DetectorGraph(const Graph& model, const DetectorSpec& spec, const std::vector<float>& anchors,
                                    int width, int height, int channels);

// Where LandmarkGraph's outputs are, by what they hold (-1: absent).
struct LandmarkOutputs {
  int landmarks = 0;        // [.., values_per_landmark x N]: x, y in image pixels, the rest as the model gives them
  std::vector<int> refinements;  // [.., 2M] each, image pixels
  int presence = -1;        // [1] as the model gives it
  int handedness = -1;      // [1]
  int mask = -1;            // [1, height, width, 1] probabilities over the image
  int count = 0;            // outputs per copy of the model
};
LandmarkOutputs LandmarkOutputOrder(const LandmarkSpec& spec);

// The landmark model's graph, `copies` crops of the image at once (one
// submission for several tracked hands): inputs the image (uint8), then
// per copy the crop matrix [1, 1, 4, 4] (CropMatrix), the projection
// [1, 4, 4] (tensor pixels to image pixels) and, where the model segments,
// the mask's matrix [1, 1, 4, 4] (image pixels to mask samples:
// InverseCropMatrix); outputs per copy as LandmarkOutputOrder says.
absl::StatusOr<Graph> LandmarkGraph(const Graph& model, const LandmarkSpec& spec, int width, int height, int channels,
                                    int copies = 1);

// The segmenter's graph: input the image (uint8), output its mask
// [1, height, width, 1] (probabilities).
absl::StatusOr<Graph> SegmenterGraph(const Graph& model, const SegmenterSpec& spec, int width, int height, int channels);

}  // namespace mgd::pipeline
