#pragma once

#include "interpreter/kernel.h"

namespace mgd {

std::unique_ptr<Kernel> CreateBinaryKernel(OpKind op);
std::unique_ptr<Kernel> CreateUnaryKernel(OpKind op);

}  // namespace mgd
