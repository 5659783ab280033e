// Programs shared between dispatches. Generators inline every size, offset
// and small constant into their GLSL, so two convolutions of the same kind
// over different shapes are two programs, and a start builds one program per
// dispatch (~0.15-0.2 ms each from a driver's cache on the H200, seconds of
// compiling cold). Shaders whose bodies differ only in numeric literals are
// made one program here: the literals that differ become members of the
// parameter block (push constants on Vulkan, a uniform block on GLES), those
// that agree stay inlined, so loop bounds common to the group still fold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shaders/dialect.h"

namespace mgd::shaders {

struct ParameterizedShader {
  ShaderCode* code;
  std::vector<uint8_t>* params;  // the values of code->params, 4 bytes each
};

// Rewrites the bodies of every group of `shaders` that are alike but for the
// literals in their bodies (same buffers, workgroup, flags and parameters),
// so that each group's members emit one source: the literals that differ
// within a group are read from appended parameters instead (highp int or
// float, by the literal's spelling). Literals in `const` declarations, in
// comments and in identifiers stay. A group that would need more than
// `max_params` parameters in all is left as it is. Returns how many shaders
// were rewritten.
size_t LiftDifferingLiterals(const std::vector<ParameterizedShader>& shaders, size_t max_params);

// The most parameters every device takes: 128 bytes (Vulkan's guaranteed
// push-constant size).
constexpr size_t kMaxParams = 32;

}  // namespace mgd::shaders
