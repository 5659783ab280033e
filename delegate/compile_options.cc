#include "delegate/compile_options.h"

#include <fmt/format.h>

namespace mgd {
namespace {

std::string PrecisionText(const Precision& p) {
  const auto& [storage, arithmetic, accumulation] = p;  // every field (see the header)
  return fmt::format("storage {} arithmetic {} sums {}", StorageTypeName(storage), ArithmeticTypeName(arithmetic),
                     ArithmeticTypeName(accumulation));
}

std::string MemoryText(const MemoryOptions& m) {
  const auto& [strategy, problem, alignment, max_object_bytes] = m;
  return fmt::format("memory {} {} alignment {} max {}", memory::StrategyName(strategy),
                     problem ? memory::ProblemName(*problem) : "any", alignment, max_object_bytes);
}

}  // namespace

std::string CompileOptionsText(const CompileOptions& options) {
  const auto& [precision, linear_grid, dont_unroll, fusion, share_programs, memory, fp32_layers, split_conv_outputs,
               split_fused_sums, conv_block, gate_invocations, int8_filters, int8_dot] = options;
  std::string text = fmt::format(
      "{}\nlinear {} dont_unroll {} fusion {} shared {} split {}{} block {}x{}{} gate {} int8 filters {} dot {}\n{}\n",
      PrecisionText(precision), linear_grid, dont_unroll, fusion, share_programs, split_conv_outputs,
      split_fused_sums ? " fused too" : "", conv_block.x, conv_block.slices, conv_block.flat ? " flat" : "",
      gate_invocations, int8_filters, int8_dot, MemoryText(memory));
  // Length-prefixed: a tensor name may hold any byte.
  if (!fp32_layers.empty()) text += "fp32 layers";
  for (const std::string& name : fp32_layers) text += fmt::format(" {}:{}", name.size(), name);
  return fp32_layers.empty() ? text : text + "\n";
}

}  // namespace mgd
