#pragma once

#include "interpreter/kernel.h"

namespace mgd {

std::unique_ptr<Kernel> CreateDequantizeKernel();
std::unique_ptr<Kernel> CreateDensifyKernel();

}  // namespace mgd
