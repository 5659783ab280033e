// The elementwise ops: unary activations and math (unary.cc), binary
// arithmetic with numpy broadcasting and PRELU (binary.cc), comparisons and
// SELECT_V2 (compare.cc), CAST (cast.cc). On the GPU each is an update of
// `value` (update.cc), so that the same code serves a shader of its own and
// a tail fused into its producer's shader; bool tensors are 0.0/1.0 there
// (OpDefinition::gpu_bools), int32 ones only inputs CAST reads as given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"
#include "ops/op_definition.h"

namespace mgd::ops {

// ADD, SUB, MUL, DIV: a fused activation.
struct ElementwiseAttributes {
  Activation activation = Activation::kNone;
};

struct LeakyReluAttributes {
  float alpha = 0.2f;
};

// GELU: x * Phi(x) with the normal distribution's Phi from erfc, or from
// tanh when approximate (TFLite's two forms).
struct GeluAttributes {
  bool approximate = false;
};

std::vector<OpDefinition> UnaryOps();
std::vector<OpDefinition> BinaryOps();
std::vector<OpDefinition> CompareOps();
// CAST between float32, int32, int64, uint8, int8 and bool, the output
// tensor's type saying to what.
std::vector<OpDefinition> CastOps();

// numpy broadcasting: the shape of a op b, or an error naming both.
absl::StatusOr<Shape> BroadcastShape(const KernelContext& ctx, const Shape& a, const Shape& b);
// Strides of `shape` seen through the output shape `out`: 0 on broadcast dims.
std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out);

// f(output index, each operand's offset) over `out`, each operand read
// through its broadcast strides (a template, so that the loop inlines f).
template <typename F>
void ForEachBroadcast(const Shape& out, const std::vector<std::vector<int64_t>>& strides, F f) {
  const size_t rank = out.size();
  std::vector<int> index(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  const int64_t n = NumElements(out);
  for (int64_t i = 0; i < n; ++i) {
    f(i, offsets.data());
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out[d]) {
        for (size_t k = 0; k < strides.size(); ++k) offsets[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < strides.size(); ++k) offsets[k] -= strides[k][d] * (out[d] - 1);
      index[d] = 0;
    }
  }
}

// The ops' OpDefinition::elementwise and their shader of their own.
absl::StatusOr<shaders::ElementwiseUpdate> ElementwiseUpdateOf(const shaders::NodeContext& ctx, int fused_input,
                                                               const std::string& prefix);
absl::StatusOr<shaders::GeneratedShader> ElementwiseShader(const shaders::NodeContext& ctx);

}  // namespace mgd::ops
