#include "ops/concatenation/store_through.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "model/status_macros.h"
#include "ops/concatenation/concatenation.h"
#include "ops/registry.h"
#include "shaders/ops.h"

namespace mgd::ops {

absl::StatusOr<StoreThrough> StoreThroughOf(const Graph& graph, int computed, const std::vector<int>& through) {
  if (through.empty()) return absl::InvalidArgumentError("no node to store through");
  StoreThrough store;
  MGD_ASSIGN_OR_RETURN(store.computed, shaders::ToBhwc(graph.tensors[static_cast<size_t>(computed)].shape));
  int at = computed;
  for (int n : through) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    if (node.inputs.empty() || node.outputs.size() != 1) return absl::UnimplementedError("not one output");
    const auto position = std::find(node.inputs.begin(), node.inputs.end(), at);
    const Shape& out = graph.tensors[static_cast<size_t>(node.outputs[0])].shape;
    if (node.op == OpKind::kConcatenation && n == through.back() && position != node.inputs.end()) {
      const auto& attributes = AttributesOf<ConcatenationAttributes>(node.attributes);
      MGD_ASSIGN_OR_RETURN(store.dest, shaders::ToBhwc(out));
      store.axis = shaders::BhwcAxis(attributes.axis, static_cast<int>(out.size()));
      store.activation = attributes.activation;
      for (auto before = node.inputs.begin(); before != position; ++before) {
        MGD_ASSIGN_OR_RETURN(const layout::Bhwc in, shaders::ToBhwc(graph.tensors[static_cast<size_t>(*before)].shape));
        store.offset += std::array<int, 4>{in.batch, in.height, in.width, in.channels}[static_cast<size_t>(store.axis)];
      }
      break;
    }
    if (!IsIdentity(graph, node) || node.inputs[0] != at) {
      return absl::UnimplementedError(fmt::format("{} does not keep its input element for element", OpName(node.op)));
    }
    at = node.outputs[0];
    MGD_ASSIGN_OR_RETURN(store.reshaped, shaders::ToBhwc(out));
    store.dest = store.reshaped;
  }
  if (at == computed) store.reshaped = store.computed;
  // A slot's four lanes stay four lanes of one slot where the renumbering
  // keeps the channels or moves whole slots, and that slot is this input's
  // alone unless the concatenation is over channels and shares it.
  const int channels = store.computed.channels, reshaped = store.reshaped.channels;
  const bool lanes_together = channels == reshaped || (channels % 4 == 0 && reshaped % 4 == 0);
  const bool slots_alone = store.axis != 3 || (store.offset % 4 == 0 && (reshaped % 4 == 0 ||
                                                                         store.offset + reshaped == store.dest.channels));
  if (lanes_together && slots_alone) return store;
  store.whole_slots = false;
  if (store.dest.channels == 1) return store;
  return absl::UnimplementedError(
      fmt::format("the lanes of a slot of {} channels would land in slots of {} channels that others share",
                  channels, store.dest.channels));
}

std::string StoreThroughCode(shaders::ShaderParams& params, const StoreThrough& store) {
  namespace glsl = shaders::glsl;
  const layout::Bhwc &in = store.computed, &to = store.reshaped, &out = store.dest;
  // A value's flat BHWC position in `computed` is its position in
  // `reshaped`; a concatenation then shifts it along its axis.
  std::array<std::string, 4> coordinate{"st_b", "st_y", "st_x", "st_c"};
  std::string& moved = coordinate[static_cast<size_t>(store.axis)];
  moved = fmt::format("({} + {})", moved, params.Int("st_offset", store.offset));
  const std::string place = fmt::format(
      "    int st_p = ((b * {H} + y) * {W} + x) * {C} + st_first;\n"
      "    int st_c = st_p % {RC}; st_p /= {RC};\n"
      "    int st_x = st_p % {RW}; st_p /= {RW};\n"
      "    int st_y = st_p % {RH}, st_b = st_p / {RH};\n"
      "    int st_index = (({b} * {OS} + {c} / 4) * {OH} + {y}) * {OW} + {x};\n",
      fmt::arg("H", params.Int("st_in_h", in.height)), fmt::arg("W", params.Int("st_in_w", in.width)),
      fmt::arg("C", params.Int("st_in_c", in.channels)), fmt::arg("RC", params.Int("st_to_c", to.channels)),
      fmt::arg("RW", params.Int("st_to_w", to.width)), fmt::arg("RH", params.Int("st_to_h", to.height)),
      fmt::arg("b", coordinate[0]), fmt::arg("y", coordinate[1]), fmt::arg("x", coordinate[2]),
      fmt::arg("c", coordinate[3]), fmt::arg("OS", params.Int("st_out_s", out.slices())),
      fmt::arg("OH", params.Int("st_out_h", out.height)), fmt::arg("OW", params.Int("st_out_w", out.width)));
  std::string code = glsl::Activation(store.activation, "value") + glsl::MaskPadding(params, in.channels, "value");
  if (store.whole_slots) {
    return code + "  {\n    int st_first = s * 4;\n" + place + "    out0_set(st_index, value);\n  }\n";
  }
  // One channel in `dest`: each value fills a slot, its padding zeros.
  return code + fmt::format(
                    "  MGD_LOOP for (int st_k = 0; st_k < 4; ++st_k) {{\n"
                    "    int st_first = s * 4 + st_k;\n"
                    "    if (st_first >= {}) break;\n"
                    "{}"
                    "    out0_set(st_index, vec4(value[st_k], 0.0, 0.0, 0.0));\n"
                    "  }}\n",
                    params.Int("st_in_c", in.channels), place);
}

}  // namespace mgd::ops
