// The op definitions mgd knows: its own families (registry.cc, one line
// each) and those a program adds with Register.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/op_definition.h"

namespace mgd::ops {

// The definition of a builtin op, or null when no family defines it.
const OpDefinition* FindBuiltin(OpKind op);

// Whether `node`'s output is its input element for element (its builtin
// op's definition says when): no-op removal, and stores through it.
bool IsIdentity(const Graph& graph, const Node& node);

// The definition of a custom op mgd ships (MediaPipe's), or null.
const OpDefinition* FindCustom(const std::string& name);

// The custom ops mgd ships, for the interpreter's OpResolver.
std::vector<const OpDefinition*> CustomOps();

// Adds the definition of a builtin op that no family defines yet (an error
// names it otherwise). Definitions stay until the program ends; models read
// afterwards may use the op.
absl::Status Register(OpDefinition definition);

}  // namespace mgd::ops
