// The graph builder behind `mgd modelgen`'s architectures (modelgen.cc:
// convolutional networks; modelgen_transformer.cc: transformers): tensors,
// constants and nodes named as the TFLite converter names them, with
// deterministic weights from a seed.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/fp16.h"
#include "model/graph.h"
#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/softmax/softmax.h"

namespace mgd::modelgen {

// PCG32 (O'Neill, pcg32_srandom_r / pcg32_random_r): tiny, well mixed, and
// defined bit for bit, so a seed names the same model on every platform and
// compiler (std:: distributions are not portable).
class Pcg32 {
 public:
  explicit Pcg32(uint64_t seed) : inc_((0xda3e39cb94b95bdbULL << 1) | 1u) {
    Next();
    state_ += seed;
    Next();
  }
  uint32_t Next() {
    const uint64_t old = state_;
    state_ = old * 6364136223846793005ULL + inc_;
    const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rot = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
  }
  // Uniform in [-1, 1): 24 random bits, exact in float.
  float Symmetric() { return static_cast<float>(Next() >> 8) * (2.0f / 16777216.0f) - 1.0f; }

 private:
  uint64_t state_ = 0;
  uint64_t inc_;
};

// How a layer's weights are scaled. A uniform [-a, a] draw has variance a^2/3;
// a = sqrt(3 * gain / fan_in) gives variance gain / fan_in: gain 2 for layers
// followed by RELU6 (He: the ReLU halves the second moment), 1 for linear ones
// (project convs, logits), so activations neither vanish nor blow up over the
// ~50 layers and the softmax is neither uniform nor one-hot.
constexpr float kReluGain = 2.0f;
constexpr float kLinearGain = 1.0f;
constexpr float kBiasRange = 0.05f;  // biases uniform in [-0.05, 0.05]

class Builder {
 public:
  Builder(uint64_t seed, bool fp16_weights) : rng_(seed), fp16_(fp16_weights) {}

  int Input(const std::string& name, Shape shape) {
    const int t = AddTensor(name, std::move(shape));
    graph_.inputs.push_back(t);
    return t;
  }

  // CONV_2D, SAME padding, filter OHWI [out, k, k, in].
  int Conv(const std::string& scope, int x, int out_channels, int kernel, int stride, Activation act) {
    const Shape in = Dims(x);
    const int fan_in = kernel * kernel * in[3];
    const int w = Weights(scope + "/weights", {out_channels, kernel, kernel, in[3]}, fan_in, act);
    const int b = Bias(scope + "/biases", out_channels);
    const int y = AddTensor(OutputName(scope, act), {in[0], Same(in[1], stride), Same(in[2], stride), out_channels});
    ops::Conv2dAttributes a;
    a.stride_h = a.stride_w = stride;
    a.activation = act;
    AddNode(OpKind::kConv2d, a, {x, w, b}, y);
    return y;
  }

  // A convolution with a bias and no fused activation, SAME, weights named
  // as PyTorch exports name them; `gain_of` picks the weights' scale
  // (kRelu6: a ReLU-like activation follows, as SiLU; kNone: linear).
  int Conv2d(const std::string& name, int x, int channels, int kernel, int stride, Activation gain_of) {
    const Shape in = Dims(x);
    const int w = Weights(name + "/weight", {channels, kernel, kernel, in[3]}, kernel * kernel * in[3], gain_of);
    const int bias = Bias(name + "/bias", channels);
    ops::Conv2dAttributes a;
    a.stride_h = a.stride_w = stride;
    return Node(OpKind::kConv2d, a, {x, w, bias}, name, {in[0], Same(in[1], stride), Same(in[2], stride), channels});
  }

  int Elementwise(OpKind op, const std::string& name, int a, int c) {
    return Node(op, ops::ElementwiseAttributes{}, {a, c}, name, Dims(a));
  }

  // CONCATENATION of `parts` along `axis` (0..rank-1).
  int Concat(const std::string& name, const std::vector<int>& parts, int axis) {
    Shape shape = Dims(parts[0]);
    shape[static_cast<size_t>(axis)] = 0;
    for (int p : parts) shape[static_cast<size_t>(axis)] += Dims(p)[static_cast<size_t>(axis)];
    return Node(OpKind::kConcatenation, ops::ConcatenationAttributes{axis}, parts, name, shape);
  }

  // RESHAPE with both the shape input and the option, as converters write it.
  int Reshape(const std::string& name, int x, const Shape& shape) {
    return Node(OpKind::kReshape, ops::ReshapeAttributes{shape}, {x, Ints(name + "/shape", shape)}, name, shape);
  }

  // x * sigmoid(x), as exporters write SiLU (swish): LOGISTIC and MUL.
  int Silu(const std::string& scope, int x) {
    const int gate = Node(OpKind::kLogistic, {}, {x}, scope + "/Sigmoid", Dims(x));
    return Node(OpKind::kMul, ops::ElementwiseAttributes{}, {x, gate}, scope + "/mul", Dims(x));
  }

  // Conv2d then SiLU (scope/conv, scope/act).
  int ConvSilu(const std::string& scope, int x, int channels, int kernel, int stride) {
    return Silu(scope + "/act", Conv2d(scope + "/conv", x, channels, kernel, stride, Activation::kRelu6));
  }

  // DEPTHWISE_CONV_2D kernel x kernel, multiplier 1, SAME; filter
  // [1, kernel, kernel, C].
  int Depthwise(const std::string& scope, int x, int stride, Activation act, int kernel = 3) {
    const Shape in = Dims(x);
    const int w = Weights(scope + "/depthwise_weights", {1, kernel, kernel, in[3]}, kernel * kernel, act);
    const int b = Bias(scope + "/biases", in[3]);
    const int y = AddTensor(OutputName(scope, act), {in[0], Same(in[1], stride), Same(in[2], stride), in[3]});
    ops::DepthwiseConv2dAttributes a;
    a.stride_h = a.stride_w = stride;
    a.activation = act;
    AddNode(OpKind::kDepthwiseConv2d, a, {x, w, b}, y);
    return y;
  }

  // MobileNetV2's inverted residual with RELU6 (Sandler et al. 2018): expand
  // 1x1 by `expansion` (absent for 1), depthwise kernel x kernel with
  // `stride`, linear project 1x1 to `channels`, and a residual ADD when the
  // block keeps the shape; the four layers' names as the exporter gives them.
  struct InvertedResidualNames {
    std::string expand, depthwise, project, add;
  };
  int InvertedResidual(const InvertedResidualNames& names, int x, int expansion, int channels, int stride, int kernel = 3) {
    const int in_channels = Dims(x)[3];
    int y = x;
    if (expansion != 1) y = Conv(names.expand, y, in_channels * expansion, 1, 1, Activation::kRelu6);
    y = Depthwise(names.depthwise, y, stride, Activation::kRelu6, kernel);
    y = Conv(names.project, y, channels, 1, 1, Activation::kNone);
    return stride == 1 && in_channels == channels ? Add(names.add, x, y) : y;
  }

  // CONV_2D 1x1 with the given weights [out][in] and biases.
  int PointwiseConv(const std::string& scope, int x, const std::vector<std::vector<float>>& weights,
                    const std::vector<float>& biases) {
    const Shape in = Dims(x);
    const int out_channels = static_cast<int>(weights.size());
    std::vector<float> flat;
    for (const std::vector<float>& row : weights) flat.insert(flat.end(), row.begin(), row.end());
    const int w = FloatConstant(scope + "/weights", {out_channels, 1, 1, in[3]}, flat);
    const int b = FloatConstant(scope + "/biases", {out_channels}, biases);
    const int y = AddTensor(OutputName(scope, Activation::kNone), {in[0], in[1], in[2], out_channels});
    AddNode(OpKind::kConv2d, ops::Conv2dAttributes{}, {x, w, b}, y);
    return y;
  }
  float Uniform() { return rng_.Symmetric(); }

  int Add(const std::string& name, int a, int b) {
    const int y = AddTensor(name, Dims(a));
    AddNode(OpKind::kAdd, ops::ElementwiseAttributes{}, {a, b}, y);
    return y;
  }

  // ADD of a constant, the same in every channel ([C], broadcast).
  int AddOffset(const std::string& name, int x, float offset) {
    const int c = FloatConstant(name + "/offset", {Dims(x)[3]}, std::vector<float>(static_cast<size_t>(Dims(x)[3]), offset));
    return Add(name, x, c);
  }
  void Output(int t) { graph_.outputs.push_back(t); }
  // The whole feature map down to 1x1, VALID; stride 2 as in the hosted
  // models (irrelevant for a single output position).
  int GlobalAveragePool(const std::string& name, int x) {
    const Shape in = Dims(x);
    const int y = AddTensor(name, {in[0], 1, 1, in[3]});
    ops::PoolAttributes a;
    a.padding = Padding::kValid;
    a.stride_h = a.stride_w = 2;
    a.filter_h = in[1];
    a.filter_w = in[2];
    AddNode(OpKind::kAveragePool2d, a, {x}, y);
    return y;
  }

  // keras GlobalAveragePooling2D as the TFLite converter writes it: MEAN
  // over axes [1, 2], [1, H, W, C] -> [1, C].
  int SpatialMean(const std::string& name, int x) {
    const Shape in = Dims(x);
    return Node(OpKind::kMean, ops::ReducerAttributes{false}, {x, Ints(name + "/reduction_indices", {1, 2})}, name,
                {in[0], in[3]});
  }

  // keras Dense: FULLY_CONNECTED on the last axis, kernel [units, in]; with
  // keep_num_dims the other axes stay, else they flatten to rows.
  int FullyConnected(const std::string& scope, int x, int units, bool keep_num_dims = false) {
    Shape shape = Dims(x);
    const int in = shape.back();
    const int w = Weights(scope + "/kernel", {units, in}, in, Activation::kNone);
    const int bias = Bias(scope + "/bias", units);
    if (keep_num_dims) {
      shape.back() = units;
    } else {
      shape = {static_cast<int>(NumElements(shape) / in), units};
    }
    return Node(OpKind::kFullyConnected, ops::FullyConnectedAttributes{Activation::kNone, keep_num_dims}, {x, w, bias},
                scope + "/BiasAdd", shape);
  }

  // SOFTMAX of [N, C], the graph's output.
  void SoftmaxOutput(const std::string& name, int logits) {
    graph_.outputs.push_back(Node(OpKind::kSoftmax, ops::SoftmaxAttributes{1.0f}, {logits}, name, Dims(logits)));
  }

  // RESHAPE [1,1,1,N] -> [1,N] with both the shape input and the option, as
  // the TFLite converter writes it; then SOFTMAX. The softmax is the output.
  void Classifier(const std::string& squeeze_name, const std::string& output_name, int logits) {
    SoftmaxOutput(output_name, Reshape(squeeze_name, logits, {1, Dims(logits)[3]}));
  }

  Graph& graph() { return graph_; }
  Graph Finish(std::string description) {
    graph_.description = std::move(description);
    return std::move(graph_);
  }

  static int Same(int size, int stride) { return (size + stride - 1) / stride; }

  static std::string OutputName(const std::string& scope, Activation act) {
    return scope + (act == Activation::kRelu6 ? "/Relu6" : "/BiasAdd");
  }

  Shape Dims(int t) const { return graph_.tensors[static_cast<size_t>(t)].shape; }

  int AddTensor(const std::string& name, Shape shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    graph_.tensors.push_back(std::move(t));
    return static_cast<int>(graph_.tensors.size() - 1);
  }

  int AddConstant(const std::string& name, Shape shape, DataType type, std::vector<uint8_t> bytes) {
    const int t = AddTensor(name, std::move(shape));
    Tensor& tensor = graph_.tensors[static_cast<size_t>(t)];
    tensor.type = type;
    tensor.is_constant = true;
    tensor.data = std::move(bytes);
    return t;
  }

  void AddNode(OpKind op, Attributes attributes, std::vector<int> inputs, int output, int version = 1) {
    AddNode(op, std::move(attributes), std::move(inputs), std::vector<int>{output}, version);
  }
  void AddNode(OpKind op, Attributes attributes, std::vector<int> inputs, std::vector<int> outputs, int version = 1) {
    mgd::Node n;
    n.op = op;
    n.version = version;
    n.attributes = std::move(attributes);
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    graph_.nodes.push_back(std::move(n));
  }

  // A node `op` with one new output tensor `name` of `shape`.
  int Node(OpKind op, Attributes a, std::vector<int> inputs, const std::string& name, Shape shape) {
    const int y = AddTensor(name, std::move(shape));
    AddNode(op, std::move(a), std::move(inputs), y);
    return y;
  }

  // An int32 vector constant (axes, shapes, permutations).
  int Ints(const std::string& name, const std::vector<int32_t>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return AddConstant(name, {static_cast<int>(values.size())}, DataType::kInt32, std::move(bytes));
  }

  int Weights(const std::string& name, Shape shape, int fan_in, Activation act) {
    const float gain = act == Activation::kRelu6 ? kReluGain : kLinearGain;
    const float limit = std::sqrt(3.0f * gain / static_cast<float>(fan_in));
    std::vector<float> values(static_cast<size_t>(NumElements(shape)));
    for (float& v : values) v = limit * rng_.Symmetric();
    return FloatConstant(name, std::move(shape), values);
  }

  int Bias(const std::string& name, int channels) {
    std::vector<float> values(static_cast<size_t>(channels));
    for (float& v : values) v = kBiasRange * rng_.Symmetric();
    return FloatConstant(name, {channels}, values);
  }

  // A float32 constant, or (fp16 weights) a FLOAT16 constant and the
  // DEQUANTIZE node that widens it; either way the returned tensor is what
  // the consumer reads. Data is little-endian like the host (x86/ARM).
  int FloatConstant(const std::string& name, Shape shape, const std::vector<float>& values) {
    if (!fp16_) {
      std::vector<uint8_t> bytes(values.size() * sizeof(float));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return AddConstant(name, std::move(shape), DataType::kFloat32, std::move(bytes));
    }
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i) halves[i] = FloatToHalf(values[i]);
    std::vector<uint8_t> bytes(halves.size() * sizeof(uint16_t));
    std::memcpy(bytes.data(), halves.data(), bytes.size());
    const int half = AddConstant(name, shape, DataType::kFloat16, std::move(bytes));
    const int widened = AddTensor(name + "_dequantize", std::move(shape));
    // Version 3: the TFLite op version for a FLOAT16 input.
    AddNode(OpKind::kDequantize, std::monostate{}, {half}, widened, 3);
    return widened;
  }

 private:
  Graph graph_;
  Pcg32 rng_;
  bool fp16_;
};


}  // namespace mgd::modelgen
