#include "tests/ops/litert_op_models.h"

#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/cumsum/cumsum.h"
#include "ops/elementwise/elementwise.h"
#include "ops/gather/gather.h"
#include "ops/matmul/batch_matmul.h"
#include "ops/movement/movement.h"
#include "ops/one_hot/one_hot.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "ops/split/split.h"
#include "tests/graph_builder.h"

namespace mgd::testing {
namespace {

// Deterministic constants in [-1, 1).
std::vector<float> Table(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>((i * 37 + 11) % 101) / 50.5f - 1.0f);
  return v;
}

LitertOpModel Unary(const std::string& name, OpKind op, const std::string& range = "-1,1") {
  GraphBuilder b;
  const int x = b.Input({2, 5, 7, 3});
  const int y = b.Tensor({2, 5, 7, 3}, DataType::kFloat32, "y");
  b.Op(op, {}, {x}, {y});
  b.Output(y);
  return {name, b.Build(), range};
}

LitertOpModel Gelu(bool approximate) {
  GraphBuilder b;
  const int x = b.Input({1, 6, 5, 9});
  const int y = b.Tensor({1, 6, 5, 9}, DataType::kFloat32, "y");
  b.Op(OpKind::kGelu, ops::GeluAttributes{approximate}, {x}, {y});
  b.Output(y);
  return {approximate ? "gelu_approximate" : "gelu", b.Build(), "-5,5"};
}

LitertOpModel Binary(const std::string& name, OpKind op, const std::string& range, bool gpu = true) {
  GraphBuilder b;
  const int x = b.Input({2, 4, 6}), z = b.Input({6});
  const int y = b.Tensor({2, 4, 6}, DataType::kFloat32, "y");
  b.Op(op, {}, {x, z}, {y});
  b.Output(y);
  return {name, b.Build(), range, gpu};
}

LitertOpModel Reduce(const std::string& name, OpKind op, const std::string& range) {
  GraphBuilder b;
  const int x = b.Input({2, 5, 6, 7});
  const int y = b.Tensor({2, 1, 1, 7}, DataType::kFloat32, "y");
  b.Op(op, ops::ReducerAttributes{true}, {x, b.ConstantInt({2}, {1, -2})}, {y});
  b.Output(y);
  return {name, b.Build(), range};
}

LitertOpModel Split() {
  GraphBuilder b;
  const int x = b.Input({1, 4, 5, 6});
  const int a = b.Tensor({1, 4, 5, 2}, DataType::kFloat32, "a"), c = b.Tensor({1, 4, 5, 2}, DataType::kFloat32, "c"),
            d = b.Tensor({1, 4, 5, 2}, DataType::kFloat32, "d");
  b.Op(OpKind::kSplit, ops::SplitAttributes{3}, {b.ConstantInt({}, {-1}), x}, {a, c, d});
  for (int t : {a, c, d}) b.Output(t);
  return {"split", b.Build()};
}

LitertOpModel SplitV() {
  GraphBuilder b;
  const int x = b.Input({2, 7, 3});
  const int a = b.Tensor({2, 2, 3}, DataType::kFloat32, "a"), c = b.Tensor({2, 5, 3}, DataType::kFloat32, "c");
  b.Op(OpKind::kSplitV, ops::SplitAttributes{2}, {x, b.ConstantInt({2}, {2, -1}), b.ConstantInt({}, {1})}, {a, c});
  b.Output(a);
  b.Output(c);
  return {"split_v", b.Build()};
}

LitertOpModel Pack() {
  GraphBuilder b;
  const int x = b.Input({3, 5}), z = b.Input({3, 5});
  const int y = b.Tensor({3, 2, 5}, DataType::kFloat32, "y");
  b.Op(OpKind::kPack, ops::PackAttributes{2, 1}, {x, z}, {y});
  b.Output(y);
  return {"pack", b.Build()};
}

LitertOpModel Tile() {
  GraphBuilder b;
  const int x = b.Input({1, 3, 2, 5});
  const int y = b.Tensor({2, 3, 6, 5}, DataType::kFloat32, "y");
  b.Op(OpKind::kTile, {}, {x, b.ConstantInt({4}, {2, 1, 3, 1})}, {y});
  b.Output(y);
  return {"tile", b.Build()};
}

LitertOpModel MirrorPad(bool symmetric) {
  GraphBuilder b;
  const int x = b.Input({1, 4, 5, 3});
  const int y = b.Tensor({1, 7, 8, 3}, DataType::kFloat32, "y");
  b.Op(OpKind::kMirrorPad, ops::MirrorPadAttributes{symmetric},
       {x, b.ConstantInt({4, 2}, {0, 0, 2, 1, symmetric ? 3 : 1, symmetric ? 0 : 2, 0, 0})}, {y});
  b.Output(y);
  return {symmetric ? "mirror_pad_symmetric" : "mirror_pad_reflect", b.Build()};
}

LitertOpModel Attention() {
  // Q x K^T of two inputs, then times a constant value matrix.
  GraphBuilder b;
  const int q = b.Input({1, 2, 5, 8}), k = b.Input({1, 2, 5, 8});
  const int scores = b.Tensor({1, 2, 5, 5}, DataType::kFloat32, "scores");
  b.Op(OpKind::kBatchMatmul, ops::BatchMatmulAttributes{false, true}, {q, k}, {scores});
  const int y = b.Tensor({1, 2, 5, 6}, DataType::kFloat32, "y");
  b.Op(OpKind::kBatchMatmul, {}, {scores, b.Constant({5, 6}, Table(30))}, {y});
  b.Output(y);
  return {"batch_matmul", b.Build()};
}

LitertOpModel Cumsum() {
  GraphBuilder b;
  const int x = b.Input({2, 6, 5});
  const int y = b.Tensor({2, 6, 5}, DataType::kFloat32, "y");
  b.Op(OpKind::kCumsum, ops::CumsumAttributes{true, true}, {x, b.ConstantInt({}, {1})}, {y});
  b.Output(y);
  return {"cumsum", b.Build()};
}

// Token ids (LiteRT makes int32 inputs 0..99) into a 100-row table, and
// one-hot rows of them: both run on the GPU, reading the ids as given.
LitertOpModel Embedding() {
  GraphBuilder b;
  const int ids = b.Tensor({1, 16}, DataType::kInt32, "ids");
  b.graph().inputs.push_back(ids);
  const int y = b.Tensor({1, 16, 8}, DataType::kFloat32, "y");
  b.Op(OpKind::kGather, ops::GatherAttributes{}, {b.Constant({100, 8}, Table(800)), ids}, {y});
  b.Output(y);
  return {"gather_embedding", b.Build()};
}

LitertOpModel GatherAxis() {
  GraphBuilder b;
  const int x = b.Input({2, 5, 6});
  const int y = b.Tensor({2, 2, 3, 6}, DataType::kFloat32, "y");
  b.Op(OpKind::kGather, ops::GatherAttributes{-2, 0}, {x, b.ConstantInt({2, 3}, {4, 0, 0, 2, 1, 3})}, {y});
  b.Output(y);
  return {"gather_axis", b.Build()};
}

LitertOpModel OneHot() {
  GraphBuilder b;
  const int ids = b.Tensor({6}, DataType::kInt32, "ids");
  b.graph().inputs.push_back(ids);
  const int y = b.Tensor({6, 100}, DataType::kFloat32, "y");
  b.Op(OpKind::kOneHot, ops::OneHotAttributes{-1}, {ids, b.ConstantInt({}, {100}), b.Constant({}, {0.5f}), b.Constant({}, {-2.0f})},
       {y});
  b.Output(y);
  return {"one_hot", b.Build()};
}

// Token ids to float (CAST), and a mask of them (GREATER_EQUAL) selecting
// between two float inputs (SELECT_V2 after LESS). With the GPU delegate
// the int32 comparison stays on the CPU, and the GPU reads its bools.
LitertOpModel CastCompareSelect() {
  GraphBuilder b;
  const int ids = b.Tensor({2, 5}, DataType::kInt32, "ids");
  b.graph().inputs.push_back(ids);
  const int x = b.Input({2, 5}), z = b.Input({5});
  const int as_float = b.Tensor({2, 5}, DataType::kFloat32, "as_float");
  b.Op(OpKind::kCast, {}, {ids}, {as_float});
  const int less = b.Tensor({2, 5}, DataType::kBool, "less");
  b.Op(OpKind::kLess, {}, {x, z}, {less});
  const int picked = b.Tensor({2, 5}, DataType::kFloat32, "picked");
  b.Op(OpKind::kSelectV2, {}, {less, as_float, x}, {picked});
  const int even = b.Tensor({2, 5}, DataType::kBool, "even");
  b.Op(OpKind::kGreaterEqual, {}, {ids, b.ConstantInt({}, {50})}, {even});
  const int y = b.Tensor({2, 5}, DataType::kFloat32, "y");
  b.Op(OpKind::kSelectV2, {}, {even, picked, z}, {y});
  b.Output(y);
  return {"cast_compare_select", b.Build(), "-1,1", true, false};
}

// Float to int8 and on to uint8 with other parameters (QUANTIZE twice: a
// quantization and a requantization), each back to float (DEQUANTIZE), as
// the TFLite converter writes a quantized model's float inputs; inputs in
// +-3 saturate the int8 one. A MUL before them runs on the GPU, the rest on
// the CPU.
LitertOpModel QuantizeRequantize() {
  GraphBuilder b;
  const int x = b.Input({1, 5, 7, 3});
  const int scaled = b.Tensor({1, 5, 7, 3}, DataType::kFloat32, "scaled");
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {x, b.Constant({3}, {1.0f, 0.5f, -1.25f})}, {scaled});
  auto quantized = [&](DataType type, float scale, int64_t zero_point, const std::string& name) {
    const int t = b.Tensor({1, 5, 7, 3}, type, name);
    b.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{scale}, {zero_point}, 0};
    return t;
  };
  const int q8 = quantized(DataType::kInt8, 0.02f, -5, "q8"), u8 = quantized(DataType::kUInt8, 0.03f, 120, "u8");
  b.Op(OpKind::kQuantize, {}, {scaled}, {q8});
  b.Op(OpKind::kQuantize, {}, {q8}, {u8});
  const int y8 = b.Tensor({1, 5, 7, 3}, DataType::kFloat32, "y8");
  const int yu8 = b.Tensor({1, 5, 7, 3}, DataType::kFloat32, "yu8");
  b.Op(OpKind::kDequantize, {}, {q8}, {y8});
  b.Op(OpKind::kDequantize, {}, {u8}, {yu8});
  b.Output(y8);
  b.Output(yu8);
  return {"quantize_requantize", b.Build(), "-3,3", true, false};
}

// The quantized ADD, SUB and MUL of a converted model: float inputs
// quantized to int8 (the third, [8], broadcast), added, multiplied and
// subtracted (with RELU_N1_TO_1) in int8, each result back to float.
LitertOpModel QuantizedArithmetic() {
  GraphBuilder b;
  const Shape shape = {1, 4, 6, 8};
  auto quantized = [&](const Shape& s, float scale, int64_t zero_point, const std::string& name) {
    const int t = b.Tensor(s, DataType::kInt8, name);
    b.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{scale}, {zero_point}, 0};
    return t;
  };
  const int x1 = b.Input(shape), x2 = b.Input(shape), x3 = b.Input({8});
  const int q1 = quantized(shape, 0.016f, 3, "q1"), q2 = quantized(shape, 0.02f, -7, "q2"),
            q3 = quantized({8}, 0.011f, 0, "q3");
  b.Op(OpKind::kQuantize, {}, {x1}, {q1});
  b.Op(OpKind::kQuantize, {}, {x2}, {q2});
  b.Op(OpKind::kQuantize, {}, {x3}, {q3});
  const int sum = quantized(shape, 0.03f, 0, "sum"), product = quantized(shape, 0.03f, 2, "product");
  const int difference = quantized(shape, 0.045f, 5, "difference");
  const int broadcast = quantized(shape, 0.04f, -1, "broadcast");
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {q1, q2}, {sum});
  b.Op(OpKind::kMul, ops::ElementwiseAttributes{}, {q1, q2}, {product});
  b.Op(OpKind::kSub, ops::ElementwiseAttributes{Activation::kReluN1To1}, {sum, product}, {difference});
  b.Op(OpKind::kAdd, ops::ElementwiseAttributes{}, {q1, q3}, {broadcast});
  for (int t : {sum, product, difference, broadcast}) {
    const int y = b.Tensor(shape, DataType::kFloat32, "float_" + b.graph().tensors[static_cast<size_t>(t)].name);
    b.Op(OpKind::kDequantize, {}, {t}, {y});
    b.Output(y);
  }
  return {"quantized_arithmetic", b.Build(), "-2,2", false};
}

// A quantized convolution block as the TFLite converter writes it: int8
// activations, int8 filters (zero points 0) and int32 biases of scale
// input * filter: CONV_2D 3x3 with RELU6 and a DEPTHWISE_CONV_2D 3x3 of
// stride 2 (SAME, per-channel filters), and FULLY_CONNECTED (per-tensor) of
// the input, each result back to float.
LitertOpModel QuantizedConvolutions() {
  GraphBuilder b;
  auto quantized = [&](const Shape& s, DataType type, Quantization q, const std::string& name) {
    const int t = b.Tensor(s, type, name);
    b.graph().tensors[static_cast<size_t>(t)].quantization = std::move(q);
    return t;
  };
  // Deterministic filters and biases; scales per output channel along
  // `axis`, or one (axis -1).
  auto filter = [&](const Shape& s, int axis, float in_scale, const std::string& name, int& bias) {
    const int channels = s[static_cast<size_t>(axis < 0 ? 0 : axis)];
    std::vector<int8_t> values(static_cast<size_t>(NumElements(s)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int8_t>(static_cast<int>((i * 37) % 255) - 127);
    Quantization q{{}, {}, std::max(axis, 0)}, bias_q{{}, {}, 0};
    std::vector<int32_t> biases;
    for (int c = 0; c < channels; ++c) {
      if (axis >= 0 || c == 0) {
        q.scale.push_back(0.002f * static_cast<float>(1 + c % 3));
        q.zero_point.push_back(0);
      }
      bias_q.scale.push_back(in_scale * q.scale.back());
      bias_q.zero_point.push_back(0);
      biases.push_back((c * 613) % 2001 - 1000);
    }
    if (axis < 0) bias_q = Quantization{{bias_q.scale[0]}, {0}, 0};
    const int t = quantized(s, DataType::kInt8, q, name);
    b.SetData(t, values.data(), values.size());
    bias = b.ConstantInt({channels}, biases);
    b.graph().tensors[static_cast<size_t>(bias)].quantization = bias_q;
    return t;
  };
  const int x = b.Input({1, 9, 9, 3});
  const int q = quantized({1, 9, 9, 3}, DataType::kInt8, {{0.008f}, {-1}, 0}, "q");
  b.Op(OpKind::kQuantize, {}, {x}, {q});
  int conv_bias = -1, dw_bias = -1, fc_bias = -1;
  const int conv_filter = filter({8, 3, 3, 3}, 0, 0.008f, "conv_filter", conv_bias);
  const int conv = quantized({1, 9, 9, 8}, DataType::kInt8, {{0.005f}, {-128}, 0}, "conv");
  ops::Conv2dAttributes ca;
  ca.activation = Activation::kRelu6;
  b.Op(OpKind::kConv2d, ca, {q, conv_filter, conv_bias}, {conv});
  const int dw_filter = filter({1, 3, 3, 8}, 3, 0.005f, "dw_filter", dw_bias);
  const int dw = quantized({1, 5, 5, 8}, DataType::kInt8, {{0.004f}, {3}, 0}, "dw");
  ops::DepthwiseConv2dAttributes da;
  da.stride_h = da.stride_w = 2;
  b.Op(OpKind::kDepthwiseConv2d, da, {conv, dw_filter, dw_bias}, {dw});
  // On the quantized input itself: the depthwise outputs that are ties
  // (docs/numerics.md) would carry into its sums.
  const int fc_filter = filter({10, 243}, -1, 0.008f, "fc_filter", fc_bias);
  const int fc = quantized({1, 10}, DataType::kInt8, {{0.01f}, {-5}, 0}, "fc");
  b.Op(OpKind::kFullyConnected, ops::FullyConnectedAttributes{}, {q, fc_filter, fc_bias}, {fc});
  for (int t : {conv, dw, fc}) {
    const Tensor& info = b.graph().tensors[static_cast<size_t>(t)];
    const int y = b.Tensor(info.shape, DataType::kFloat32, "float_" + info.name);
    b.Op(OpKind::kDequantize, {}, {t}, {y});
    b.Output(y);
  }
  return {"quantized_convolutions", b.Build(), "-1,1", false};
}

// The other integer kernels of a converted model, chained as a network
// would: int8 pooling, PAD, both resizings, CONCATENATION, HARD_SWISH,
// RESHAPE, SOFTMAX, MEAN, LOGISTIC and TANH (TFLite's fixed output
// parameters where it has them), and a uint8 CONCATENATION of differently
// quantized inputs, which rescales; each result back to float.
LitertOpModel QuantizedOps() {
  GraphBuilder b;
  auto quantized = [&](const Shape& s, DataType type, float scale, int64_t zero_point, const std::string& name) {
    const int t = b.Tensor(s, type, name);
    b.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{scale}, {zero_point}, 0};
    return t;
  };
  auto int8 = [&](const Shape& s, float scale, int64_t zero_point, const std::string& name) {
    return quantized(s, DataType::kInt8, scale, zero_point, name);
  };
  const int x = b.Input({1, 8, 8, 3});
  const int q = int8({1, 8, 8, 3}, 0.01f, -2, "q");
  b.Op(OpKind::kQuantize, {}, {x}, {q});
  const int average = int8({1, 8, 8, 3}, 0.01f, -2, "average");
  b.Op(OpKind::kAveragePool2d, ops::PoolAttributes{Padding::kSame, 1, 1, 3, 3, Activation::kNone}, {q}, {average});
  const int max = int8({1, 4, 4, 3}, 0.01f, -2, "max");
  b.Op(OpKind::kMaxPool2d, ops::PoolAttributes{Padding::kValid, 2, 2, 2, 2, Activation::kNone}, {average}, {max});
  const int padded = int8({1, 6, 6, 3}, 0.01f, -2, "padded");
  b.Op(OpKind::kPad, {}, {max, b.ConstantInt({4, 2}, {0, 0, 1, 1, 1, 1, 0, 0})}, {padded});
  const int size = b.ConstantInt({2}, {9, 9});
  const int bilinear = int8({1, 9, 9, 3}, 0.01f, -2, "bilinear");
  b.Op(OpKind::kResizeBilinear, ops::ResizeAttributes{false, true}, {padded, size}, {bilinear});
  const int nearest = int8({1, 9, 9, 3}, 0.01f, -2, "nearest");
  b.Op(OpKind::kResizeNearestNeighbor, ops::ResizeAttributes{}, {padded, size}, {nearest});
  const int corners = int8({1, 9, 9, 3}, 0.01f, -2, "corners");
  b.Op(OpKind::kResizeNearestNeighbor, ops::ResizeAttributes{true, false}, {padded, size}, {corners});
  // What follows takes the exact results only: LiteRT's bilinear resizing
  // (XNNPACK's 11-bit weights) differs from TFLite's reference kernel's by
  // a quantum at places, and a quantum of input can become two of output.
  const int joined = int8({1, 9, 9, 6}, 0.01f, -2, "joined");
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{3, Activation::kNone}, {nearest, corners}, {joined});
  const int swish = int8({1, 9, 9, 6}, 0.004f, -40, "swish");
  b.Op(OpKind::kHardSwish, {}, {joined}, {swish});
  const int rows = int8({81, 6}, 0.004f, -40, "rows");
  b.Op(OpKind::kReshape, ops::ReshapeAttributes{}, {swish, b.ConstantInt({2}, {81, 6})}, {rows});
  const int softmax = int8({81, 6}, 1.0f / 256, -128, "softmax");
  b.Op(OpKind::kSoftmax, ops::SoftmaxAttributes{4.0f}, {rows}, {softmax});
  const int mean = int8({1, 6}, 0.002f, -30, "mean");
  b.Op(OpKind::kMean, ops::ReducerAttributes{false}, {swish, b.ConstantInt({2}, {1, 2})}, {mean});
  const int logistic = int8({1, 6}, 1.0f / 256, -128, "logistic");
  b.Op(OpKind::kLogistic, {}, {mean}, {logistic});
  const int tanh = int8({1, 8, 8, 3}, 1.0f / 128, 0, "tanh");
  b.Op(OpKind::kTanh, {}, {average}, {tanh});
  const int u1 = quantized({1, 8, 8, 3}, DataType::kUInt8, 0.01f, 120, "u1");
  const int u2 = quantized({1, 8, 8, 3}, DataType::kUInt8, 0.006f, 140, "u2");
  b.Op(OpKind::kQuantize, {}, {x}, {u1});
  b.Op(OpKind::kQuantize, {}, {x}, {u2});
  const int rescaled = quantized({1, 8, 8, 6}, DataType::kUInt8, 0.009f, 128, "rescaled");
  b.Op(OpKind::kConcatenation, ops::ConcatenationAttributes{3, Activation::kNone}, {u1, u2}, {rescaled});
  for (int t : {average, bilinear, joined, swish, softmax, mean, logistic, tanh, rescaled}) {
    const Tensor& info = b.graph().tensors[static_cast<size_t>(t)];
    const int y = b.Tensor(info.shape, DataType::kFloat32, "float_" + info.name);
    b.Op(OpKind::kDequantize, {}, {t}, {y});
    b.Output(y);
  }
  return {"quantized_ops", b.Build(), "-1,1", false};
}

}  // namespace

std::vector<LitertOpModel> LitertOpModels() {
  return {Unary("sin", OpKind::kSin, "-3,3"),
          Unary("cos", OpKind::kCos, "-3,3"),
          Unary("log", OpKind::kLog, "0.25,4"),
          Unary("sqrt", OpKind::kSqrt, "0.25,4"),
          Unary("rsqrt", OpKind::kRsqrt, "0.25,4"),
          Unary("square", OpKind::kSquare),
          Gelu(false),
          Gelu(true),
          Binary("pow", OpKind::kPow, "0.25,2"),
          Binary("floor_div", OpKind::kFloorDiv, "0.5,3", false),
          Binary("floor_mod", OpKind::kFloorMod, "0.5,3", false),
          Reduce("sum", OpKind::kSum, "-1,1"),
          Reduce("reduce_max", OpKind::kReduceMax, "-1,1"),
          Reduce("reduce_prod", OpKind::kReduceProd, "0.8,1.2"),
          Split(),
          SplitV(),
          Pack(),
          Tile(),
          MirrorPad(false),
          MirrorPad(true),
          Attention(),
          Cumsum(),
          Embedding(),
          GatherAxis(),
          OneHot(),
          CastCompareSelect(),
          QuantizeRequantize(),
          QuantizedArithmetic(),
          QuantizedConvolutions(),
          QuantizedOps()};
}

}  // namespace mgd::testing
