// SOFTMAX over the last dimension, with TFLite's beta.
#pragma once

#include <vector>

#include "ops/op_definition.h"

namespace mgd::ops {

struct SoftmaxAttributes {
  float beta = 1.0f;
};

std::vector<OpDefinition> SoftmaxOps();

}  // namespace mgd::ops
