// What, besides the partition, shapes a compiled partition: the options of
// one compile. The compilation cache and offline compiled models key their
// entries by CompileOptionsText, which names every field (a field it left
// out would give stale cache hits: adding one fails to compile there until
// it is keyed).
#pragma once

#include <string>
#include <vector>

#include "delegate/memory_plan.h"
#include "shaders/generator.h"
#include "shaders/precision.h"

namespace mgd {

struct CompileOptions {
  Precision precision;            // see shaders::NodeContext
  bool linear_grid = false;       // shaders::LinearGridFor where it fits
  bool dont_unroll = false;       // shaders::ShaderCode::dont_unroll (software GPUs)
  bool fusion = true;
  bool share_programs = false;    // GpuDelegateOptions::share_programs (applied by the delegate)
  MemoryOptions memory;
  // The accuracy guard: in a compile with fp16 arithmetic, the layers (named
  // by their first output tensor, sorted) whose dispatches compute and sum
  // in fp32 (GpuDelegateOptions::fp32_layers, tables' accuracy entries).
  std::vector<std::string> fp32_layers;
  // shaders::NodeContext::split_conv_outputs (the tables' split_conv_outputs).
  int64_t split_conv_outputs = shaders::kSplitConvOutputs;
  // shaders::NodeContext::split_fused_sums (the tables' split_fused_sums).
  bool split_fused_sums = false;
  // shaders::NodeContext::conv_block (the tables' conv_block_x and _slices).
  shaders::OutputBlock conv_block = shaders::kConvBlock;
  // shaders::NodeContext::gate_invocations (the tables' gate_invocations,
  // within the device's limit).
  int gate_invocations = shaders::kGateInvocations;
  // shaders::NodeContext::int8_filters (GpuDelegateOptions::int8_filters).
  bool int8_filters = false;
  // shaders::NodeContext::int8_dot (GpuDelegate::int8_dot).
  bool int8_dot = false;
};

// Every field of `options`, as text.
std::string CompileOptionsText(const CompileOptions& options);

}  // namespace mgd
