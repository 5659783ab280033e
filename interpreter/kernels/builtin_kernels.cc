// Maps each builtin op kind to its CPU reference kernel: the op's definition
// (ops/) has it, or, for the families not moved there yet, the switch below.
#include "interpreter/kernels/conv.h"
#include "ops/registry.h"

namespace mgd {

std::unique_ptr<Kernel> CreateBuiltinKernel(const Node& node) {
  if (const ops::OpDefinition* definition = ops::FindBuiltin(node.op)) return definition->cpu_kernel(node);
  switch (node.op) {
    case OpKind::kConv2d: return CreateConv2dKernel();
    case OpKind::kDepthwiseConv2d: return CreateDepthwiseConv2dKernel();
    case OpKind::kTransposeConv: return CreateTransposeConvKernel();
    case OpKind::kFullyConnected: return CreateFullyConnectedKernel();
    default: return nullptr;  // kCustom (the resolver's), and the elementwise ops above
  }
  return nullptr;
}

}  // namespace mgd
