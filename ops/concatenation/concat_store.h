// A producer's store straight into its part of a CONCATENATION's output,
// through the nodes between them that keep their input element for element
// (RESHAPE, SQUEEZE, EXPAND_DIMS: OpDefinition::is_identity): no dispatch
// for those nodes (delegate/fusion/concat_store.cc plans it, the compiler
// emits the store). A detector's heads end so: each box regressor and score
// head reshaped to [1, anchors, values] and concatenated over the anchors.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "layout/phwc4.h"
#include "model/graph.h"
#include "shaders/dialect.h"

namespace mgd::ops {

// Where the values of `computed` land: renumbered in element order to
// `reshaped` (the last identity's output; `computed` without one), then at
// `offset` along BHWC `axis` of `dest`, the concatenation's output.
struct ConcatStore {
  layout::Bhwc computed, reshaped, dest;
  int axis = 0;
  int offset = 0;
  Activation activation = Activation::kNone;  // the concatenation's
  // One PHWC4 slot of `computed` is one of `dest`, lanes kept in order;
  // else each value has a slot of its own in `dest` (one channel).
  bool whole_slots = true;
};

// The store of tensor `computed` through `through` (identities, each reading
// the one before, then the CONCATENATION reading the last), or why one shader
// invocation's vec4 cannot be stored so: its lanes would land in slots whose
// other lanes another input of the concatenation writes.
absl::StatusOr<ConcatStore> ConcatStoreOf(const Graph& graph, int computed, const std::vector<int>& through);

// GLSL that stores vec4 `value`, output slice s of pixel (b, y, x) of
// `computed` (its padding lanes zero or not), to out0, `dest` as PHWC4:
// the concatenation's activation first.
std::string ConcatStoreCode(shaders::ShaderParams& params, const ConcatStore& store);

}  // namespace mgd::ops
