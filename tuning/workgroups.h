// Workgroup sizes per dispatch: the key a dispatch is known by, tables of
// tuned sizes per GPU (versioned JSON, tuning/tables/ built in), the lookup
// (exact key, else the nearest shape of the same op, else the op's rule, else
// the default calculator), and the default calculator itself.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gpu/gpu.h"

namespace mgd::tuning {

using Workgroup = std::array<uint32_t, 3>;

// What a dispatch is, as far as its best workgroup goes: the op, the input
// and output extents (width, height, batch x slices) and the weights' shape.
struct DispatchKey {
  std::string op;                 // "CONV_2D", "Convolution2DTransposeBias", "BHWC_TO_PHWC4", ...
  std::array<int, 3> in{}, out{};  // the first activation input; the output
  std::vector<int> weights;       // the head node's first constant input (empty: none)
  bool fp16 = false;
  std::string ToString() const;   // "CONV_2D fp16 in 64x64x1 out 32x32x4 w 16x3x3x3"
  bool operator==(const DispatchKey&) const = default;
};

struct Entry {
  DispatchKey key;
  bool any_shape = false;  // an op rule: applies to every shape of key.op and precision
  Workgroup workgroup{};
  double time_us = 0;          // measured with `workgroup` (0: not measured)
  double default_us = 0;       // measured with the default calculator's choice
};

// Which GPUs a table is for; empty fields match anything. `device` and
// `vendor` are case-insensitive substrings; `driver_min` a dotted version the
// driver must reach.
struct GpuMatch {
  std::string api, vendor, device, driver_min;
};

// The accuracy guard for one model on the table's GPU (mgd tune --accuracy):
// the layers that compute in fp32 when the model runs in fp16, because their
// fp16 arithmetic broke an output's budget on a representative input.
struct AccuracyEntry {
  std::string model;  // SHA-256 (hex) of the model's structure (delegate/find_compiled.h)
  std::string name;   // the model's file name, for people
  double budget = 0;  // the relative RMS every output was held to
  std::vector<std::string> fp32_layers;  // each named by its first output tensor
};

struct Table {
  static constexpr int kVersion = 1;
  std::string name;       // for reports: the file or built-in table it came from
  GpuMatch gpu;
  bool tuned = false;     // false: a heuristic starting table
  std::string notes;
  std::vector<Entry> entries;
  std::vector<AccuracyEntry> accuracy;  // "accuracy": optional
  // "split_conv_outputs": a convolution with at most this many output vec4s
  // splits each sum across invocations (shaders::NodeContext); 0: not said.
  // GPUs with many cores want it higher than the default.
  int64_t split_conv_outputs = 0;
  // "program_threads": how many threads a start without a cache builds
  // programs on (GL: one helper context each; 1: the device's own context
  // alone); 0: not said (one per core). NVIDIA's GL driver compiles one
  // program at a time across contexts, so helpers only cost it.
  int64_t program_threads = 0;
  // "gate_invocations": the workgroup of a squeeze-and-excitation gate's
  // shader, and the most of a split pool's (shaders::NodeContext::
  // gate_invocations: 128 up to 1024, a power of two); 0: not said. GPUs
  // with many cores pool faster with more.
  int64_t gate_invocations = 0;
  // "conv_block_x", "conv_block_slices": the block of outputs a plain
  // convolution's invocation computes (shaders::OutputBlock: pixels along a
  // row, output slices); 0: not said.
  int64_t conv_block_x = 0, conv_block_slices = 0;
  // "conv_block_flat": whether those blocks' grid runs over every row's
  // blocks in x (shaders::OutputBlock::flat), for GPUs that vectorize
  // invocations along x alone (llvmpipe); unset: not said (false).
  std::optional<bool> conv_block_flat;
  // "split_fused_sums": whether a depthwise convolution computed inside the
  // 1x1 convolution that reads it (ops/conv/depthwise_pointwise.cc) splits
  // the 1x1's sums where split_conv_outputs says a convolution would, in
  // one dispatch; false: such a pair runs as two (the depthwise, then the
  // split convolution). Unset: not said (false).
  std::optional<bool> split_fused_sums;
  // "int8_filter_bits": how an int8 model's filters are stored on this GPU,
  // whichever ran it faster: 8 (as 8-bit integers, their sums scaled in the
  // shader) or 32 (as floats, like the float model's). One number for both
  // storage precisions, or {"fp32": bits, "fp16": bits}: the answer differs
  // between them, fp16 storage halving a float filter's bytes already
  // (docs/perf.md). 0: not said (GpuDelegateOptions::int8_filters).
  int64_t int8_filter_bits_fp32 = 0, int8_filter_bits_fp16 = 0;
  // "int8_dot_products": whether, with 8-bit filters, convolutions of an
  // int8 model sum in integer dot products on this GPU (where it has them)
  // because that ran faster: true or false, or {"fp32": ..., "fp16": ...};
  // unset: not said (GpuDelegateOptions::int8_dot).
  std::optional<bool> int8_dot_products_fp32, int8_dot_products_fp16;
};

// Parses and checks a table; errors name `source` and the bad field.
absl::StatusOr<Table> ParseTable(std::string_view json, const std::string& source);
absl::StatusOr<Table> ReadTableFile(const std::string& path);
std::string SerializeTable(const Table& table);
// Adds `entry`, replacing one with the same key (and shape rule).
void Merge(Table& table, const Entry& entry);
// Adds `entry`, replacing the one for the same model.
void Merge(Table& table, const AccuracyEntry& entry);
// The layers the tables' accuracy entries keep in fp32 for the model whose
// structure digest is `model` (sorted, each once).
std::vector<std::string> Fp32Layers(const std::vector<const Table*>& tables, const std::string& model);

// The first table's `field` that is set (above 0), else `fallback`:
// FirstSet(tables, &Table::split_conv_outputs, shaders::kSplitConvOutputs).
int64_t FirstSet(const std::vector<const Table*>& tables, int64_t Table::*field, int64_t fallback);
// The first table's `field` that is set, else `fallback`.
bool FirstSet(const std::vector<const Table*>& tables, std::optional<bool> Table::*field, bool fallback);

bool Matches(const GpuMatch& match, const gpu::GpuInfo& info);
// The tables compiled into mgd (tuning/tables/*.json).
const std::vector<Table>& BuiltinTables();
// The first built-in table for this GPU, or null.
const Table* BuiltinTableFor(const gpu::GpuInfo& info);

bool Fits(const Workgroup& workgroup, const gpu::GpuLimits& limits);

// The default calculator (rules and their sources in workgroups.cc).
Workgroup DefaultWorkgroup(const std::array<uint32_t, 3>& grid, const gpu::GpuInfo& info);

enum class Source { kTable, kBucket, kOpRule, kDefault };
const char* SourceName(Source source);  // "table", "bucket", "op_rule", "default"

struct Choice {
  Workgroup workgroup{};
  Source source = Source::kDefault;
  std::string table;  // the table that gave it (empty for the default)
};

// `tables` in order of precedence; entries that do not fit the device's
// limits are passed over.
Choice Choose(const std::vector<const Table*>& tables, const DispatchKey& key, const std::array<uint32_t, 3>& grid,
              const gpu::GpuInfo& info);

}  // namespace mgd::tuning
