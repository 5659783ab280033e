// The op shader generators: for one graph node, the GLSL body of a compute
// shader over PHWC4 activations, with its sizes, strides, counts and scalar
// constants declared as parameters (ShaderParams: inlined unless program
// sharing finds them differing between otherwise equal shaders,
// shaders/parameters.h), plus the weight buffers to upload at prepare. The
// op registry (ops/) lists each op's generators; a generator that cannot
// handle a node says why, and that reason is what `mgd ops` shows.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "layout/phwc4.h"
#include "model/graph.h"
#include "shaders/dialect.h"
#include "shaders/precision.h"

namespace mgd::shaders {

// A graph tensor as the delegate holds it: PHWC4 of this BHWC shape.
// Rank 1 [c] -> 1x1x1xc, rank 2 [b,c] -> bx1x1xc, rank 3 [b,w,c] -> bx1xwxc.
absl::StatusOr<layout::Bhwc> ToBhwc(const Shape& shape);
// Whether two shapes are one PHWC4 view (a reshape between them moves no data).
bool SameBhwc(const Shape& a, const Shape& b);

// Whether a tensor of `type` can be held as a GPU activation (PHWC4 floats):
// float32, and bool as 0.0/1.0 (docs/design.md; only ops whose definition has
// gpu_bools read or write bools).
inline bool IsActivationType(DataType type) { return type == DataType::kFloat32 || type == DataType::kBool; }

// The margins of a spatial zero PAD fused into a convolution or pool.
struct FusedPad {
  int top = 0, left = 0, bottom = 0, right = 0;
  bool active() const { return top || left || bottom || right; }
};

// Below this many output vec4s a convolution leaves most of a mid-range GPU
// idle with one invocation per output (docs/perf.md).
constexpr int64_t kSplitConvOutputs = 8192;

// The outputs one invocation of a linkable shader computes: `x` pixels
// along a row times `slices` slices (register tiling: a convolution reads
// each input vec4 once for all the block's slices and each weight once for
// all its pixels).
struct OutputBlock {
  int x = 1, slices = 1;
  // The grid's x runs over every row's blocks, row after row (y is 1):
  // for GPUs that vectorize invocations along x alone. llvmpipe runs 8
  // consecutive x invocations as one SIMD vector, so a 14-pixel row in
  // blocks of 7 (a grid 2 wide in x) filled 2 of its 8 lanes, and a 7-pixel
  // one 1 (docs/perf.md: MobileNet v1 1.8x faster on lavapipe flat).
  bool flat = false;
  int count() const { return x * slices; }
  bool single() const { return count() == 1; }
};

// A plain convolution's block where the GPU's table says nothing: 4
// accumulators, about what TFLite's GPU delegate gives a mobile GPU's
// convolution thread.
constexpr OutputBlock kConvBlock{2, 2};

// The least maximums of GLES 3.1 and Vulkan: invocations per workgroup and
// shared memory per workgroup, which shaders sharing memory keep within
// unless the device's table says more.
constexpr int kMaxInvocations = 128;
constexpr int kSharedBytes = 16384;

// The workgroup of a squeeze-and-excitation gate's shader, and of a split
// pool's, where no table says (the least that every device runs).
constexpr int kGateInvocations = kMaxInvocations;

// A one-workgroup reduction's invocations: `invocations` (the table's
// gate_invocations), halved while above kGateInvocations and its shared
// memory, `shared_bytes(n)` bytes for n invocations, exceeds kSharedBytes.
template <typename SharedBytes>
int WithinSharedMemory(int invocations, SharedBytes shared_bytes) {
  while (invocations > kGateInvocations && shared_bytes(invocations) > kSharedBytes) invocations /= 2;
  return invocations;
}

struct NodeContext {
  const Graph* graph = nullptr;
  int node_index = -1;
  const Node* node = nullptr;
  // fp16 arithmetic is off on software GPUs, where RelaxedPrecision turns
  // into emulated half floats, 100x slower (the delegate decides).
  Precision precision;
  // A PAD fused into this node's reads; `node` is then a copy whose input 0
  // is the PAD's input.
  FusedPad pad;
  // Shaders whose workgroups cooperate through shared memory (and so must
  // not return before a barrier) are allowed; off when a fused channel PAD
  // needs its own early exit.
  bool workgroup_reduction = true;
  // A convolution with at most this many output vec4s splits each sum
  // across several invocations (the device's table may say otherwise).
  int64_t split_conv_outputs = kSplitConvOutputs;
  // Whether a depthwise convolution computed inside a 1x1 convolution whose
  // sums split (above) splits them too, in one dispatch, rather than
  // running as its own dispatch before the split convolution.
  bool split_fused_sums = false;
  // The block of outputs a convolution's invocation computes, when the
  // convolution can (the device's table may say; see OutputBlock).
  OutputBlock conv_block = kConvBlock;
  // The invocations of a squeeze-and-excitation gate's one workgroup, and
  // the most of a split pool's (the device's table may say more, within the
  // device's limit; a power of two): more pool their input with more loads
  // in flight.
  int gate_invocations = kGateInvocations;
  // Filters whose float values lie on an 8-bit grid (an int8 model's, kept
  // with their quantization by passes/int8_as_float.h) are stored as 8-bit
  // integers and scaled in the shader: a quarter of fp32's memory and
  // traffic, half of fp16's. False: stored as any float constant.
  bool int8_filters = false;
  // ... and convolutions whose input lies on an int8 grid (an int8 model's,
  // passes/int8_as_float.h) sum the integers in dot products of four
  // (ShaderCode::int8_dot): only where the device has them, on Vulkan.
  bool int8_dot = false;
  // An elementwise operand (input position) that is the input of a fused
  // channel PAD: it has fewer channels, and reads as zeros past them.
  int channel_padded_operand = -1;
  // Only whether the node is supported: constants (packed weights) are left
  // empty, since packing costs time in proportion to the model's weights.
  bool support_only = false;
  // A node the shader computes first, inside itself, whose output is
  // `node`'s input 0 and never reaches memory (a depthwise convolution
  // before a pointwise one). `node` is then a copy whose input 0 is the
  // producer's input 0, and `pad` applies to the producer's reads. Only the
  // op's gpu_with_producer generators take such a context.
  const Node* producer = nullptr;
  int producer_index = -1;
  // A node computed before the producer, whose output is the producer's
  // input 0 and never reaches memory either (a squeeze-and-excitation
  // gate's pool before its squeeze); `node`'s input 0 is then the source's.
  const Node* source = nullptr;
  int source_index = -1;

  const Tensor& input(size_t i) const { return graph->tensors[static_cast<size_t>(node->inputs[i])]; }
  const Tensor& output(size_t i) const { return graph->tensors[static_cast<size_t>(node->outputs[i])]; }
  bool has_input(size_t i) const { return i < node->inputs.size() && node->inputs[i] != kNoTensor; }
};

struct GeneratedShader {
  // Buffers of `code`, in binding order: first the node's activation inputs
  // listed in `activation_inputs` (node input positions; a constant tensor
  // there is uploaded once in PHWC4), then its outputs, then `constants`
  // (e.g. packed weights, fp32), uploaded once at prepare.
  ShaderCode code;
  std::vector<int> activation_inputs;
  // Node input positions read as the partition's input buffer itself, in
  // the tensor's own type and BHWC order (an 8-bit image: no conversion
  // dispatch, no float copy); bound after the activation inputs, before the
  // outputs. The tensor must be an input of the partition.
  std::vector<int> raw_inputs;
  // Node input positions the shader reads and then writes in place: the
  // variable tensors of an LSTM's state, which the partition also gives back
  // (interpreter/partition.cc). Bound after the outputs, before `constants`.
  std::vector<int> updated_inputs;
  std::vector<std::vector<float>> constants;
  std::array<uint32_t, 3> groups{1, 1, 1};
  // True: the body, after glsl::OutputPrologue(output) (which the compiler
  // puts before it), ends with `vec4 value` holding output 0 at (b, s, y, x)
  // not yet stored; the compiler appends fused elementwise ops, zeroes the
  // padding lanes and stores. Linkable bodies read inputs only at indices
  // built from b, s, y, x (never out_index), so the output may be re-laid
  // out (a fused channel PAD). False: the body is complete, prologue
  // included, and stores its outputs itself.
  bool linkable = true;
  layout::Bhwc output;  // output 0 as PHWC4
  // A linkable shader's own prologue (declaring x, y, z, b, s, out_index)
  // instead of glsl::OutputPrologue; it has returned for the invocations
  // that store nothing by the end of the body.
  std::string prologue;
  // Above one output per invocation, the shader's own prologue declares y,
  // b and the block's first output x and s (returning when that one lies
  // outside), and the body ends with `vec4 value<k>` for k = j * block.x + i
  // holding the output at (x + i, s + j); the compiler links the tails and
  // stores each one that lies inside the output. `groups` then covers
  // BlockedExtent(output, block).
  OutputBlock block{};
};

// A node as an update of `value` (vec4) in a producer's shader: the operand
// at node input `fused_input` is `value`; the other activation operands are
// buffers named PREFIX + "in" + k, in the order of `activation_inputs`;
// the parameters `code` names are in `params`, named from PREFIX too.
struct ElementwiseUpdate {
  std::string code;
  ShaderParams params;
  std::vector<int> activation_inputs;
};
// The node's update from its op's definition (ops/; shaders/dispatch.cc), or
// an error when the op is not elementwise.
absl::StatusOr<ElementwiseUpdate> GenerateElementwiseUpdate(const NodeContext& ctx, int fused_input,
                                                             const std::string& prefix);
// Whether the op's definition has an ElementwiseUpdate (fusion's tails).
bool IsElementwise(OpKind op);

// A node the GPU cannot run yields an error whose message is the reason.
using Generator = std::function<absl::StatusOr<GeneratedShader>(const NodeContext&)>;

// The generator for a node's op, or an error saying why there is none
// (with ctx.producer: the op's generators that compute their input's
// producer themselves).
absl::StatusOr<GeneratedShader> GenerateShader(const NodeContext& ctx);
// Whether node `consumer` of `graph` can compute node `producer`, the
// maker of its input 0, inside its own shader (the fusion planner asks; the
// op's generator decides, at any precision).
// With a `source` (>= 0): the maker of the producer's input 0 computed
// first, in the same shader.
bool TakesProducer(const Graph& graph, int producer, int consumer, int source = -1);
// Whether node `n`'s shader (computing `producer` and `source` inside, as
// TakesProducer) is linkable: it leaves its store to the compiler, which the
// fusion planner may then move (through a RESHAPE, into a CONCATENATION).
bool LeavesItsStore(const Graph& graph, int n, int producer = -1, int source = -1);

// Dispatch grid for one invocation per (x, y, batch * slice) of `shape` with
// `workgroup`.
std::array<uint32_t, 3> GridFor(const layout::Bhwc& shape, const std::array<uint32_t, 3>& workgroup,
                                OutputBlock block = {});
// The invocations (x, y, batch * slice) that cover `shape` in blocks
// ((x blocks * y, 1, batch * slice) when flat).
std::array<uint32_t, 3> BlockedExtent(const layout::Bhwc& shape, OutputBlock block = {});


// A one-dimensional grid of 64-wide workgroups over every output vec4 of
// `shape`, x fastest: no idle lanes at the edges of small or odd-sized
// tensors, and a warp reads consecutive vec4s. Empty when the grid would
// exceed the 65535 workgroups every device allows in x.
std::optional<std::array<uint32_t, 3>> LinearGridFor(const layout::Bhwc& shape);
constexpr std::array<uint32_t, 3> kLinearWorkgroup{64, 1, 1};

}  // namespace mgd::shaders
