#pragma once

#include "interpreter/kernel.h"

namespace mgd {

std::unique_ptr<Kernel> CreateResizeKernel(OpKind op);  // RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR

}  // namespace mgd
