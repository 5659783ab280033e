// Programs shared between dispatches. Generators declare the sizes, strides
// and constants of their shaders as parameters, inlined by default, so two
// convolutions of the same kind over different shapes are two programs, and
// a start builds one program per dispatch (~0.15-0.2 ms each from a driver's
// cache on the H200, seconds of compiling cold). Shaders that are the same
// but for their parameters' values are made one program here: the
// parameters whose values differ within the group are read from the
// parameter block (push constants on Vulkan, a uniform block on GLES), those
// that agree stay inlined, so loop bounds common to the group still fold.
#pragma once

#include <cstddef>
#include <vector>

#include "shaders/dialect.h"

namespace mgd::shaders {

// Groups `shaders` that emit the same source but for their parameters'
// values (same buffers, workgroup, flags, body and parameter names), and
// moves the parameters that differ within each group into the parameter
// block; parameters whose values agree in every member share one block
// member. A group that would need more than `max_members` members is left
// as it is. Returns how many shaders now read parameters from the block.
size_t ShareParameters(const std::vector<ShaderCode*>& shaders, size_t max_members);

// The most block members every device takes: 128 bytes (Vulkan's
// guaranteed push-constant size).
constexpr size_t kMaxParams = 32;

}  // namespace mgd::shaders
