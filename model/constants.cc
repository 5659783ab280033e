#include "model/constants.h"

#include <cstring>

namespace mgd {

std::vector<float> ConstantFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(NumElements(t.shape)));
  if (t.type == DataType::kBool) {
    for (size_t i = 0; i < v.size() && i < t.data.size(); ++i) v[i] = t.data.data()[i] != 0 ? 1.0f : 0.0f;
  } else if (t.data.size() >= v.size() * 4) {
    std::memcpy(v.data(), t.data.data(), v.size() * 4);
  }
  return v;
}

std::vector<int64_t> ConstantInts(const Tensor& t) {
  const size_t n = static_cast<size_t>(NumElements(t.shape));
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (t.type == DataType::kInt64 && t.data.size() >= 8 * n) {
      int64_t x;
      std::memcpy(&x, t.data.data() + 8 * i, 8);
      v[i] = x;
    } else if (t.data.size() >= 4 * n) {
      int32_t x;
      std::memcpy(&x, t.data.data() + 4 * i, 4);
      v[i] = x;
    }
  }
  return v;
}

std::vector<int64_t> PadMargins(const Graph& graph, const Node& pad) {
  if (pad.op != OpKind::kPad || pad.inputs.size() != 2) return {};
  const Tensor& paddings = graph.tensors[static_cast<size_t>(pad.inputs[1])];
  if (!paddings.is_constant) return {};
  std::vector<int64_t> margins = ConstantInts(paddings);
  if (margins.size() != 2 * graph.tensors[static_cast<size_t>(pad.inputs[0])].shape.size()) return {};
  return margins;
}

}  // namespace mgd
