// The random-graph test's data movement makers: concatenation, packing,
// splits, reshapes, padding (zeros and mirrored), tiling, slices,
// space/depth, resizes and transposes.
#include <numeric>

#include "ops/concatenation/concatenation.h"
#include "ops/gather/gather.h"
#include "ops/one_hot/one_hot.h"
#include "ops/movement/movement.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/space_depth/space_depth.h"
#include "ops/split/split.h"
#include "tests/delegate/random_graph/makers.h"

namespace mgd::random_graph {

bool MakeConcatenation(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = rank == 4 && d.Chance(0.6f) ? 3 : d.Int(0, rank - 1);
  auto fits = [&](const Value& v) {
    if (static_cast<int>(v.shape.size()) != rank) return false;
    for (int i = 0; i < rank; ++i) {
      if (i != axis && v.shape[static_cast<size_t>(i)] != x->shape[static_cast<size_t>(i)]) return false;
    }
    return true;
  };
  std::vector<int> inputs = {x->tensor};
  Shape out = x->shape;
  float scale = x->scale, floor = x->floor;
  const int more = d.Chance(0.3f) ? 2 : 1;
  for (int i = 0; i < more; ++i) {
    const Value* y = d.Pick(fits, x->tensor);  // x itself when nothing else fits
    inputs.push_back(y->tensor);
    out[static_cast<size_t>(axis)] += y->shape[static_cast<size_t>(axis)];
    scale = std::max(scale, y->scale);
    floor = std::min(floor, y->floor);
  }
  if (d.Chance(0.5f)) std::swap(inputs.front(), inputs.back());
  ops::ConcatenationAttributes a;
  a.axis = d.Chance(0.2f) ? axis - rank : axis;
  a.activation = d.Chance(0.8f) ? Activation::kNone : d.FusedActivation();
  return d.Add(OpKind::kConcatenation, a, inputs, out, ActivatedScale(scale, a.activation),
               ActivatedFloor(floor, a.activation), 1.0f);
}

bool MakePack(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() <= 3; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  std::vector<int> inputs = {x->tensor};
  float scale = x->scale, floor = x->floor;
  const int count = d.Int(2, 3);
  for (int i = 1; i < count; ++i) {
    const Value* y = d.Pick([&](const Value& v) { return v.shape == x->shape; }, x->tensor);
    inputs.push_back(y->tensor);
    scale = std::max(scale, y->scale);
    floor = std::min(floor, y->floor);
  }
  const int axis = d.Int(0, rank);
  Shape out = x->shape;
  out.insert(out.begin() + axis, count);
  return d.Add(OpKind::kPack, ops::PackAttributes{count, d.Chance(0.2f) ? axis - rank - 1 : axis}, inputs, out, scale,
               floor, 1.0f);
}

bool MakeSplit(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = d.Int(1, rank - 1);
  const int extent = x->shape[static_cast<size_t>(axis)];
  if (extent < 2) return false;
  std::vector<Shape> outs;
  if (d.Chance(0.5f) && extent % 2 == 0) {  // SPLIT in two equal parts
    outs.assign(2, x->shape);
    outs[0][static_cast<size_t>(axis)] = outs[1][static_cast<size_t>(axis)] = extent / 2;
    return d.Add(OpKind::kSplit, ops::SplitAttributes{2}, {d.Ints({}, {axis - (d.Chance(0.3f) ? rank : 0)}), x->tensor},
                 outs, x->scale, x->floor, 1.0f);
  }
  const int first = d.Int(1, extent - 1);
  outs.assign(2, x->shape);
  outs[0][static_cast<size_t>(axis)] = first;
  outs[1][static_cast<size_t>(axis)] = extent - first;
  return d.Add(OpKind::kSplitV, ops::SplitAttributes{2}, {x->tensor, d.Ints({2}, {first, d.Chance(0.5f) ? -1 : extent - first}), d.Ints({}, {axis})},
               outs, x->scale, x->floor, 1.0f);
}

bool MakeTile(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const size_t rank = x->shape.size();
  std::vector<int32_t> multiples(rank, 1);
  Shape out = x->shape;
  for (size_t i = 1; i < rank; ++i) {
    multiples[i] = d.Chance(0.4f) ? d.Int(2, 3) : 1;
    out[i] *= multiples[i];
  }
  return d.Add(OpKind::kTile, {}, {x->tensor, d.Ints({static_cast<int>(rank)}, multiples)}, out, x->scale, x->floor, 1.0f);
}

// Slices picked along one axis, repeats and reordering included; a rank-2
// index tensor now and then (its output one rank higher).
bool MakeGather(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = d.Int(0, rank - 1);
  const int extent = x->shape[static_cast<size_t>(axis)];
  const Shape indices_shape = rank < 4 && d.Chance(0.3f) ? Shape{2, d.Int(1, 3)} : Shape{d.Int(1, extent + 2)};
  std::vector<int32_t> indices;
  for (int64_t i = 0; i < NumElements(indices_shape); ++i) indices.push_back(d.Int(0, extent - 1));
  Shape out(x->shape.begin(), x->shape.begin() + axis);
  out.insert(out.end(), indices_shape.begin(), indices_shape.end());
  out.insert(out.end(), x->shape.begin() + axis + 1, x->shape.end());
  return d.Add(OpKind::kGather, ops::GatherAttributes{d.Chance(0.3f) ? axis - rank : axis, 0},
               {x->tensor, d.Ints(indices_shape, indices)}, out, x->scale, x->floor, 1.0f);
}

// ONE_HOT of token ids: a new int32 graph input of [B,n] indices (some
// outside [0, depth): rows of off_value), the new axis last or inside.
bool MakeOneHot(Draw& d) {
  const int batch = d.Int(1, 2), n = d.Int(1, 12), depth = d.Int(1, 20);
  const Shape ids = d.Chance(0.3f) ? Shape{batch * n} : Shape{batch, n};
  const int rank = static_cast<int>(ids.size()) + 1;
  const int axis = d.Chance(0.7f) ? -1 : d.Int(0, rank - 1);
  Shape out = ids;
  out.insert(out.begin() + (axis < 0 ? rank - 1 : axis), depth);
  const float on = d.Chance(0.7f) ? 1.0f : d.Real(-2.0f, 2.0f);
  const float off = d.Chance(0.7f) ? 0.0f : d.Real(-2.0f, 2.0f);
  const int indices = d.AddIndexInput(ids, depth), depth_tensor = d.Ints({}, {depth});
  const int on_tensor = d.Floats({}, {on}), off_tensor = d.Floats({}, {off});
  return d.Add(OpKind::kOneHot, ops::OneHotAttributes{axis}, {indices, depth_tensor, on_tensor, off_tensor}, out,
               std::max(std::abs(on), std::abs(off)), 0.0f, 1.0f);
}

bool MakeReshape(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const Shape& s = x->shape;
  const int64_t n = NumElements(s);
  const int b = s[0];
  std::vector<Shape> targets;
  if (s.size() == 4) {
    targets = {{b, s[1] * s[2] * s[3]},
               {b, 1, 1, s[1] * s[2] * s[3]},
               {b, s[2], s[1], s[3]},
               {b, s[1] * s[2], s[3]},
               {b, s[1], s[2] * s[3], 1}};
  } else {
    targets = {
        {b, 1, 1, static_cast<int32_t>(n / b)}, {1, 1, 1, static_cast<int32_t>(n)}, {b, static_cast<int32_t>(n / b)}};
  }
  const Shape out = targets[static_cast<size_t>(d.Int(0, static_cast<int>(targets.size()) - 1))];
  Shape requested = out;
  if (d.Chance(0.3f)) requested[static_cast<size_t>(d.Int(0, static_cast<int>(out.size()) - 1))] = -1;
  if (d.Chance(0.3f)) {  // the older form: the shape in the options only
    return d.Add(OpKind::kReshape, ops::ReshapeAttributes{requested}, {x->tensor}, out, x->scale, x->floor, 1.0f);
  }
  return d.Add(OpKind::kReshape, ops::ReshapeAttributes{},
               {x->tensor, d.Ints({static_cast<int>(requested.size())}, requested)}, out, x->scale, x->floor, 1.0f);
}

bool MakeSqueezeOrExpandDims(Draw& d) {
  if (d.Chance(0.5f)) {
    const Value* x = d.Pick([](const Value& v) {
      return v.shape.size() >= 2 && std::count(v.shape.begin(), v.shape.end(), 1) > 0 &&
             std::count(v.shape.begin(), v.shape.end(), 1) < static_cast<long>(v.shape.size());
    });
    if (x == nullptr) return false;
    ops::SqueezeAttributes a;
    Shape out;
    const bool all = d.Chance(0.3f);
    for (size_t i = 0; i < x->shape.size(); ++i) {
      if (x->shape[i] == 1 && (all || d.Chance(0.6f))) {
        if (!all) a.squeeze_dims.push_back(static_cast<int32_t>(i));
      } else {
        out.push_back(x->shape[i]);
      }
    }
    if (out.size() == x->shape.size()) return false;
    return d.Add(OpKind::kSqueeze, a, {x->tensor}, out, x->scale, x->floor, 1.0f);
  }
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() <= 3; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = d.Int(0, rank);
  Shape out = x->shape;
  out.insert(out.begin() + axis, 1);
  return d.Add(OpKind::kExpandDims, {}, {x->tensor, d.Ints({1}, {d.Chance(0.2f) ? axis - rank - 1 : axis})}, out,
               x->scale, x->floor, 1.0f);
}

bool MakePad(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const size_t rank = x->shape.size();
  std::vector<int32_t> paddings(rank * 2, 0);
  Shape out = x->shape;
  for (size_t i = 1; i < rank; ++i) {
    if (i + 1 == rank && rank == 4 && d.Chance(0.7f)) continue;  // channels: mostly not
    for (size_t side = 0; side < 2; ++side) {
      paddings[i * 2 + side] = d.Int(0, 2);
      out[i] += paddings[i * 2 + side];
    }
  }
  return d.Add(OpKind::kPad, {}, {x->tensor, d.Ints({static_cast<int>(rank), 2}, paddings)}, out, x->scale, 0.0f, 1.0f);
}

bool MakeMirrorPad(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const bool symmetric = d.Chance(0.5f);
  const size_t rank = x->shape.size();
  std::vector<int32_t> paddings(rank * 2, 0);
  Shape out = x->shape;
  for (size_t i = 1; i < rank; ++i) {
    const int most = std::min(2, x->shape[i] - (symmetric ? 0 : 1));
    for (size_t side = 0; side < 2; ++side) {
      paddings[i * 2 + side] = d.Int(0, most);
      out[i] += paddings[i * 2 + side];
    }
  }
  return d.Add(OpKind::kMirrorPad, ops::MirrorPadAttributes{symmetric},
               {x->tensor, d.Ints({static_cast<int>(rank), 2}, paddings)}, out, x->scale, x->floor, 1.0f);
}

bool MakeSlice(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const size_t rank = x->shape.size();
  std::vector<int32_t> begin(rank, 0), size(rank);
  Shape out = x->shape;
  for (size_t i = 0; i < rank; ++i) {
    const int dim = x->shape[i];
    if (i == 0 || d.Chance(0.3f)) {  // the whole dimension
      size[i] = d.Chance(0.5f) ? -1 : dim;
      continue;
    }
    begin[i] = d.Int(0, dim - 1);
    out[i] = d.Int(1, dim - begin[i]);
    size[i] = d.Chance(0.2f) && begin[i] + out[i] == dim ? -1 : out[i];
  }
  const int r = static_cast<int>(rank);
  return d.Add(OpKind::kSlice, {}, {x->tensor, d.Ints({r}, begin), d.Ints({r}, size)}, out, x->scale, x->floor, 1.0f);
}

bool MakeStridedSlice(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  ops::StridedSliceAttributes a;
  std::vector<int32_t> begin(4, 0), end(4, 0), strides(4, 1);
  Shape out;
  for (int i = 0; i < 4; ++i) {
    const int dim = x->shape[static_cast<size_t>(i)];
    if (i == 0 && dim == 1 && d.Chance(0.1f)) {  // shrink the batch axis: rank 3 out
      a.shrink_axis_mask |= 1;
      end[0] = 1;
      continue;
    }
    const int step = d.Chance(0.1f) ? -1 : d.Chance(0.3f) ? 2 : 1;
    strides[static_cast<size_t>(i)] = step;
    int start, stop;
    if (d.Chance(0.2f)) {
      a.begin_mask |= 1 << i;
      start = step > 0 ? 0 : dim - 1;
    } else {
      start = d.Int(0, dim - 1);
    }
    stop = step > 0 ? d.Int(start + 1, dim) : d.Int(-1, start - 1);
    // A reverse slice down to element 0 needs end_mask: an end of -1 would
    // mean the last element.
    if (d.Chance(0.2f) || stop == -1) {
      a.end_mask |= 1 << i;
      stop = step > 0 ? dim : -1;
    } else {
      end[static_cast<size_t>(i)] = stop;
    }
    begin[static_cast<size_t>(i)] = start;
    // Negative indices count from the end.
    if (d.Chance(0.2f) && start > 0) begin[static_cast<size_t>(i)] = start - dim;
    if (d.Chance(0.2f) && stop >= 0 && stop < dim) end[static_cast<size_t>(i)] = stop - dim;
    out.push_back(step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step);
  }
  return d.Add(OpKind::kStridedSlice, a, {x->tensor, d.Ints({4}, begin), d.Ints({4}, end), d.Ints({4}, strides)}, out,
               x->scale, x->floor, 1.0f);
}

bool MakeDepthToSpace(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() == 4 && v.shape[3] % 4 == 0; });
  if (x == nullptr) return false;
  const int block = x->shape[3] % 9 == 0 && d.Chance(0.3f) ? 3 : 2;
  const Shape out = {x->shape[0], x->shape[1] * block, x->shape[2] * block, x->shape[3] / (block * block)};
  return d.Add(OpKind::kDepthToSpace, ops::BlockSizeAttributes{block}, {x->tensor}, out, x->scale, x->floor, 1.0f);
}

bool MakeSpaceToDepth(Draw& d) {
  const Value* x =
      d.Pick([](const Value& v) { return v.shape.size() == 4 && v.shape[1] % 2 == 0 && v.shape[2] % 2 == 0; });
  if (x == nullptr) return false;
  const Shape out = {x->shape[0], x->shape[1] / 2, x->shape[2] / 2, x->shape[3] * 4};
  return d.Add(OpKind::kSpaceToDepth, ops::BlockSizeAttributes{2}, {x->tensor}, out, x->scale, x->floor, 1.0f);
}

bool MakeResize(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kResizeBilinear, OpKind::kResizeNearestNeighbor});
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const bool twice = d.Chance(0.5f);
  const int h = twice ? x->shape[1] * 2 : d.Int(1, 16), w = twice ? x->shape[2] * 2 : d.Int(1, 16);
  ops::ResizeAttributes a;
  const float mode = d.Unit();
  a.align_corners = mode < 0.25f;
  a.half_pixel_centers = mode >= 0.25f && mode < 0.6f;
  return d.Add(op, a, {x->tensor, d.Ints({2}, {h, w})}, {x->shape[0], h, w, x->shape[3]}, x->scale, x->floor, 1.0f);
}

bool MakeTranspose(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  std::vector<int32_t> perm = {0, 1, 2, 3};
  for (int i = 3; i > 0; --i) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(d.Int(0, i))]);
  Shape out;
  for (int p : perm) out.push_back(x->shape[static_cast<size_t>(p)]);
  return d.Add(OpKind::kTranspose, {}, {x->tensor, d.Ints({4}, perm)}, out, x->scale, x->floor, 1.0f);
}

}  // namespace mgd::random_graph
