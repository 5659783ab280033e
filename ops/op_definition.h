// Everything mgd knows about one builtin op, as the rest of mgd sees it: the
// reader, writer and validator (model/), the interpreter's CPU kernels and
// the GPU delegate's generators all look an op up here instead of switching
// on its kind. An op's folder under ops/ fills one in; ops/registry.cc lists
// the folders, and Register adds one at run time (docs/design.md, "How to
// add an op").
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"
#include "model/graph.h"
#include "model/node_checker.h"
#include "shaders/generator.h"

namespace mgd::ops {

struct DecodeContext;  // ops/tflite_io.h
struct EncodeContext;

struct OpDefinition {
  OpKind op{};  // TFLite's builtin code; any code, also one OpKind does not name

  // The typed attributes from the operator's options table (null when the
  // op has none: its nodes carry std::monostate). Called for every node read.
  absl::StatusOr<Attributes> (*decode)(const DecodeContext& file) = nullptr;
  // The options table for a node's attributes (null when the op has none).
  void (*encode)(const Node& node, EncodeContext& file) = nullptr;

  // The rules a node must meet to be run at all (arity, dtypes, ranks,
  // constant inputs, attribute ranges), with messages naming the field.
  absl::Status (*validate)(const NodeChecker& node) = nullptr;

  // The CPU reference kernel; its Prepare infers and checks the output
  // shapes from the inputs'.
  std::unique_ptr<Kernel> (*cpu_kernel)(const Node& node) = nullptr;

  // GPU generators, tried in order until one takes the node (a special case
  // before the general one). None: the op stays on the CPU.
  std::vector<shaders::Generator> gpu;
};

// A cpu_kernel that makes a `KernelClass` from constant arguments:
// `.cpu_kernel = MakeKernel<PoolKernel, true>`.
template <typename KernelClass, auto... kArgs>
std::unique_ptr<Kernel> MakeKernel(const Node&) {
  return std::make_unique<KernelClass>(kArgs...);
}

}  // namespace mgd::ops
