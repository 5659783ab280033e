// Maps each builtin op kind to its CPU reference kernel, from the op's
// definition (ops/).
#include "ops/registry.h"

namespace mgd {

std::unique_ptr<Kernel> CreateBuiltinKernel(const Node& node) {
  const ops::OpDefinition* definition = ops::FindBuiltin(node.op);
  return definition != nullptr ? definition->cpu_kernel(node) : nullptr;  // CUSTOM: the resolver's
}

}  // namespace mgd
