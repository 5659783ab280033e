// The CPU kernel interface inside the interpreter: every builtin op and every
// custom op (through an adapter over its C registration) is a Kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/graph.h"

namespace mgd {

// A tensor as a kernel sees it: dtype, current shape, and its bytes (null at
// prepare for tensors computed at run time; set for constants).
struct TensorRef {
  int index = kNoTensor;
  std::string name;
  DataType type = DataType::kFloat32;
  Shape shape;
  uint8_t* data = nullptr;
  size_t bytes = 0;
  bool is_constant = false;

  int64_t elements() const { return NumElements(shape); }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(data); }
  int dim(int i) const { return shape[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(shape.size()); }
};

// What a kernel gets: its node, its tensors, and a way to fail with a message
// that names the node.
struct KernelContext {
  const Graph* graph = nullptr;
  int node_index = -1;
  const Node* node = nullptr;
  std::vector<TensorRef*> inputs;   // null for an omitted optional input
  std::vector<TensorRef*> outputs;

  TensorRef& in(size_t i) const { return *inputs[i]; }
  TensorRef& out(size_t i) const { return *outputs[i]; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  absl::Status Error(const std::string& message) const;
  // Checks that a computed output shape matches the tensor's shape.
  absl::Status ExpectOutputShape(size_t output, const Shape& expected) const;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Checks shapes and parameters (constant inputs are readable), precomputes
  // what invoke needs. May resize outputs (custom ops do).
  virtual absl::Status Prepare(KernelContext& ctx) = 0;
  virtual absl::Status Invoke(KernelContext& ctx) = 0;
};

// The builtin kernel for an op kind (null for kCustom).
std::unique_ptr<Kernel> CreateBuiltinKernel(const Node& node);

}  // namespace mgd
