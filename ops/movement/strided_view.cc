// The strided views of the data movement ops (movement.h).
#include <fmt/format.h>

#include <algorithm>

#include "ops/movement/movement.h"

namespace mgd::ops {

absl::StatusOr<StridedView> ResolveSlice(const Shape& input, const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& second, const std::vector<int64_t>* steps,
                                         const StridedSliceAttributes& a) {
  const int rank = static_cast<int>(input.size());
  const int n = static_cast<int>(begin.size());
  if (n > rank || second.size() != begin.size() || (steps && steps->size() != begin.size())) {
    return absl::InvalidArgumentError(fmt::format("begin/{} have {}/{} entries for an input of rank {}",
                                                  steps ? "end/strides" : "size", begin.size(), second.size(), rank));
  }
  std::vector<int64_t> xs(input.size(), 1);
  for (int d = rank - 2; d >= 0; --d) xs[static_cast<size_t>(d)] = xs[static_cast<size_t>(d) + 1] * input[static_cast<size_t>(d) + 1];
  StridedView view;
  for (int d = 0; d < rank; ++d) {
    const size_t ud = static_cast<size_t>(d);
    const int dim = input[ud];
    int64_t start = 0, count = dim, step = 1;
    bool shrink = false;
    if (d < n) {
      if (!steps) {
        start = begin[ud];
        const int64_t size = second[ud];
        count = size == -1 ? dim - start : size;
        if (start < 0 || count < 0 || start + count > dim) {
          return absl::InvalidArgumentError(
              fmt::format("slice [{}, +{}) of dimension {} is outside [0, {})", start, size, d, dim));
        }
      } else {
        step = (*steps)[ud];
        if (step == 0) return absl::InvalidArgumentError(fmt::format("stride of dimension {} is 0", d));
        const bool begin_masked = (a.begin_mask >> d) & 1;
        const bool end_masked = (a.end_mask >> d) & 1;
        shrink = (a.shrink_axis_mask >> d) & 1;
        auto clamp = [&](int64_t v) {
          if (v < 0) v += dim;
          return step > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
        };
        start = begin_masked ? (step > 0 ? 0 : dim - 1) : clamp(begin[ud]);
        int64_t stop;
        if (shrink) {
          int64_t b = begin[ud];
          if (b < 0) b += dim;
          if (b < 0 || b >= dim) {
            return absl::InvalidArgumentError(
                fmt::format("shrunk index {} of dimension {} is out of range", begin[ud], d));
          }
          start = b;
          stop = b + 1;
          step = 1;
        } else if (end_masked) {
          stop = step > 0 ? dim : -1;
        } else {
          int64_t e = second[ud];
          if (a.offset) e += begin[ud];
          stop = clamp(e);
        }
        count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                         : std::max<int64_t>(0, (start - stop + (-step) - 1) / (-step));
      }
    }
    view.offset += start * xs[ud];
    view.strides.push_back(step * xs[ud]);
    view.full_shape.push_back(static_cast<int32_t>(count));
    if (!shrink) view.output_shape.push_back(static_cast<int32_t>(count));
  }
  return view;
}

void StridedCopy(const float* in, int64_t offset, const std::vector<int64_t>& strides, const Shape& out_shape,
                 float* out) {
  const int64_t n = NumElements(out_shape);
  if (n == 0) return;
  const size_t rank = out_shape.size();
  if (rank == 0) {
    out[0] = in[offset];
    return;
  }
  std::vector<int> index(rank, 0);
  int64_t src = offset;
  const int inner = out_shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  for (int64_t o = 0; o < n; o += inner) {
    for (int i = 0; i < inner; ++i) out[o + i] = in[src + i * inner_stride];
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++index[ud] < out_shape[ud]) {
        src += strides[ud];
        break;
      }
      src -= strides[ud] * (out_shape[ud] - 1);
      index[ud] = 0;
    }
  }
}

}  // namespace mgd::ops
