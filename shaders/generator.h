// The op shader generators: for one graph node, the GLSL body of a compute
// shader over PHWC4 activations, with every scalar parameter (sizes, strides,
// padding, axes) and small constants inlined, plus the weight buffers to
// upload at prepare. A registry maps op kinds to generators; a generator that
// cannot handle a node says why, and that reason is what `mgd ops` shows.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "layout/phwc4.h"
#include "model/graph.h"
#include "shaders/dialect.h"

namespace mgd::shaders {

// A graph tensor as the delegate holds it: PHWC4 of this BHWC shape.
// Rank 1 [c] -> 1x1x1xc, rank 2 [b,c] -> bx1x1xc, rank 3 [b,w,c] -> bx1xwxc.
absl::StatusOr<layout::Bhwc> ToBhwc(const Shape& shape);

struct NodeContext {
  const Graph* graph = nullptr;
  int node_index = -1;
  const Node* node = nullptr;
  bool fp16 = false;  // activations stored as f16vec4 (precision loss allowed)

  const Tensor& input(size_t i) const { return graph->tensors[static_cast<size_t>(node->inputs[i])]; }
  const Tensor& output(size_t i) const { return graph->tensors[static_cast<size_t>(node->outputs[i])]; }
  bool has_input(size_t i) const { return i < node->inputs.size() && node->inputs[i] != kNoTensor; }
};

struct GeneratedShader {
  // Buffers of `code`, in binding order: first the node's activation inputs
  // listed in `activation_inputs` (node input positions), then its outputs,
  // then `constants` (e.g. packed weights), uploaded once at prepare.
  ShaderCode code;
  std::vector<int> activation_inputs;
  std::vector<std::vector<float>> constants;
  std::vector<uint8_t> params;  // values of code.params, 4 bytes each
  std::array<uint32_t, 3> groups{1, 1, 1};
};

// A node the GPU cannot run yields an error whose message is the reason.
using Generator = std::function<absl::StatusOr<GeneratedShader>(const NodeContext&)>;

// The generator for a node's op, or an error saying why there is none.
absl::StatusOr<GeneratedShader> GenerateShader(const NodeContext& ctx);

// Dispatch grid for one invocation per (x, y, batch * slice) of `shape` with
// `workgroup`.
std::array<uint32_t, 3> GridFor(const layout::Bhwc& shape, const std::array<uint32_t, 3>& workgroup);

// GLSL for the storage element of activations: "vec4" or "f16vec4".
inline const char* Vec4Type(bool fp16) { return fp16 ? "f16vec4" : "vec4"; }

}  // namespace mgd::shaders
