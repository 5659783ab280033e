// Reading the pipeline ops' float32 option fields, with errors that name
// the field ("custom_options: ...").
#pragma once

#include <vector>

#include "ops/pipeline/pipeline_ops.h"

namespace mgd::ops {

// Exactly `count` finite fields.
absl::StatusOr<std::vector<float>> ReadFloatFields(const std::vector<uint8_t>& options, size_t count, const char* op);
// A field that holds an integer in [lo, hi].
absl::StatusOr<int> ReadIntField(float value, const char* name, int lo, int hi);

}  // namespace mgd::ops
