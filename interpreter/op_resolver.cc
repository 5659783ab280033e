#include "interpreter/op_resolver.h"

namespace mgd {

OpResolver::OpResolver() {
  AddCustom("Convolution2DTransposeBias", [](const Node&) { return CreateConvolution2dTransposeBiasKernel(); });
  AddCustom("MaxPoolingWithArgmax2D", [](const Node&) { return CreateMaxPoolingWithArgmax2dKernel(); });
  AddCustom("MaxUnpooling2D", [](const Node&) { return CreateMaxUnpooling2dKernel(); });
}

void OpResolver::AddCustom(const std::string& name, CustomKernelFactory factory, int min_version,
                           int max_version) {
  custom_[name] = Entry{std::move(factory), min_version, max_version};
}

const CustomKernelFactory* OpResolver::FindCustom(const std::string& name, int version) const {
  auto it = custom_.find(name);
  if (it == custom_.end() || version < it->second.min_version || version > it->second.max_version) return nullptr;
  return &it->second.factory;
}

}  // namespace mgd
