// Standard image-classification architectures with deterministic pseudo-random
// weights, for `mgd modelgen` and tests: models of a known, published shape
// that need no download and can be regenerated bit for bit from a seed.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd {

// MobileNet v1 or v2 (version 1 or 2), width multiplier 1.0, input
// [1,224,224,3] float32, output [1,1001] softmax, as the TFLite hosted models
// (batch norm folded into conv bias, RELU6 fused). With `fp16_weights`, every
// weight and bias is a FLOAT16 constant behind a DEQUANTIZE node, as
// MediaPipe's models store them. Any other version is InvalidArgument.
absl::StatusOr<Graph> BuildMobileNet(int version, uint64_t seed, bool fp16_weights);
// A generated model in full-integer int8 (float input and outputs), as mgd
// quantize makes it, calibrated on 8 random inputs in [-1, 1) drawn from
// `seed`: modelgen --int8.
absl::StatusOr<Graph> QuantizedMobileNet(const Graph& graph, uint64_t seed);
// EfficientNet-Lite0: an image [1,224,224,3] in, a softmax [1,1000] out.
absl::StatusOr<Graph> BuildEfficientNetLite0(uint64_t seed);

// A small convolutional network, input [1,32,32,8] float32, with a planted
// fp16-hostile layer: a large offset added and taken away again, which fp16
// storage cannot hold beside the signal (the test case of `mgd check`).
absl::StatusOr<Graph> BuildFp16Trap(uint64_t seed);
// A head whose partial sums are large and cancel: fp16 arithmetic loses its
// answer, fp16 storage does not (for the accuracy guard, mgd tune --accuracy).
absl::StatusOr<Graph> BuildFp16SumTrap(uint64_t seed);

// BERT-Tiny: int32 token ids [1,128] in, the sequence output [1,128,128]
// out (modelgen_transformer.cc).
absl::StatusOr<Graph> BuildBertTiny(uint64_t seed);
// ViT-Tiny/16 at 224: an image [1,224,224,3] in, 1000 logits [1,1000] out.
absl::StatusOr<Graph> BuildVitTiny(uint64_t seed);
// MobileViT-XXS at 256: an image [1,256,256,3] in, 1000 logits [1,1000] out.
absl::StatusOr<Graph> BuildMobileVitXxs(uint64_t seed);
// YOLOv8n at 320: an image [1,320,320,3] in, detections [1,84,2100] out
// (centre x, centre y, width, height in pixels, then 80 class scores, per
// anchor; modelgen_yolo.cc).
absl::StatusOr<Graph> BuildYoloNano(uint64_t seed);
// An LSTM keyword spotter: 49 frames of 10 MFCC features [1,49,10] in, 12
// class probabilities [1,12] out (modelgen_lstm.cc).
absl::StatusOr<Graph> BuildLstmKws(uint64_t seed);
// lstm_kws with each LSTM written out as one step of FULLY_CONNECTED,
// ADD, LOGISTIC, TANH and MUL per frame and the same weights: the
// same function without variable tensors, for runtimes that lack them
// (LiteRT.js, which makes lstm_kws's reference outputs from it).
absl::StatusOr<Graph> BuildLstmKwsUnrolled(uint64_t seed);

}  // namespace mgd
