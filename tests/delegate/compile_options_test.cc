// The compilation cache keys entries by CompileOptionsText: every field of
// the options must change it, or a changed option gives stale cache hits.
// The structured bindings below stop compiling when a field is added, so
// that the new field is added here too.
#include <gtest/gtest.h>

#include <set>

#include "delegate/compile_options.h"

namespace mgd {
namespace {

TEST(CompileOptionsText, EveryFieldChangesTheKey) {
  const CompileOptions base;
  std::vector<CompileOptions> changed;
  auto vary = [&](auto change) {
    CompileOptions o = base;
    change(o);
    changed.push_back(o);
  };
  vary([](CompileOptions& o) {
    auto& [precision, linear_grid, dont_unroll, fusion, share_programs, memory, fp32_layers, split_conv_outputs,
           split_fused_sums, conv_block, gate_invocations, int8_filters, int8_dot] = o;
    linear_grid = !linear_grid;
  });
  vary([](CompileOptions& o) { o.fp32_layers = {"head"}; });
  vary([](CompileOptions& o) { o.fp32_layers = {"head", "tail"}; });
  // Names are length-prefixed: one name holding a space is not two names.
  vary([](CompileOptions& o) { o.fp32_layers = {"head tail"}; });
  vary([](CompileOptions& o) { o.dont_unroll = !o.dont_unroll; });
  vary([](CompileOptions& o) { o.split_conv_outputs = 32768; });
  vary([](CompileOptions& o) { o.split_fused_sums = !o.split_fused_sums; });
  vary([](CompileOptions& o) { o.conv_block.x = 1; });
  vary([](CompileOptions& o) { o.conv_block.slices = 4; });
  vary([](CompileOptions& o) { o.conv_block.flat = true; });
  vary([](CompileOptions& o) { o.gate_invocations = 512; });
  vary([](CompileOptions& o) { o.fusion = !o.fusion; });
  vary([](CompileOptions& o) { o.int8_filters = !o.int8_filters; });
  vary([](CompileOptions& o) { o.int8_dot = !o.int8_dot; });
  vary([](CompileOptions& o) { o.share_programs = !o.share_programs; });
  vary([](CompileOptions& o) {
    auto& [storage, arithmetic, accumulation] = o.precision;
    storage = StorageType::kFloat16;
  });
  vary([](CompileOptions& o) { o.precision.arithmetic = ArithmeticType::kFloat16; });
  vary([](CompileOptions& o) { o.precision.accumulation = ArithmeticType::kFloat16; });
  vary([](CompileOptions& o) {
    auto& [strategy, problem, alignment, max_object_bytes] = o.memory;
    strategy = memory::Strategy::kNaive;
  });
  vary([](CompileOptions& o) { o.memory.problem = memory::Problem::kOffsets; });
  vary([](CompileOptions& o) { o.memory.problem = memory::Problem::kSharedObjects; });
  vary([](CompileOptions& o) { o.memory.alignment = 256; });
  vary([](CompileOptions& o) { o.memory.max_object_bytes = 1 << 20; });

  std::set<std::string> keys{CompileOptionsText(base)};
  for (const CompileOptions& o : changed) {
    EXPECT_TRUE(keys.insert(CompileOptionsText(o)).second) << "not a new key:\n" << CompileOptionsText(o);
  }
  EXPECT_EQ(keys.size(), changed.size() + 1);
}

TEST(CompileOptionsText, EqualOptionsGiveEqualKeys) {
  CompileOptions a, b;
  a.precision = b.precision = Precision::Fp16();
  a.memory.alignment = b.memory.alignment = 64;
  EXPECT_EQ(CompileOptionsText(a), CompileOptionsText(b));
}

}  // namespace
}  // namespace mgd
