#include "interpreter/op_resolver.h"

#include "ops/registry.h"

namespace mgd {

OpResolver::OpResolver() {
  for (const ops::OpDefinition* op : ops::CustomOps()) {
    custom_[op->custom_name] = Entry{CustomOp{op->cpu_kernel, op->decode_custom}, 1, INT_MAX};
  }
}

void OpResolver::AddCustom(const std::string& name, CustomKernelFactory factory, int min_version,
                           int max_version) {
  custom_[name] = Entry{CustomOp{std::move(factory)}, min_version, max_version};
}

const CustomOp* OpResolver::FindCustom(const std::string& name, int version) const {
  auto it = custom_.find(name);
  if (it == custom_.end() || version < it->second.min_version || version > it->second.max_version) return nullptr;
  return &it->second.op;
}

}  // namespace mgd
