// The pieces of generated code the op generators (ops/) share.
#pragma once

#include <string>
#include <vector>

#include "model/constants.h"
#include "shaders/generator.h"

namespace mgd::shaders {

// The node's BHWC input/output shapes, or Unimplemented for other ranks.
absl::StatusOr<layout::Bhwc> InputBhwc(const NodeContext& ctx, size_t i);
absl::StatusOr<layout::Bhwc> OutputBhwc(const NodeContext& ctx, size_t i);
// The BHWC dimension (0..3) an axis of a rank-`rank` tensor maps to (ToBhwc).
int BhwcAxis(int axis, int rank);

// A linkable shader over `out` reading the node inputs `activation_inputs`
// as buffers in0, in1, ... and writing out0; workgroup 8x8x1, the grid
// covering `out`. The compiler puts glsl::OutputPrologue before the body.
GeneratedShader StartShader(const NodeContext& ctx, const layout::Bhwc& out, std::vector<int> activation_inputs);
// Whether node input `i` is an input of the whole graph: it comes from the
// host, so the partition has it in its own input buffer, which a generator
// may read as given (AddRawInput) instead of as a PHWC4 activation.
bool IsGraphInput(const NodeContext& ctx, size_t i);
// Reads node input `position` as its partition input buffer `name` of
// `element_type` elements (GeneratedShader::raw_inputs); call after
// StartShader, in the order of the raw inputs.
void AddRawInput(GeneratedShader& g, int position, const std::string& name, const std::string& element_type);
// An int32 or int64 index tensor (node input `position`: GATHER's indices,
// ONE_HOT's) that the body reads as `name[i]` and turns to int: a constant
// becomes a float buffer (exact: values are clamped to [-1, 2^24], past any
// position), an int32 tensor computed at run time is read as given
// (AddRawInput). Call before adding the shader's other constants.
absl::Status AddIndexInput(const NodeContext& ctx, GeneratedShader& g, int position, const std::string& name);
// A CUSTOM node's registered name ("" for builtins).
std::string CustomName(const Node& node);
// Makes `code` read its activation buffer `in` (PHWC4, of `shape`) times a
// per-channel gate as it reads it: a new buffer IN_gate, appended to
// code.buffers, of shape [batch, 1, 1, channels]. Every body reads through
// NAME_at (dialect.h), so redefining in_at scales whatever any kernel reads,
// slice i / (height * width) by the gate's. False, and `code` unchanged,
// where the code has no such buffer or reads it before main().
bool ReadThroughGate(ShaderCode& code, const std::string& in, const layout::Bhwc& shape);

namespace glsl {

// Shaders name the sizes of the tensors they index (parameters `params`
// declares): NAME_W, NAME_H and NAME_S (slices) for the tensor a buffer NAME
// holds, OUT_W, OUT_H, OUT_Z (batch * slices) or OUT_N (vec4s) for the grid.

// Declares x, y, z (= batch * slices + slice), b, s for one output vec4 of
// `out` and returns early outside it; `out_index` is its PHWC4 index. With
// `linear`, the grid is one-dimensional (see LinearGridFor).
std::string OutputPrologue(ShaderParams& params, const layout::Bhwc& out, bool linear = false);
// The prologue of a shader whose invocations compute blocks of outputs
// (OutputBlock): declares y, b and the block's first output x, s, and
// returns when that one lies outside `out`; a flat block finds x and y
// from the grid's x (BlockedExtent).
std::string BlockPrologue(ShaderParams& params, const layout::Bhwc& out, OutputBlock block);
// `per_output` (which reads `value`, x, s and out_index, and stores) once
// for each output of the block that lies inside `out`, `value` being the
// body's value<k>.
std::string ForEachBlockOutput(ShaderParams& params, const layout::Bhwc& out, OutputBlock block,
                               const std::string& per_output);
// A loop over the four lanes of output vec4 `value` (declared here, zero
// past the last channel) running `lane` (lines that set value[k]) with the
// lane's channel c and, with `flat_position`, its flat BHWC position
// `position` in `out`: for ops whose every lane reads from elsewhere.
std::string ForEachLane(ShaderParams& params, const layout::Bhwc& out, const std::string& lane,
                        bool flat_position = false);
// "int b = ..., s = ...;": the batch and slice of output slice row z.
std::string BatchAndSlice(ShaderParams& params, const layout::Bhwc& out);
// The PHWC4 index of (b, slice, yy, xx) in `tensor`, of `shape`, as GLSL.
std::string Index(ShaderParams& params, const std::string& tensor, const layout::Bhwc& shape, const std::string& b,
                  const std::string& slice, const std::string& yy, const std::string& xx);
// buffer_at(Index(...)).
std::string Read(ShaderParams& params, const std::string& buffer, const layout::Bhwc& shape, const std::string& b,
                 const std::string& slice, const std::string& yy, const std::string& xx);
// Read(...), or zeros where (yy, xx) lies outside the tensor's height and
// width: a bilinear sample's taps at the border.
std::string ReadOrZero(ShaderParams& params, const std::string& buffer, const layout::Bhwc& shape, const std::string& b,
                       const std::string& slice, const std::string& yy, const std::string& xx);
// The taps of a transposed window (a transposed convolution's, an
// unpooling's) that reach output (y, x): for each, `inner` sees ky, kx and
// the input pixel iy, ix. In the CPU kernels' order (input rows, then
// columns, ascending: tap indices descending); pad_h/pad_w are cut from the
// output's top/left.
std::string TransposedWindowLoops(ShaderParams& params, const layout::Bhwc& in, int kh, int kw, int stride_h,
                                  int stride_w, int pad_h, int pad_w, const std::string& inner);
// A vec4 expression: `v` (a variable) clamped to [lo, hi] (hi may be +Inf),
// NaN staying NaN (docs/numerics.md). GLSL leaves max, min and clamp of a
// NaN undefined (GPUs return either operand), so a NaN is picked out with
// isnan, which is defined wherever the GPU has NaN at all.
std::string Clamp(const std::string& v, float lo, float hi);
// "v = ...;" for a fused activation; empty for NONE.
std::string Activation(Activation activation, const std::string& v);
// vec4 expressions: max / min of two variables, NaN when either is NaN.
std::string MaxKeepingNan(const std::string& a, const std::string& b);
std::string MinKeepingNan(const std::string& a, const std::string& b);
// tanh of a variable, NaN for NaN and +-1 for +-Inf on every GPU.
std::string Tanh(const std::string& v);
// A float literal (FloatLiteral), for numbers that are no parameter.
inline std::string Float(float value) { return FloatLiteral(value); }
// `const vec4 name[n] = vec4[](...)` from per-channel values padded to slices.
std::string ConstVec4Array(const std::string& name, const std::vector<float>& padded);
// Zeroes the lanes of the last slice that lie past `channels`.
std::string MaskPadding(ShaderParams& params, int channels, const std::string& v);
// "highp " when sums must stay fp32 in an fp16 shader, else "".
std::string AccumulatorPrecision(const NodeContext& ctx);

}  // namespace glsl
}  // namespace mgd::shaders
