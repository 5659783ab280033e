// The Graph IR: what mgd knows about a model after reading and validating it.
// Plain data: the reader fills it from a .tflite file, the writer turns it
// back into one, modelgen and tests build it by hand.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// Constant bytes, immutable once made and shared between copies: its own,
// or a range of a buffer it shares. A Tensor's data is one, so that copying a
// graph (the compiler copies it for its passes) does not copy the weights
// (MobileNet v1's 17 MB took 10-13 ms of a cold prepare on a 2-core
// machine); so is a compiled model's constant (one parsed from a cache entry
// points into the entry instead of copying megabytes of weights out of it).
// Writing goes through mutable_data(), which first gives this copy bytes of
// its own.
class ConstantBytes {
 public:
  ConstantBytes() = default;
  ConstantBytes(std::vector<uint8_t> bytes)  // NOLINT(google-explicit-constructor): owned bytes
      : ConstantBytes(std::make_shared<const std::vector<uint8_t>>(std::move(bytes))) {}
  // `size` bytes at `data`, inside what `owner` keeps alive (a cache entry
  // read into memory), which the caller has bounds-checked.
  ConstantBytes(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
      : whole_(std::move(owner)), data_(data), size_(size) {}
  ConstantBytes& operator=(std::vector<uint8_t> bytes) { return *this = ConstantBytes(std::move(bytes)); }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }
  void truncate(size_t size) { size_ = std::min(size_, size); }
  bool operator==(const ConstantBytes& other) const {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data_, other.data_, size_) == 0);
  }

  // Bytes of this copy's own to write (a copy of the shared ones).
  uint8_t* mutable_data() {
    auto own = std::make_shared<std::vector<uint8_t>>(begin(), end());
    uint8_t* data = own->data();
    *this = ConstantBytes(std::shared_ptr<const std::vector<uint8_t>>(std::move(own)));
    return data;
  }
  void assign(size_t n, uint8_t value) { *this = std::vector<uint8_t>(n, value); }
  template <typename It>
  void assign(It first, It last) {
    *this = std::vector<uint8_t>(first, last);
  }

 private:
  explicit ConstantBytes(const std::shared_ptr<const std::vector<uint8_t>>& owned)
      : whole_(owned), data_(owned->data()), size_(owned->size()) {}

  std::shared_ptr<const void> whole_;  // keeps data_ alive
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

struct Tensor {
  std::string name;
  Shape shape;
  DataType type = DataType::kFloat32;
  // Constant data (little-endian, row-major); empty for tensors computed at run
  // time. A sparse constant holds its compressed values here.
  ConstantBytes data;
  bool is_constant = false;
  // State that a stateful op (LSTM) reads and updates in place: zero when
  // the interpreter is made, kept from one invoke to the next until the app
  // resets it (TFLite's variable tensors). Never constant, never written by
  // a node's outputs.
  bool is_variable = false;
  // TFLite's quantization parameters. A float activation has them only
  // where passes/int8_as_float.h gives them (the reader drops a file's, as
  // TFLite ignores them): its values then lie on that int8 grid.
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
