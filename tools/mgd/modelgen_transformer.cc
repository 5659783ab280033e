// Transformers for `mgd modelgen`, written as the TFLite converter writes a
// Keras model: dense layers as FULLY_CONNECTED with keep_num_dims, heads by
// RESHAPE and TRANSPOSE, attention as BATCH_MATMUL and SOFTMAX, layer
// normalization as MEAN, SQUARED_DIFFERENCE, RSQRT, MUL and ADD, GELU as
// its own op, embeddings as GATHER.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ops/gather/gather.h"
#include "ops/matmul/batch_matmul.h"
#include "ops/movement/movement.h"
#include "ops/reduce/reduce.h"
#include "tools/mgd/modelgen.h"
#include "tools/mgd/modelgen_builder.h"

namespace mgd {
namespace {

using modelgen::Builder;

class Transformer {
 public:
  explicit Transformer(Builder& b) : b_(b) {}

  // keras Dense on the last axis: FULLY_CONNECTED, kernel [units, in].
  int Dense(const std::string& scope, int x, int units) { return b_.FullyConnected(scope, x, units, true); }

  int Scalar(const std::string& name, float value) { return b_.FloatConstant(name, {1}, {value}); }

  // (x - mean) * rsqrt(variance + epsilon) * gamma + beta over the last axis.
  int LayerNorm(const std::string& scope, int x, float epsilon = 1e-12f) {
    Shape reduced = b_.Dims(x);
    const int width = reduced.back();
    reduced.back() = 1;
    const int axis = b_.Ints(scope + "/axis", {static_cast<int32_t>(reduced.size()) - 1});
    const int mean = b_.Node(OpKind::kMean, ops::ReducerAttributes{true}, {x, axis}, scope + "/mean", reduced);
    const int squares = b_.Elementwise(OpKind::kSquaredDifference, scope + "/SquaredDifference", x, mean);
    const int variance = b_.Node(OpKind::kMean, ops::ReducerAttributes{true}, {squares, axis}, scope + "/variance", reduced);
    const int shifted = b_.Elementwise(OpKind::kAdd, scope + "/add", variance, Scalar(scope + "/epsilon", epsilon));
    const int scale = b_.Node(OpKind::kRsqrt, {}, {shifted}, scope + "/Rsqrt", reduced);
    const int centered = b_.Elementwise(OpKind::kSub, scope + "/sub", x, mean);
    const int normalized = b_.Elementwise(OpKind::kMul, scope + "/mul", centered, scale);
    std::vector<float> gamma, beta;
    for (int i = 0; i < width; ++i) gamma.push_back(1.0f + 0.1f * b_.Uniform());
    for (int i = 0; i < width; ++i) beta.push_back(0.1f * b_.Uniform());
    const int scaled = b_.Elementwise(OpKind::kMul, scope + "/mul_1", normalized, b_.FloatConstant(scope + "/gamma", {width}, gamma));
    return b_.Elementwise(OpKind::kAdd, scope + "/add_1", scaled, b_.FloatConstant(scope + "/beta", {width}, beta));
  }


  // [1, S, heads * size] <-> [1, heads, S, size].
  int SplitHeads(const std::string& name, int x, int heads) {
    const Shape s = b_.Dims(x);
    const int r = b_.Reshape(name + "/Reshape", x, {s[0], s[1], heads, s[2] / heads});
    return b_.Node(OpKind::kTranspose, {}, {r, b_.Ints(name + "/perm", {0, 2, 1, 3})}, name + "/transpose", {s[0], heads, s[1], s[2] / heads});
  }
  int MergeHeads(const std::string& name, int x) {
    const Shape s = b_.Dims(x);
    const int t = b_.Node(OpKind::kTranspose, {}, {x, b_.Ints(name + "/perm", {0, 2, 1, 3})}, name + "/transpose", {s[0], s[2], s[1], s[3]});
    return b_.Reshape(name + "/Reshape", t, {s[0], s[2], s[1] * s[3]});
  }

  int Attention(const std::string& scope, int x, int heads) {
    const int width = b_.Dims(x).back();
    const int q = SplitHeads(scope + "/query", Dense(scope + "/query", x, width), heads);
    const int k = SplitHeads(scope + "/key", Dense(scope + "/key", x, width), heads);
    const int v = SplitHeads(scope + "/value", Dense(scope + "/value", x, width), heads);
    const Shape qs = b_.Dims(q);
    const int scaled = b_.Elementwise(OpKind::kMul, scope + "/Mul", q, Scalar(scope + "/scale", 1.0f / std::sqrt(static_cast<float>(qs[3]))));
    const Shape score_shape = {qs[0], qs[1], qs[2], qs[2]};
    const int scores = b_.Node(OpKind::kBatchMatmul, ops::BatchMatmulAttributes{false, true}, {scaled, k}, scope + "/MatMul", score_shape);
    const int probs = b_.Node(OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {scores}, scope + "/Softmax", score_shape);
    const int context = b_.Node(OpKind::kBatchMatmul, {}, {probs, v}, scope + "/MatMul_1", qs);
    return Dense(scope + "/output", MergeHeads(scope + "/context", context), width);
  }

  // Dense, GELU (or SiLU, as MobileViT's), dense back to the input's width.
  int FeedForward(const std::string& scope, int x, int ffn, bool silu = false) {
    const int hidden = Dense(scope + "/intermediate", x, ffn);
    const int activated = silu ? b_.Silu(scope + "/intermediate/silu", hidden)
                               : b_.Node(OpKind::kGelu, ops::GeluAttributes{false}, {hidden}, scope + "/intermediate/Gelu",
                                         b_.Dims(hidden));
    return Dense(scope + "/output", activated, b_.Dims(x).back());
  }

  // Pre-norm ViT layer: x + attention(norm(x)), then x + feed-forward(norm(x)).
  int PreNormLayer(const std::string& scope, int x, int heads, int ffn, bool silu = false) {
    const int attended = b_.Elementwise(OpKind::kAdd, scope + "/attention/add",
                                     Attention(scope + "/attention", LayerNorm(scope + "/LayerNorm_0", x, 1e-6f), heads), x);
    return b_.Elementwise(OpKind::kAdd, scope + "/output/add",
                       FeedForward(scope + "/mlp", LayerNorm(scope + "/LayerNorm_1", attended, 1e-6f), ffn, silu), attended);
  }

  int Transpose(const std::string& name, int x, const std::vector<int32_t>& perm) {
    const Shape in = b_.Dims(x);
    Shape out;
    for (int32_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
    return b_.Node(OpKind::kTranspose, {}, {x, b_.Ints(name + "/perm", perm)}, name, out);
  }

  // MobileViT's unfolding of [1, H, W, d] into its 2x2 patches' pixels,
  // [4, H/2 * W/2, d] (pixel position in the patch, patch, feature), by
  // RESHAPE and TRANSPOSE as PyTorch exports write it, within rank 4; Fold
  // inverts it.
  int Unfold(const std::string& name, int x) {
    const Shape s = b_.Dims(x);
    const int h = s[1] / 2, w = s[2] / 2, d = s[3];
    int y = b_.Reshape(name + "/Reshape", x, {h, 2, w, 2 * d});
    y = Transpose(name + "/transpose", y, {1, 0, 2, 3});  // [2, h, w, 2d]
    y = b_.Reshape(name + "/Reshape_1", y, {2, h * w, 2, d});
    y = Transpose(name + "/transpose_1", y, {0, 2, 1, 3});  // [2, 2, hw, d]
    return b_.Reshape(name + "/Reshape_2", y, {4, h * w, d});
  }
  int Fold(const std::string& name, int x, int height, int width) {
    const Shape s = b_.Dims(x);
    const int h = height / 2, w = width / 2, d = s[2];
    int y = b_.Reshape(name + "/Reshape", x, {2, 2, h * w, d});
    y = Transpose(name + "/transpose", y, {0, 2, 1, 3});  // [2, hw, 2, d]
    y = b_.Reshape(name + "/Reshape_1", y, {2, h, w, 2 * d});
    y = Transpose(name + "/transpose_1", y, {1, 0, 2, 3});  // [h, 2, w, 2d]
    return b_.Reshape(name + "/Reshape_2", y, {1, height, width, d});
  }

  // MobileNetV2's inverted residual with SiLU: expand 1x1, depthwise 3x3,
  // linear project 1x1, a residual ADD when the shape is kept.
  int InvertedResidual(const std::string& scope, int x, int channels, int stride, int expansion) {
    const int in = b_.Dims(x)[3];
    int y = b_.ConvSilu(scope + "/exp_1x1", x, in * expansion, 1, 1);
    y = b_.Silu(scope + "/conv_3x3/act", b_.Depthwise(scope + "/conv_3x3", y, stride, Activation::kNone));
    y = b_.Conv2d(scope + "/red_1x1", y, channels, 1, 1, Activation::kNone);
    return stride == 1 && in == channels ? b_.Elementwise(OpKind::kAdd, scope + "/add", x, y) : y;
  }

  // The MobileViT block (Mehta and Rastegari 2021): a 3x3 and a 1x1 conv to
  // width d, `layers` pre-norm transformer layers over the unfolded 2x2
  // patches (attention among the patches at each pixel position), a norm,
  // the fold, a 1x1 conv back to C, and a 3x3 conv fusing it with the input.
  int MobileVitBlock(const std::string& scope, int x, int d, int layers, int heads) {
    const Shape s = b_.Dims(x);
    int y = b_.ConvSilu(scope + "/local_rep/conv_3x3", x, s[3], 3, 1);
    y = b_.Conv2d(scope + "/local_rep/conv_1x1", y, d, 1, 1, Activation::kNone);
    y = Unfold(scope + "/unfold", y);
    for (int i = 0; i < layers; ++i) y = PreNormLayer(fmt::format("{}/global_rep/{}", scope, i), y, heads, 2 * d, true);
    y = Fold(scope + "/fold", LayerNorm(scope + "/global_rep/norm", y, 1e-5f), s[1], s[2]);
    y = b_.ConvSilu(scope + "/conv_proj", y, s[3], 1, 1);
    return b_.ConvSilu(scope + "/fusion", b_.Concat(scope + "/concat", {x, y}, 3), s[3], 3, 1);
  }

  // Post-norm BERT layer: attention, add, norm; GELU feed-forward, add, norm.
  int EncoderLayer(const std::string& scope, int x, int heads, int ffn) {
    const int attended = LayerNorm(scope + "/attention/LayerNorm",
                                   b_.Elementwise(OpKind::kAdd, scope + "/attention/add", Attention(scope + "/attention", x, heads), x));
    const int out = FeedForward(scope, attended, ffn);
    return LayerNorm(scope + "/output/LayerNorm", b_.Elementwise(OpKind::kAdd, scope + "/output/add", out, attended));
  }

 private:
  Builder& b_;
};

}  // namespace

absl::StatusOr<Graph> BuildMobileVitXxs(uint64_t seed) {
  // MobileViT-XXS (Mehta and Rastegari 2021, ml-cvnets' xx_small: inverted
  // residuals of expansion 2, transformer widths 64/80/96 with 2/4/3
  // layers of 4 heads, feed-forward 2x, 2x2 patches) at 256x256; the head
  // is a 1x1 conv to 320, global average pooling and 1000 logits.
  Builder b(seed, false);
  Transformer t(b);
  int x = b.Input("input", {1, 256, 256, 3});
  x = b.ConvSilu("conv_1", x, 16, 3, 2);
  x = t.InvertedResidual("layer_1/0", x, 16, 1, 2);
  x = t.InvertedResidual("layer_2/0", x, 24, 2, 2);
  x = t.InvertedResidual("layer_2/1", x, 24, 1, 2);
  x = t.InvertedResidual("layer_2/2", x, 24, 1, 2);
  constexpr struct { int channels, d, layers; } kStages[] = {{48, 64, 2}, {64, 80, 4}, {80, 96, 3}};
  int stage = 3;
  for (const auto& s : kStages) {
    const std::string scope = fmt::format("layer_{}", stage++);
    x = t.InvertedResidual(scope + "/0", x, s.channels, 2, 2);
    x = t.MobileVitBlock(scope + "/1", x, s.d, s.layers, 4);
  }
  x = b.ConvSilu("conv_1x1_exp", x, 320, 1, 1);
  x = b.SpatialMean("classifier/global_pool", x);
  b.Output(b.FullyConnected("classifier/fc", x, 1000));
  return b.Finish("mgd modelgen mobilevit_xxs");
}

absl::StatusOr<Graph> BuildBertTiny(uint64_t seed) {
  // BERT-Tiny (Turc et al. 2019): 2 layers, hidden 128, 2 heads, feed-forward
  // 512, BERT's 30522-token vocabulary; 128 token ids in, the sequence
  // output [1, 128, 128] out.
  constexpr int kVocabulary = 30522, kLength = 128, kHidden = 128, kHeads = 2, kFeedForward = 512, kLayers = 2;
  Builder b(seed, false);
  Transformer t(b);
  const int ids = b.Input("input_ids", {1, kLength});
  b.graph().tensors[static_cast<size_t>(ids)].type = DataType::kInt32;
  std::vector<float> table(static_cast<size_t>(kVocabulary) * kHidden), positions(static_cast<size_t>(kLength) * kHidden);
  for (float& v : table) v = 0.05f * b.Uniform();
  for (float& v : positions) v = 0.05f * b.Uniform();  // position and token type 0 embeddings, summed
  const int words = b.Node(OpKind::kGather, ops::GatherAttributes{}, {b.FloatConstant("embeddings/word_embeddings", {kVocabulary, kHidden}, table), ids},
                           "embeddings/Gather", {1, kLength, kHidden});
  int x = b.Elementwise(OpKind::kAdd, "embeddings/add", words, b.FloatConstant("embeddings/position_embeddings", {1, kLength, kHidden}, positions));
  x = t.LayerNorm("embeddings/LayerNorm", x);
  for (int layer = 0; layer < kLayers; ++layer) x = t.EncoderLayer("encoder/layer_" + std::to_string(layer), x, kHeads, kFeedForward);
  b.Output(x);
  return b.Finish("mgd modelgen bert_tiny");
}

absl::StatusOr<Graph> BuildVitTiny(uint64_t seed) {
  // ViT-Ti/16 (Touvron et al. 2021, DeiT-Tiny's shape): 16x16 patches of a
  // 224x224 image, hidden 192, 12 pre-norm layers of 3 heads, MLP 768, a
  // class token; the class token's 1000 logits out.
  constexpr int kPatch = 16, kHidden = 192, kHeads = 3, kMlp = 768, kLayers = 12, kClasses = 1000;
  constexpr int kTokens = (224 / kPatch) * (224 / kPatch) + 1;
  Builder b(seed, false);
  Transformer t(b);
  int x = b.Input("input", {1, 224, 224, 3});
  x = b.Conv("embedding", x, kHidden, kPatch, kPatch, Activation::kNone);
  x = b.Reshape("embedding/Reshape", x, {1, kTokens - 1, kHidden});
  std::vector<float> cls(kHidden), positions(static_cast<size_t>(kTokens) * kHidden);
  for (float& v : cls) v = 0.05f * b.Uniform();
  for (float& v : positions) v = 0.05f * b.Uniform();
  x = b.Concat("concat", {b.FloatConstant("cls", {1, 1, kHidden}, cls), x}, 1);
  x = b.Elementwise(OpKind::kAdd, "posembed_input/add", x, b.FloatConstant("posembed_input/pos_embedding", {1, kTokens, kHidden}, positions));
  for (int layer = 0; layer < kLayers; ++layer) x = t.PreNormLayer("Transformer/encoderblock_" + std::to_string(layer), x, kHeads, kMlp);
  x = t.LayerNorm("Transformer/encoder_norm", x, 1e-6f);
  // x[:, 0]: the class token, as the converter writes it.
  ops::StridedSliceAttributes slice;
  slice.shrink_axis_mask = 2;
  x = b.Node(OpKind::kStridedSlice, slice, {x, b.Ints("cls/begin", {0, 0, 0}), b.Ints("cls/end", {1, 1, kHidden}), b.Ints("cls/strides", {1, 1, 1})},
             "cls/StridedSlice", {1, kHidden});
  x = t.Dense("head", x, kClasses);
  b.Output(x);
  return b.Finish("mgd modelgen vit_tiny");
}

}  // namespace mgd
