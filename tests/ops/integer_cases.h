// The single-op 8-bit cases the integer kernels (integer_kernels_test.cc)
// and the GPU's float form of them (int8_gpu_test.cc) are checked on: each
// op with its inputs' and output's parameters and the most its result may
// differ from the expectation, in quanta.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ops/concatenation/concatenation.h"
#include "ops/elementwise/elementwise.h"
#include "ops/pool/pool.h"
#include "ops/quantize/quantized_tensor.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "tests/graph_builder.h"

namespace mgd::ops::testing {

using mgd::testing::GraphBuilder;
using quantized::Params;

struct Case {
  std::string name;
  OpKind op;
  Attributes attributes;
  std::vector<Shape> inputs;
  std::vector<Params> input_params;  // int8's; uint8 has zero points 128 higher
  Shape output;
  Params output_params;
  std::vector<std::pair<Shape, std::vector<int32_t>>> constants;  // int32 inputs after the data
  int quanta;  // the most an output may differ by
};

inline Params ForType(Params p, DataType type) {
  if (type == DataType::kUInt8) p.zero_point += 128;
  return p;
}

// The case's graph with data inputs and output of `type`; 8-bit types get
// their parameters.
inline Graph Build(const Case& c, DataType type) {
  GraphBuilder g;
  std::vector<int> inputs;
  auto quantize = [&](int t, const Params& p) {
    if (type == DataType::kFloat32) return;
    const Params q = ForType(p, type);
    g.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{q.scale}, {q.zero_point}, 0};
  };
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(g.Input(c.inputs[i], type));
    quantize(inputs.back(), c.input_params[i]);
  }
  for (const auto& [shape, values] : c.constants) inputs.push_back(g.ConstantInt(shape, values));
  const int y = g.Tensor(c.output, type);
  quantize(y, c.output_params);
  g.Op(c.op, c.attributes, inputs, {y});
  g.Output(y);
  return g.Build();
}


// The case as a converted model has it: float inputs quantized (QUANTIZE),
// the op on int8, its result back to float (DEQUANTIZE).
inline Graph BuildWithFloatEdges(const Case& c) {
  GraphBuilder g;
  auto int8 = [&](const Shape& shape, const Params& p) {
    const int t = g.Tensor(shape, DataType::kInt8);
    g.graph().tensors[static_cast<size_t>(t)].quantization = Quantization{{p.scale}, {p.zero_point}, 0};
    return t;
  };
  std::vector<int> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const int x = g.Input(c.inputs[i]);
    inputs.push_back(int8(c.inputs[i], c.input_params[i]));
    g.Op(OpKind::kQuantize, {}, {x}, {inputs.back()});
  }
  for (const auto& [shape, values] : c.constants) inputs.push_back(g.ConstantInt(shape, values));
  const int q = int8(c.output, c.output_params);
  g.Op(c.op, c.attributes, inputs, {q});
  const int y = g.Tensor(c.output);
  g.Op(OpKind::kDequantize, {}, {q}, {y});
  g.Output(y);
  return g.Build();
}

inline std::vector<Case> Cases() {
  const Params p{0.05f, -3}, wide{0.1f, 10}, probability{1.0f / 256, -128};
  PoolAttributes average{Padding::kSame, 2, 2, 3, 3, Activation::kNone};
  PoolAttributes average_relu6 = average;
  average_relu6.activation = Activation::kRelu6;
  const PoolAttributes max{Padding::kValid, 2, 2, 2, 2, Activation::kNone};
  return {
      {"average pool", OpKind::kAveragePool2d, average, {{1, 7, 7, 5}}, {p}, {1, 4, 4, 5}, p, {}, 1},
      {"average pool, RELU6", OpKind::kAveragePool2d, average_relu6, {{1, 7, 7, 5}}, {p}, {1, 4, 4, 5}, p, {}, 1},
      {"max pool", OpKind::kMaxPool2d, max, {{1, 6, 7, 3}}, {p}, {1, 3, 3, 3}, p, {}, 0},
      {"reshape", OpKind::kReshape, ReshapeAttributes{}, {{1, 4, 4, 3}}, {p}, {1, 48}, p, {{{2}, {1, 48}}}, 0},
      {"pad", OpKind::kPad, {}, {{1, 3, 3, 2}}, {p}, {1, 6, 6, 3}, p, {{{4, 2}, {0, 0, 1, 2, 2, 1, 0, 1}}}, 0},
      {"bilinear", OpKind::kResizeBilinear, ResizeAttributes{}, {{1, 3, 4, 3}}, {p}, {1, 7, 9, 3}, p,
       {{{2}, {7, 9}}}, 1},
      {"bilinear, half pixels", OpKind::kResizeBilinear, ResizeAttributes{false, true}, {{1, 3, 4, 3}}, {p},
       {1, 8, 6, 3}, p, {{{2}, {8, 6}}}, 1},
      {"bilinear, corners", OpKind::kResizeBilinear, ResizeAttributes{true, false}, {{1, 3, 4, 3}}, {p},
       {1, 7, 9, 3}, p, {{{2}, {7, 9}}}, 1},
      {"nearest", OpKind::kResizeNearestNeighbor, ResizeAttributes{false, true}, {{1, 3, 4, 3}}, {p}, {1, 6, 8, 3},
       p, {{{2}, {6, 8}}}, 0},
      {"concatenation, one scale", OpKind::kConcatenation, ConcatenationAttributes{3, Activation::kNone},
       {{1, 2, 3, 4}, {1, 2, 3, 3}}, {p, p}, {1, 2, 3, 7}, p, {}, 0},
      {"concatenation, rescaled", OpKind::kConcatenation, ConcatenationAttributes{1, Activation::kRelu},
       {{1, 2, 3, 4}, {1, 3, 3, 4}}, {p, wide}, {1, 5, 3, 4}, {0.08f, -20}, {}, 1},
      {"logistic", OpKind::kLogistic, {}, {{2, 50}}, {p}, {2, 50}, probability, {}, 0},
      {"tanh", OpKind::kTanh, {}, {{2, 50}}, {p}, {2, 50}, {1.0f / 128, 0}, {}, 0},
      {"hard swish", OpKind::kHardSwish, {}, {{2, 50}}, {wide}, {2, 50}, {0.06f, -60}, {}, 1},
      {"relu6", OpKind::kRelu6, {}, {{2, 50}}, {wide}, {2, 50}, {0.03f, -128}, {}, 1},
      {"softmax", OpKind::kSoftmax, SoftmaxAttributes{1.0f}, {{3, 10}}, {wide}, {3, 10}, probability, {}, 1},
      {"softmax, beta", OpKind::kSoftmax, SoftmaxAttributes{0.5f}, {{2, 7}}, {p}, {2, 7}, probability, {}, 1},
      {"mean", OpKind::kMean, ReducerAttributes{true}, {{1, 5, 6, 8}}, {wide}, {1, 1, 1, 8}, {0.01f, 2},
       {{{2}, {1, 2}}}, 1},
      {"sum", OpKind::kSum, ReducerAttributes{false}, {{2, 3, 4}}, {p}, {2, 4}, {0.12f, 0}, {{{1}, {1}}}, 1},
      {"reduce max", OpKind::kReduceMax, ReducerAttributes{true}, {{2, 3, 4}}, {p}, {2, 3, 1}, p, {{{1}, {2}}}, 0},
  };
}

}  // namespace mgd::ops::testing
