#pragma once

#include "interpreter/kernel.h"

namespace mgd {

std::unique_ptr<Kernel> CreatePadKernel();
std::unique_ptr<Kernel> CreateTransposeKernel();
std::unique_ptr<Kernel> CreateSliceKernel(OpKind op);  // SLICE, STRIDED_SLICE

}  // namespace mgd
