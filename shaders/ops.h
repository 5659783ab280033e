// The per-op generators (ops_*.cc), collected for the registry.
#pragma once

#include <map>

#include "shaders/generator.h"

namespace mgd::shaders {

std::map<OpKind, Generator> OpGenerators();

// Shared pieces of generated code.
namespace glsl {

// Declares x, y, z (= batch * slices + slice), b, s for one output vec4 of
// `out` and returns early outside it; `out_index` is its PHWC4 index.
std::string OutputPrologue(const layout::Bhwc& out);
// The PHWC4 index of (b, slice, yy, xx) in a tensor of `shape`, as GLSL.
std::string Index(const layout::Bhwc& shape, const std::string& b, const std::string& slice, const std::string& yy,
                  const std::string& xx);
// "v = clamp(v, ...)" etc. for a fused activation; empty for NONE.
std::string Activation(Activation activation, const std::string& v);
// A float literal GLSL parses the same in both dialects.
std::string Float(float value);
// `const vec4 name[n] = vec4[](...)` from per-channel values padded to slices.
std::string ConstVec4Array(const std::string& name, const std::vector<float>& padded);

}  // namespace glsl
}  // namespace mgd::shaders
