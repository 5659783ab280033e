// A YOLOv8n-style detector for `mgd modelgen yolo_nano`, written as a TFLite
// export of it reads: SiLU as LOGISTIC and MUL, C2f blocks by SPLIT and
// CONCATENATION, the SPPF max-pool pyramid, RESIZE_NEAREST_NEIGHBOR in the
// neck, and the head's decoding (distribution focal loss as SOFTMAX and a
// FULLY_CONNECTED against 0..15, boxes from anchors) inside the model, its
// output [1, 84, anchors] as Ultralytics' exports give it.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ops/resize/resize.h"
#include "ops/split/split.h"
#include "tools/mgd/modelgen.h"
#include "tools/mgd/modelgen_builder.h"

namespace mgd {
namespace {

using modelgen::Builder;

// YOLOv8's blocks on the builder; Ultralytics' Conv (a convolution with
// batch norm folded into its bias, then SiLU) is Builder::ConvSilu.
class Yolo {
 public:
  explicit Yolo(Builder& b) : b_(b) {}

  // SPLIT into `parts` equal pieces along the last axis.
  std::vector<int> Split(const std::string& name, int x, int parts) {
    Shape piece = b_.Dims(x);
    piece.back() /= parts;
    std::vector<int> outputs;
    for (int i = 0; i < parts; ++i) outputs.push_back(b_.AddTensor(fmt::format("{}:{}", name, i), piece));
    b_.AddNode(OpKind::kSplit, ops::SplitAttributes{parts}, {b_.Ints(name + "/axis", {-1}), x}, outputs);
    return outputs;
  }

  // SPLIT_V into pieces of `sizes` along the last axis.
  std::vector<int> SplitV(const std::string& name, int x, const std::vector<int32_t>& sizes) {
    std::vector<int> outputs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      Shape piece = b_.Dims(x);
      piece.back() = sizes[i];
      outputs.push_back(b_.AddTensor(fmt::format("{}:{}", name, i), piece));
    }
    b_.AddNode(OpKind::kSplitV, ops::SplitAttributes{static_cast<int32_t>(sizes.size())},
               {x, b_.Ints(name + "/size_splits", sizes), b_.Ints(name + "/axis", {-1})}, outputs);
    return outputs;
  }

  // C2f: a 1x1 conv to 2c channels split in two, n bottlenecks (two 3x3
  // convs, a residual when `shortcut`) each on the last piece, and a 1x1
  // conv over all pieces.
  int C2f(const std::string& scope, int x, int channels, int n, bool shortcut) {
    const int c = channels / 2;
    std::vector<int> pieces = Split(scope + "/split", b_.ConvSilu(scope + "/cv1", x, 2 * c, 1, 1), 2);
    for (int i = 0; i < n; ++i) {
      const std::string m = fmt::format("{}/m.{}", scope, i);
      const int y = b_.ConvSilu(m + "/cv2", b_.ConvSilu(m + "/cv1", pieces.back(), c, 3, 1), c, 3, 1);
      pieces.push_back(shortcut ? b_.Elementwise(OpKind::kAdd, m + "/add", pieces.back(), y) : y);
    }
    return b_.ConvSilu(scope + "/cv2", b_.Concat(scope + "/concat", pieces, 3), channels, 1, 1);
  }

  // SPPF: a 1x1 conv to half, three chained 5x5 stride-1 max pools, and a
  // 1x1 conv over the four.
  int Sppf(const std::string& scope, int x, int channels) {
    std::vector<int> pyramid{b_.ConvSilu(scope + "/cv1", x, b_.Dims(x)[3] / 2, 1, 1)};
    ops::PoolAttributes pool;
    pool.filter_h = pool.filter_w = 5;
    for (int i = 0; i < 3; ++i) {
      pyramid.push_back(b_.Node(OpKind::kMaxPool2d, pool, {pyramid.back()}, fmt::format("{}/m_{}", scope, i),
                                b_.Dims(pyramid.back())));
    }
    return b_.ConvSilu(scope + "/cv2", b_.Concat(scope + "/concat", pyramid, 3), channels, 1, 1);
  }

  int Upsample(const std::string& name, int x) {
    Shape shape = b_.Dims(x);
    shape[1] *= 2;
    shape[2] *= 2;
    return b_.Node(OpKind::kResizeNearestNeighbor, ops::ResizeAttributes{}, {x, b_.Ints(name + "/size", {shape[1], shape[2]})},
                   name, shape);
  }

 private:
  Builder& b_;
};

}  // namespace

absl::StatusOr<Graph> BuildYoloNano(uint64_t seed) {
  // YOLOv8n (Ultralytics yolov8.yaml at scale n: depth 0.33, width 0.25) at
  // 320x320, 80 classes, 16 distribution bins per box side.
  constexpr int kSize = 320, kClasses = 80, kBins = 16;
  Builder b(seed, false);
  Yolo y(b);
  int x = b.Input("images", {1, kSize, kSize, 3});
  x = b.ConvSilu("model.0", x, 16, 3, 2);
  x = b.ConvSilu("model.1", x, 32, 3, 2);
  x = y.C2f("model.2", x, 32, 1, true);
  x = b.ConvSilu("model.3", x, 64, 3, 2);
  const int p3 = y.C2f("model.4", x, 64, 2, true);
  x = b.ConvSilu("model.5", p3, 128, 3, 2);
  const int p4 = y.C2f("model.6", x, 128, 2, true);
  x = b.ConvSilu("model.7", p4, 256, 3, 2);
  x = y.C2f("model.8", x, 256, 1, true);
  const int p5 = y.Sppf("model.9", x, 256);
  const int n4 = y.C2f("model.12", b.Concat("model.11", {y.Upsample("model.10", p5), p4}, 3), 128, 1, false);
  const int small = y.C2f("model.15", b.Concat("model.14", {y.Upsample("model.13", n4), p3}, 3), 64, 1, false);
  const int medium = y.C2f("model.18", b.Concat("model.17", {b.ConvSilu("model.16", small, 64, 3, 2), n4}, 3), 128, 1, false);
  const int large = y.C2f("model.21", b.Concat("model.20", {b.ConvSilu("model.19", medium, 128, 3, 2), p5}, 3), 256, 1, false);

  // Detect: per level a box branch (two 3x3 convs of 64, a 1x1 conv to
  // 4 x 16 bins) and a class branch (two 3x3 convs of 80, a 1x1 conv to
  // 80 logits), concatenated and flattened to [1, H*W, 144]; the levels
  // concatenated along the anchors. Anchors lie at cell centres, in cells.
  std::vector<int> levels;
  std::vector<float> anchors, strides;
  const int level_inputs[] = {small, medium, large};
  for (int i = 0; i < 3; ++i) {
    const std::string d = fmt::format("model.22/level{}", i);
    const int in = level_inputs[i];
    int box = b.ConvSilu(d + "/cv2.0", in, 64, 3, 1);
    box = b.Conv2d(d + "/cv2.2", b.ConvSilu(d + "/cv2.1", box, 64, 3, 1), 4 * kBins, 1, 1, Activation::kNone);
    int cls = b.ConvSilu(d + "/cv3.0", in, kClasses, 3, 1);
    cls = b.Conv2d(d + "/cv3.2", b.ConvSilu(d + "/cv3.1", cls, kClasses, 3, 1), kClasses, 1, 1, Activation::kNone);
    const Shape s = b.Dims(box);
    levels.push_back(b.Reshape(d + "/Reshape", b.Concat(d + "/concat", {box, cls}, 3), {1, s[1] * s[2], 4 * kBins + kClasses}));
    for (int row = 0; row < s[1]; ++row) {
      for (int col = 0; col < s[2]; ++col) {
        anchors.push_back(static_cast<float>(col) + 0.5f);
        anchors.push_back(static_cast<float>(row) + 0.5f);
        strides.push_back(static_cast<float>(kSize / s[1]));
      }
    }
  }
  const int count = static_cast<int>(strides.size());
  const std::vector<int> parts = y.SplitV("model.22/split", b.Concat("model.22/concat", levels, 1), {4 * kBins, kClasses});
  // Distribution focal loss: each side's distance is the expectation of a
  // softmax over 16 bins, a FULLY_CONNECTED against 0..15.
  const int bins = b.Reshape("model.22/dfl/Reshape", parts[0], {1, count, 4, kBins});
  const int probs = b.Node(OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {bins}, "model.22/dfl/Softmax", b.Dims(bins));
  std::vector<float> positions(kBins);
  for (int i = 0; i < kBins; ++i) positions[static_cast<size_t>(i)] = static_cast<float>(i);
  const int expectation = b.Node(OpKind::kFullyConnected, ops::FullyConnectedAttributes{Activation::kNone, true},
                                 {probs, b.FloatConstant("model.22/dfl/conv/weight", {1, kBins}, positions),
                                  b.FloatConstant("model.22/dfl/conv/bias", {1}, {0.0f})},
                                 "model.22/dfl/conv", {1, count, 4, 1});
  const std::vector<int> sides = y.Split("model.22/dist", b.Reshape("model.22/dfl/Reshape_1", expectation, {1, count, 4}), 2);
  // Left-top and right-bottom distances from the anchor to centre and size,
  // in pixels.
  const int anchor = b.FloatConstant("model.22/anchors", {1, count, 2}, anchors);
  const int top_left = b.Elementwise(OpKind::kSub, "model.22/sub", anchor, sides[0]);
  const int bottom_right = b.Elementwise(OpKind::kAdd, "model.22/add", anchor, sides[1]);
  const int centre = b.Elementwise(OpKind::kMul, "model.22/mul", b.Elementwise(OpKind::kAdd, "model.22/add_1", top_left, bottom_right),
                                   b.FloatConstant("model.22/half", {1}, {0.5f}));
  const int size = b.Elementwise(OpKind::kSub, "model.22/sub_1", bottom_right, top_left);
  const int boxes = b.Elementwise(OpKind::kMul, "model.22/mul_1", b.Concat("model.22/concat_1", {centre, size}, 2),
                                  b.FloatConstant("model.22/strides", {1, count, 1}, strides));
  const int scores = b.Node(OpKind::kLogistic, {}, {parts[1]}, "model.22/Sigmoid", b.Dims(parts[1]));
  const int detections = b.Concat("model.22/concat_2", {boxes, scores}, 2);
  b.Output(b.Node(OpKind::kTranspose, {}, {detections, b.Ints("model.22/perm", {0, 2, 1})}, "output0",
                  {1, 4 + kClasses, count}));
  return b.Finish("mgd modelgen yolo_nano");
}

}  // namespace mgd
