// A producer's store moved through the nodes after it that keep their input
// element for element (RESHAPE, SQUEEZE, EXPAND_DIMS: OpDefinition::
// is_identity), and on into its part of a CONCATENATION's output: no
// dispatch for those nodes (delegate/fusion/store_through.cc plans it, the
// compiler emits the store). A detector's heads end so: each box regressor
// and score head reshaped to [1, anchors, values] and concatenated over the
// anchors.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "layout/phwc4.h"
#include "model/graph.h"
#include "shaders/dialect.h"

namespace mgd::ops {

// Where the values of `computed` land: renumbered in element order to
// `reshaped` (the last identity's output; `computed` without one), then, in
// a concatenation, at `offset` along BHWC `axis` of `dest`, its output
// (else `dest` is `reshaped`).
struct StoreThrough {
  layout::Bhwc computed, reshaped, dest;
  int axis = 0;
  int offset = 0;
  Activation activation = Activation::kNone;  // the concatenation's
  // One PHWC4 slot of `computed` is one of `dest`, lanes kept in order;
  // else each value has a slot of its own in `dest` (one channel).
  bool whole_slots = true;
};

// The store of tensor `computed` through `through` (identities, each reading
// the one before, and at most one CONCATENATION, last, reading the one
// before it), or why one shader invocation's vec4 cannot be stored so: its
// lanes would land in slots whose other lanes other invocations write.
absl::StatusOr<StoreThrough> StoreThroughOf(const Graph& graph, int computed, const std::vector<int>& through);

// GLSL that stores vec4 `value`, output slice s of pixel (b, y, x) of
// `computed` (its padding lanes zero or not), to out0, `dest` as PHWC4:
// the concatenation's activation first.
std::string StoreThroughCode(shaders::ShaderParams& params, const StoreThrough& store);

}  // namespace mgd::ops
