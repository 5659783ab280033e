#include "model/graph.h"

#include <fmt/format.h>

namespace mgd {

size_t ElementSize(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kInt8: return 1;
    case DataType::kUInt8: return 1;
    case DataType::kBool: return 1;
  }
  return 0;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "float32";
    case DataType::kFloat16: return "float16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kInt8: return "int8";
    case DataType::kUInt8: return "uint8";
    case DataType::kBool: return "bool";
  }
  return "?";
}

const char* ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kNone: return "NONE";
    case Activation::kRelu: return "RELU";
    case Activation::kReluN1To1: return "RELU_N1_TO_1";
    case Activation::kRelu6: return "RELU6";
    case Activation::kTanh: return "TANH";
    case Activation::kSignBit: return "SIGN_BIT";
  }
  return "?";
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string NodeLabel(const Graph& graph, int node_index) {
  if (node_index < 0 || static_cast<size_t>(node_index) >= graph.nodes.size()) {
    return fmt::format("node {}", node_index);
  }
  const Node& node = graph.nodes[static_cast<size_t>(node_index)];
  if (const auto* custom = std::get_if<CustomAttributes>(&node.attributes)) {
    return fmt::format("node {} (custom {})", node_index, custom->name);
  }
  return fmt::format("node {} ({})", node_index, OpName(node.op));
}

std::string TensorLabel(const Graph& graph, int tensor_index) {
  if (tensor_index < 0 || static_cast<size_t>(tensor_index) >= graph.tensors.size()) {
    return fmt::format("tensor {}", tensor_index);
  }
  return fmt::format("tensor {} '{}'", tensor_index,
                     graph.tensors[static_cast<size_t>(tensor_index)].name);
}

}  // namespace mgd
