#pragma once

#include "interpreter/kernel.h"

namespace mgd {

std::unique_ptr<Kernel> CreatePool2dKernel(OpKind op);

}  // namespace mgd
