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
  const auto& [precision, linear_grid, dont_unroll, fusion, share_programs, memory] = options;
  return fmt::format("{}\nlinear {} dont_unroll {} fusion {} shared {}\n{}\n", PrecisionText(precision), linear_grid,
                     dont_unroll, fusion, share_programs, MemoryText(memory));
}

}  // namespace mgd
