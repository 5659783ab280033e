// The Graph IR: what mgd knows about a model after reading and validating it.
// Plain data: the reader fills it from a .tflite file, the writer turns it
// back into one, modelgen and tests build it by hand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <variant>
#include <vector>

#include "model/op_kind.h"

namespace mgd {

enum class DataType : uint8_t { kFloat32, kFloat16, kInt32, kInt64, kInt8, kUInt8, kBool };

// Bytes per element of a dtype.
size_t ElementSize(DataType type);
const char* DataTypeName(DataType type);

using Shape = std::vector<int32_t>;

// Number of elements of a shape (1 for a scalar). Callers validate dims >= 0.
int64_t NumElements(const Shape& shape);
std::string ShapeToString(const Shape& shape);

struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
};

// TFLite's sparse tensor encoding (a TACO-like format), kept as read.
struct SparseDimension {
  bool is_sparse = false;  // SPARSE_CSR, else DENSE
  int32_t dense_size = 0;
  std::vector<int32_t> array_segments;
  std::vector<int32_t> array_indices;
};

struct Sparsity {
  std::vector<int32_t> traversal_order;
  std::vector<int32_t> block_map;
  std::vector<SparseDimension> dimensions;
};

struct Tensor {
  std::string name;
  Shape shape;
  DataType type = DataType::kFloat32;
  // Constant data (little-endian, row-major); empty for tensors computed at run
  // time. A sparse constant holds its compressed values here.
  std::vector<uint8_t> data;
  bool is_constant = false;
  std::optional<Quantization> quantization;
  std::optional<Sparsity> sparsity;
};

inline constexpr int kNoTensor = -1;  // an omitted optional input

enum class Activation : uint8_t { kNone, kRelu, kReluN1To1, kRelu6, kTanh, kSignBit };
enum class Padding : uint8_t { kSame, kValid };

const char* ActivationName(Activation activation);

class OpAttributes;

// A custom op: its registered name and the opaque option bytes.
struct CustomAttributes {
  std::string name;
  std::vector<uint8_t> options;
  // The options as the op's definition in ops/ decodes them, for the custom
  // ops mgd ships (MediaPipe's): set by the interpreter before the kernel is
  // made. Empty for others, and when a program replaced mgd's kernel.
  std::shared_ptr<const OpAttributes> decoded = nullptr;
};

// The typed attributes of an op defined in ops/ (any copyable struct, declared
// in the op's own folder): the IR does not list them. Immutable once made, so
// copies of a graph share them.
class OpAttributes {
 public:
  template <typename T, typename = std::enable_if_t<std::is_class_v<T> && !std::is_same_v<T, OpAttributes>>>
  OpAttributes(T value)  // NOLINT: implicit, so that `Attributes a = SomeAttributes{...}` reads as before
      : value_(std::make_shared<const T>(std::move(value))), type_(&typeid(T)) {}

  // The attributes as a T, or null when they are of another type.
  template <typename T>
  const T* get_if() const {
    return *type_ == typeid(T) ? static_cast<const T*>(value_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const void> value_;
  const std::type_info* type_;
};

// A node's attributes: none, a custom op's, or a builtin op's own (declared
// in its folder under ops/).
using Attributes = std::variant<std::monostate, CustomAttributes, OpAttributes>;

// An op's attributes (or a custom op's decoded options) as a T, or null when
// it has none or others.
template <typename T>
const T* FindAttributes(const Attributes& attributes) {
  if (const auto* op = std::get_if<OpAttributes>(&attributes)) return op->get_if<T>();
  if (const auto* custom = std::get_if<CustomAttributes>(&attributes)) {
    return custom->decoded != nullptr ? custom->decoded->get_if<T>() : nullptr;
  }
  return nullptr;
}

// An op's attributes as a T; TFLite's defaults (a value-initialized T) when a
// hand-built node carries none or others, as a model without an options
// table gets.
template <typename T>
const T& AttributesOf(const Attributes& attributes) {
  static const T kDefaults{};
  const T* value = FindAttributes<T>(attributes);
  return value != nullptr ? *value : kDefaults;
}

struct Node {
  OpKind op = OpKind::kAdd;
  int32_t version = 1;
  Attributes attributes;
  std::vector<int> inputs;  // tensor indices; kNoTensor for an omitted input
  std::vector<int> outputs;
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // in the model's execution order
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::string description;
  // Model metadata by name (e.g. "reduced_precision_support" -> "fp16accfp32").
  std::map<std::string, std::string> metadata;
};

// A printable name for a node: "node 12 (CONV_2D)" or "node 3 (custom Foo)".
std::string NodeLabel(const Graph& graph, int node_index);
// A printable name for a tensor: "tensor 7 'conv1/weights'".
std::string TensorLabel(const Graph& graph, int tensor_index);

}  // namespace mgd
