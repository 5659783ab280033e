// Everything mgd knows about one builtin op, as the rest of mgd sees it: the
// reader, writer and validator (model/), the interpreter's CPU kernels and
// the GPU delegate's generators all look an op up here instead of switching
// on its kind. An op's folder under ops/ fills one in; ops/registry.cc lists
// the folders, and Register adds one at run time (docs/design.md, "How to
// add an op").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"
#include "model/graph.h"
#include "model/node_checker.h"
#include "shaders/generator.h"

namespace mgd::ops {

struct DecodeContext;  // ops/tflite_io.h
struct EncodeContext;

// What the post-training quantizer (quantizer/, `mgd quantize`) may make of
// an op: its int8 output's parameters and which constant inputs are
// weights. The op's 8-bit CPU kernel takes what this describes, and so does
// TFLite's; kNone leaves the op in float, between a DEQUANTIZE and a
// QUANTIZE.
struct QuantizeRule {
  enum class Output : uint8_t {
    kNone,        // no 8-bit kernel (or none TFLite has)
    kCalibrated,  // the output's calibrated range
    kInput,       // input 0's parameters: the op moves values (RESHAPE, MAX_POOL_2D)
    kFixed,       // TFLite's fixed int8 parameters (LOGISTIC's 1/256 and -128)
  };
  Output output = Output::kNone;
  float scale = 0.0f;  // kFixed
  int32_t zero_point = 0;
  int filter = -1;       // a constant filter input: int8 of zero point 0, ...
  int filter_axis = -1;  // ... per channel along this axis (-1: per tensor)
  int bias = -1;         // an int32 bias input, of scale input x filter
  // TFLite's int8 kernel takes inputs of the output's parameters only
  // (CONCATENATION): the quantizer requantizes those that differ.
  bool inputs_share_output = false;
  // Whether a node's output holds only its inputs' values and real zeros
  // (the zero point): no arithmetic, no clamp that may fall off the grid
  // (PAD, MAX_POOL_2D without a fused RELU6). With inputs of the output's
  // parameters its values lie on the output's grid already, and the GPU,
  // running the model as float, rounds nothing after it
  // (passes/int8_as_float.h). Null: no.
  bool (*moves_values)(const Node& node) = nullptr;
};

// A QuantizeRule::moves_values for ops that only move values.
inline bool AlwaysMovesValues(const Node&) { return true; }
// One for ops that move values and clamp them by a fused activation in
// attributes A: none, or RELU's 0, which every 8-bit grid holds.
template <typename A>
bool ClampsOnTheGrid(const Node& node) {
  const Activation a = AttributesOf<A>(node.attributes).activation;
  return a == Activation::kNone || a == Activation::kRelu;
}

struct OpDefinition {
  OpKind op{};  // TFLite's builtin code; any code, also one OpKind does not name
  // A custom op (op == kCustom) is known by its name instead, and its
  // options are opaque bytes that decode_custom reads.
  const char* custom_name = nullptr;

  // The typed attributes from the operator's options table (null when the
  // op has none: its nodes carry std::monostate). Called for every node read.
  absl::StatusOr<Attributes> (*decode)(const DecodeContext& file) = nullptr;
  // The options table for a node's attributes (null when the op has none).
  void (*encode)(const Node& node, EncodeContext& file) = nullptr;
  // A custom op's options from their bytes, with an error naming the field
  // ("custom_options: ..."); the interpreter keeps the result in the node
  // (CustomAttributes::decoded).
  absl::StatusOr<OpAttributes> (*decode_custom)(const std::vector<uint8_t>& options) = nullptr;

  // The rules a node must meet to be run at all (arity, dtypes, ranks,
  // constant inputs, attribute ranges), with messages naming the field.
  // A custom op's kernel checks its node in Prepare instead, as a user's does.
  absl::Status (*validate)(const NodeChecker& node) = nullptr;

  // The CPU reference kernel; its Prepare infers and checks the output
  // shapes from the inputs'.
  std::unique_ptr<Kernel> (*cpu_kernel)(const Node& node) = nullptr;

  // The floating-point operations one run of the node does, for
  // partitioning by cost (delegate/cost_model.cc). Null: that file's rule
  // (each constant weight used once per output row, and one operation per
  // output element and input), which covers convolutions, dense layers and
  // LSTMs; ops whose work is in their activations say their own.
  double (*flops)(const Graph& graph, const Node& node) = nullptr;

  // True when output 0 of the node is its input 0 unchanged, element for
  // element (a RESHAPE, a PAD of zeros, a whole SLICE): a graph pass lets the
  // output alias the input where both are stored alike
  // (passes/remove_no_ops.cc). Null: never.
  bool (*is_identity)(const Graph& graph, const Node& node) = nullptr;
  // The fused activation that computes this op (RELU, RELU6, RELU_N1_TO_1):
  // a graph pass folds such a node into the convolution producing its input
  // (passes/fold_activations.cc). kNone: no such activation.
  Activation as_activation = Activation::kNone;

  // GPU generators, tried in order until one takes the node (a special case
  // before the general one). None: the op stays on the CPU.
  std::vector<shaders::Generator> gpu;
  // Generators that also compute the producer of the node's input 0 in the
  // same shader (NodeContext::producer), when the fusion planner asks for it.
  std::vector<shaders::Generator> gpu_with_producer{};
  // An elementwise op's GPU code as an update of `value` (shaders/generator.h),
  // which fusion appends to its producer's shader; null for other ops.
  absl::StatusOr<shaders::ElementwiseUpdate> (*elementwise)(const shaders::NodeContext& ctx, int fused_input,
                                                            const std::string& prefix) = nullptr;
  // The non-float activation types its GPU generators read straight from
  // the partition's input buffer, in their own type (GeneratedShader::
  // raw_inputs): an image's bytes, token ids. Other non-float activations
  // stay on the CPU.
  std::vector<DataType> raw_types{};
  // Its GPU generators read and write bool tensors, which a partition holds
  // as 0.0/1.0 floats (converted from and to TFLite's bytes at its edges):
  // the comparisons, SELECT_V2, CAST. Other ops leave bools to the CPU.
  bool gpu_bools = false;

  QuantizeRule quantize{};
};

// An is_identity for ops that only relabel their input's shape.
inline bool AlwaysIdentity(const Graph&, const Node&) { return true; }

// A cpu_kernel that makes a `KernelClass` from constant arguments:
// `.cpu_kernel = MakeKernel<PoolKernel, true>`.
template <typename KernelClass, auto... kArgs>
std::unique_ptr<Kernel> MakeKernel(const Node&) {
  return std::make_unique<KernelClass>(kArgs...);
}

}  // namespace mgd::ops
