// The op definitions mgd knows: its own families (registry.cc, one line
// each) and those a program adds with Register.
#pragma once

#include "absl/status/status.h"
#include "ops/op_definition.h"

namespace mgd::ops {

// The definition of a builtin op, or null when no family defines it.
const OpDefinition* FindBuiltin(OpKind op);

// Adds the definition of a builtin op that no family defines yet (an error
// names it otherwise). Definitions stay until the program ends; models read
// afterwards may use the op.
absl::Status Register(OpDefinition definition);

}  // namespace mgd::ops
