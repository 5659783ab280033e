#include "tests/delegate/random_graph/makers.h"

#include <numeric>

#include "ops/conv/conv.h"
#include "ops/cumsum/cumsum.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/batch_matmul.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/reshape/reshape.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "ops/space_depth/space_depth.h"

namespace mgd::random_graph {
namespace {

// ---- The makers: each adds one node or returns false (nothing fits). ----

// Kernel sizes, strides, dilation and padding of a window along one axis of
// size `in`: VALID windows are shrunk to fit.
struct Axis {
  int filter, stride, dilation;
};
Axis DrawAxis(Draw& d, int in, Padding padding, int max_filter, bool dilate) {
  Axis a{d.Int(1, max_filter), d.Chance(0.1f) ? 3 : d.Int(1, 2), dilate ? 2 : 1};
  if (padding == Padding::kValid) a.filter = std::min(a.filter, (in - 1) / a.dilation + 1);
  return a;
}

bool MakeConv2d(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  ops::Conv2dAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const bool dilate = d.Chance(0.15f);
  Axis ay = DrawAxis(d, h, a.padding, 5, dilate), ax = DrawAxis(d, w, a.padding, 5, dilate);
  if (d.Chance(0.1f) && h <= 8 && w <= 8) {  // a "global" convolution down to 1x1
    a.padding = Padding::kValid;
    ay = {h, 1, 1};
    ax = {w, 1, 1};
  }
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  a.dilation_h = ay.dilation;
  a.dilation_w = ax.dilation;
  a.activation = d.FusedActivation();
  const int co = d.Chance(0.3f) ? ci : d.Int(1, 20);
  std::vector<int> inputs = {x->tensor, d.Weights({co, ay.filter, ax.filter, ci}, ay.filter * ax.filter * ci)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  const Shape out = {n, WindowOut(a.padding, h, ay.filter, ay.stride, ay.dilation),
                     WindowOut(a.padding, w, ax.filter, ax.stride, ax.dilation), co};
  return d.Add(OpKind::kConv2d, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation), 0.0f,
               1.0f);
}

bool MakeDepthwiseConv2d(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  ops::DepthwiseConv2dAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const bool dilate = d.Chance(0.15f);
  const Axis ay = DrawAxis(d, h, a.padding, 5, dilate), ax = DrawAxis(d, w, a.padding, 5, dilate);
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  a.dilation_h = ay.dilation;
  a.dilation_w = ax.dilation;
  a.depth_multiplier = d.Chance(0.85f) ? 1 : 2;
  a.activation = d.FusedActivation();
  const int co = ci * a.depth_multiplier;
  std::vector<int> inputs = {x->tensor, d.Weights({1, ay.filter, ax.filter, co}, ay.filter * ax.filter)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  const Shape out = {n, WindowOut(a.padding, h, ay.filter, ay.stride, ay.dilation),
                     WindowOut(a.padding, w, ax.filter, ax.stride, ax.dilation), co};
  return d.Add(OpKind::kDepthwiseConv2d, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

bool MakeTransposeConv(Draw& d) {
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = x->shape[3];
  ops::TransposeConvAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  a.stride_h = d.Int(1, 2);
  a.stride_w = d.Chance(0.8f) ? a.stride_h : d.Int(1, 3);
  const int kh = d.Int(1, 4), kw = d.Int(1, 4), co = d.Int(1, 16);
  a.activation = d.FusedActivation();
  auto size = [&](int in, int k, int s) { return a.padding == Padding::kSame ? in * s : (in - 1) * s + k; };
  const Shape out = {n, size(h, kh, a.stride_h), size(w, kw, a.stride_w), co};
  // Each output sums about ceil(k/s)^2 * ci taps.
  const int fan_in = ((kh + a.stride_h - 1) / a.stride_h) * ((kw + a.stride_w - 1) / a.stride_w) * ci;
  std::vector<int> inputs = {d.Ints({4}, out), d.Weights({co, kh, kw, ci}, fan_in), x->tensor};
  const bool bias = d.Chance(0.7f);
  if (bias) inputs.push_back(d.Floats({co}, d.Uniform(co, 1.0f)));
  return d.Add(OpKind::kTransposeConv, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

bool MakeFullyConnected(Draw& d) {
  // The GPU takes inputs that are spatially 1x1 ([B,C] or [B,1,1,C]); now and
  // then one that FULLY_CONNECTED flattens.
  const bool flatten = d.Chance(0.1f);
  const Value* x = d.Pick([&](const Value& v) {
    if (flatten) return v.shape.size() == 4;
    return v.shape.size() == 2 || (v.shape.size() == 4 && v.shape[1] == 1 && v.shape[2] == 1);
  });
  if (x == nullptr) return false;
  const int batch = x->shape[0];
  const int depth = static_cast<int>(NumElements(x->shape) / batch);
  const int units = d.Int(1, 20);
  ops::FullyConnectedAttributes a;
  a.activation = d.FusedActivation();
  a.keep_num_dims = !flatten && d.Chance(0.5f);
  Shape out = {batch, units};
  if (a.keep_num_dims) {
    out = x->shape;
    out.back() = units;
  }
  std::vector<int> inputs = {x->tensor, d.Weights({units, depth}, depth)};
  const bool bias = d.Chance(0.8f);
  if (bias) inputs.push_back(d.Floats({units}, d.Uniform(units, 1.0f)));
  return d.Add(OpKind::kFullyConnected, a, inputs, out, ActivatedScale(x->scale + (bias ? 1.0f : 0.0f), a.activation),
               0.0f, 1.0f);
}

// A product with constant weights (a transformer's projection), or with
// another value of the same shape transposed (attention's Q x K^T).
bool MakeBatchMatmul(Draw& d) {
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const Shape& s = x->shape;
  const int rows = s[s.size() - 2], k = s.back();
  const Value* y = d.Chance(0.3f) ? d.Pick([&](const Value& v) { return v.shape == s; }, x->tensor) : nullptr;
  Shape out = s;
  if (y != nullptr) {
    // Sums of k products of two errors' worth: kept small.
    const float scale = std::max(x->scale, y->scale);
    if (static_cast<float>(k) * x->scale * y->scale > 8.0f) return false;
    out.back() = rows;
    return d.Add(OpKind::kBatchMatmul, ops::BatchMatmulAttributes{false, true}, {x->tensor, y->tensor}, out,
                 static_cast<float>(k) * x->scale * y->scale, 0.0f, std::sqrt(static_cast<float>(k)) * scale);
  }
  const int units = d.Int(1, 20);
  const bool adj_y = d.Chance(0.5f);
  out.back() = units;
  return d.Add(OpKind::kBatchMatmul, ops::BatchMatmulAttributes{false, adj_y},
               {x->tensor, d.Weights(adj_y ? Shape{units, k} : Shape{k, units}, k)}, out, x->scale, 0.0f, 1.0f);
}

// Running sums along any axis: the error of n terms.
bool MakeCumsum(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  const int axis = d.Int(0, rank - 1);
  const float n = static_cast<float>(x->shape[static_cast<size_t>(axis)]);
  const ops::CumsumAttributes a{d.Chance(0.3f), d.Chance(0.3f)};
  return d.Add(OpKind::kCumsum, a, {x->tensor, d.Ints({}, {d.Chance(0.3f) ? axis - rank : axis})}, x->shape, n * x->scale,
               0.0f, std::sqrt(n));
}

bool MakeUnary(Draw& d) {
  // FLOOR, CEIL and SIGN are left out: they step, so one rounding of an
  // input near a step moves the answer by 1 (their own test keeps away).
  auto fits = [](OpKind op, const Value& v) {
    if (op == OpKind::kExp) return v.scale <= 2.0f;     // exp's slope stays below e^2
    if (op == OpKind::kRsqrt) return v.floor >= 0.25f;  // and rsqrt's below 4
    if (op == OpKind::kSqrt || op == OpKind::kLog) return v.floor >= 0.25f && v.scale <= 8.0f;
    if (op == OpKind::kSquare || op == OpKind::kSin || op == OpKind::kCos) return v.scale <= 4.0f;
    return true;
  };
  // Values with a floor of 0.25 or more (what RSQRT, SQRT and LOG take) are
  // rare; now and then one is made as layer normalizations do: |x| + 0.5.
  const auto& values = d.values();
  if (d.Chance(0.3f) && std::none_of(values.begin(), values.end(), [](const Value& v) { return v.floor >= 0.25f; })) {
    if (const Value* x = d.Pick([](const Value& v) { return v.scale <= 7.5f; })) {
      const int t = x->tensor;
      const Shape shape = x->shape;
      const float s = x->scale;
      if (!d.Add(OpKind::kAbs, {}, {t}, shape, s, 0.0f, 1.0f)) return false;
      const int abs = d.values().back().tensor;
      if (!d.Add(OpKind::kAdd, ops::ElementwiseAttributes{}, {abs, d.Floats({1}, {0.5f})}, shape, s + 0.5f, 0.5f, 1.0f)) {
        return false;
      }
    }
  }
  // Drawn among the ops some value fits, so that the rare fits are taken
  // whenever they turn up.
  std::vector<OpKind> drawable;
  for (OpKind op : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                    OpKind::kHardSwish, OpKind::kExp, OpKind::kRsqrt, OpKind::kElu, OpKind::kLeakyRelu, OpKind::kAbs,
                    OpKind::kNeg, OpKind::kSquare, OpKind::kSqrt, OpKind::kLog, OpKind::kSin, OpKind::kCos,
                    OpKind::kGelu}) {
    if (std::any_of(values.begin(), values.end(), [&](const Value& v) { return fits(op, v); })) drawable.push_back(op);
  }
  const OpKind op = drawable[static_cast<size_t>(d.Int(0, static_cast<int>(drawable.size()) - 1))];
  const Value* x = d.Pick([&](const Value& v) { return fits(op, v); });
  if (x == nullptr) return false;
  const float s = x->scale, f = x->floor;
  Attributes a;
  float scale = s, floor = 0.0f, gain = 1.0f;
  switch (op) {
    case OpKind::kRelu: floor = f; break;
    case OpKind::kRelu6:
      scale = std::min(s, 6.0f);
      floor = std::min(f, 6.0f);
      break;
    case OpKind::kReluN1To1:
    case OpKind::kTanh: scale = std::min(s, 1.0f); break;
    case OpKind::kLogistic:
      scale = 1.0f;
      floor = 1.0f / (1.0f + std::exp(s));
      gain = 0.25f;
      break;
    case OpKind::kHardSwish: gain = std::max(1.0f, s / 3.0f + 0.5f); break;
    case OpKind::kExp:
      scale = std::exp(s);
      floor = std::exp(-s);
      gain = scale;
      break;
    case OpKind::kRsqrt:
      scale = 1.0f / std::sqrt(f);
      floor = 1.0f / std::sqrt(s);
      gain = 0.5f * scale * scale * scale;
      break;
    case OpKind::kElu: scale = std::max(s, 1.0f); break;
    case OpKind::kLeakyRelu: a = ops::LeakyReluAttributes{d.Real(0.01f, 0.5f)}; break;
    case OpKind::kGelu:  // its slope is at most 1.13
      a = ops::GeluAttributes{d.Chance(0.5f)};
      gain = 1.2f;
      break;
    case OpKind::kAbs: floor = f; break;
    case OpKind::kSquare:
      scale = s * s;
      floor = f * f;
      gain = 2.0f * std::max(s, 1.0f);
      break;
    // An input's error is relative to its own size (1 + s); these outputs
    // are about 1, so the gain carries the ratio too.
    case OpKind::kSqrt:
      scale = std::sqrt(s);
      floor = std::sqrt(f);
      gain = (1.0f + s) / (2.0f * std::sqrt(f));
      break;
    case OpKind::kLog:
      scale = std::max(std::fabs(std::log(f)), std::fabs(std::log(s)));
      gain = (1.0f + s) / f;
      break;
    case OpKind::kSin:
    case OpKind::kCos:
      scale = 1.0f;
      gain = 1.0f + s;
      break;
    default: break;
  }
  return d.Add(op, a, {x->tensor}, x->shape, scale, floor, gain);
}

// ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE on the broadcast
// forms the GPU reads: two activations of one shape, an activation and a
// per-channel [1,1,1,C] activation, a per-channel constant, a scalar constant.
bool MakeBinary(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMaximum, OpKind::kMinimum,
                             OpKind::kSquaredDifference});
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int c = x->shape.back();
  struct Operand {
    int tensor;
    Shape shape;
    float scale, floor;
    float smallest;  // the smallest |x|, for a divisor
    bool activation;
  };
  std::optional<Operand> other;
  const float form = d.Unit();
  if (form < 0.35f) {
    const Value* y = d.Pick([&](const Value& v) { return v.shape == x->shape; }, x->tensor);
    other = Operand{y->tensor, y->shape, y->scale, y->floor, y->floor, true};
  } else if (form < 0.5f && x->shape.size() == 4) {
    const Shape vector = {1, 1, 1, c};
    if (const Value* y = d.Pick([&](const Value& v) { return v.shape == vector && v.tensor != x->tensor; })) {
      other = Operand{y->tensor, y->shape, y->scale, y->floor, y->floor, true};
    }
  }
  if (other && op == OpKind::kDiv && other->floor < 0.5f) other.reset();  // dividing by ~0
  if (!other) {
    Shape shape;
    int64_t n = 1;
    if (d.Chance(0.6f)) {
      n = c;
      shape = x->shape.size() == 4 ? d.OneOf<Shape>({{c}, {1, 1, 1, c}, {1, 1, c}}) : Shape{c};
    } else {
      shape = d.OneOf<Shape>({{}, {1}, {1, 1, 1, 1}});
    }
    std::vector<float> values = d.Uniform(n, 1.0f);
    if (op == OpKind::kDiv) {
      for (float& v : values) v = (v < 0 ? -1.0f : 1.0f) * (0.5f + 1.5f * std::abs(v));
    }
    float largest = 0.0f, smallest = 2.0f, floor = 2.0f;
    for (float v : values) {
      largest = std::max(largest, std::abs(v));
      smallest = std::min(smallest, std::abs(v));
      floor = std::min(floor, v);
    }
    other = Operand{d.Floats(shape, values), shape, largest, std::max(floor, 0.0f), smallest, false};
  }
  // Either operand order, except that DIV divides by the operand kept away from 0.
  const bool swap = op == OpKind::kDiv ? (x->floor >= 0.5f && other->activation && d.Chance(0.5f)) : d.Chance(0.3f);
  Operand first{x->tensor, x->shape, x->scale, x->floor, x->floor, true};
  Operand second = *other;
  if (swap) std::swap(first, second);
  const float s1 = first.scale, s2 = second.scale;
  float scale = s1 + s2, floor = 0.0f, gain = 1.0f;
  switch (op) {
    case OpKind::kAdd: floor = first.floor > 0 && second.floor > 0 ? first.floor + second.floor : 0.0f; break;
    case OpKind::kMul:
      scale = s1 * s2;
      floor = first.floor * second.floor;
      gain = std::max(1.0f, (first.activation ? s2 : 0.0f) + (second.activation ? s1 : 0.0f));
      break;
    case OpKind::kDiv:
      scale = s1 / second.smallest;
      gain = 1.0f / second.smallest + (second.activation ? s1 / (second.smallest * second.smallest) : 0.0f);
      break;
    case OpKind::kMaximum:
      scale = std::max(s1, s2);
      floor = std::max(first.floor, second.floor);
      break;
    case OpKind::kMinimum:
      scale = std::max(s1, s2);
      floor = std::min(first.floor, second.floor);
      break;
    case OpKind::kSquaredDifference:
      scale = (s1 + s2) * (s1 + s2);
      gain = 2.0f * (s1 + s2);
      break;
    default: break;
  }
  Attributes a;
  if (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv) {
    const Activation act = d.FusedActivation();
    a = ops::ElementwiseAttributes{act};
    scale = ActivatedScale(scale, act);
    floor = ActivatedFloor(floor, act);
  }
  return d.Add(op, a, {first.tensor, second.tensor}, BroadcastShapes(first.shape, second.shape), scale, floor, gain);
}

// A value compared with 0, and what models do with the bools: SELECT_V2
// between the value and a multiple of it (a leaky ReLU written out), or the
// value times the bools CAST to float (a mask). Both sides agree at 0, so
// a comparison that an fp16 rounding turns around moves the output by no
// more than that rounding.
bool MakeMask(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kEqual, OpKind::kNotEqual, OpKind::kLess, OpKind::kLessEqual, OpKind::kGreater,
                             OpKind::kGreaterEqual});
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int t = x->tensor;
  const Shape shape = x->shape;
  const float s = x->scale;
  const int bools = d.AddHidden(op, {t, d.Floats({}, {0.0f})}, shape, DataType::kBool);
  if (d.Chance(0.5f)) {
    const int mask = d.AddHidden(OpKind::kCast, {bools}, shape, DataType::kFloat32);
    return d.Add(OpKind::kMul, ops::ElementwiseAttributes{}, {mask, t}, shape, s, 0.0f, 1.0f);
  }
  const float alpha = d.Real(-1.0f, 1.0f);
  if (!d.Add(OpKind::kMul, ops::ElementwiseAttributes{}, {t, d.Floats({1}, {alpha})}, shape, s, 0.0f, 1.0f)) return false;
  const int scaled = d.values().back().tensor;
  return d.Add(OpKind::kSelectV2, {}, {bools, t, scaled}, shape, s, 0.0f, 1.0f);
}

bool MakePrelu(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const int c = x->shape.back();
  const size_t rank = x->shape.size();
  if (d.Chance(0.1f)) {  // a computed alpha: the GPU wants a constant
    const Value* alpha = d.Pick([&](const Value& v) { return v.shape == x->shape; }, x->tensor);
    return d.Add(OpKind::kPrelu, {}, {x->tensor, alpha->tensor}, x->shape, x->scale * std::max(1.0f, alpha->scale),
                 0.0f, std::max(1.0f, alpha->scale + x->scale));
  }
  Shape shape = {c};
  if (rank >= 3 && d.Chance(0.4f)) shape = {1, 1, c};
  if (rank == 4 && d.Chance(0.3f)) shape = {1, 1, 1, c};
  if (d.Chance(0.15f)) shape = {1};
  return d.Add(OpKind::kPrelu, {}, {x->tensor, d.Floats(shape, d.Uniform(NumElements(shape), 1.0f))}, x->shape,
               x->scale, 0.0f, 1.0f);
}

bool MakeSoftmax(Draw& d) {
  const Value* x = d.Pick(Any);
  if (x == nullptr) return false;
  const float beta = d.OneOf({1.0f, 1.0f, 0.5f, 2.0f});
  // exp of differences up to 2 * scale * beta: kept small, as for EXP.
  if (2.0f * x->scale * beta > 8.0f) return false;
  return d.Add(OpKind::kSoftmax, ops::SoftmaxAttributes{beta}, {x->tensor}, x->shape, 1.0f, 0.0f, beta);
}

bool MakePool2d(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kMaxPool2d, OpKind::kAveragePool2d});
  const Value* x = d.Pick(Rank4);
  if (x == nullptr) return false;
  const int h = x->shape[1], w = x->shape[2];
  ops::PoolAttributes a;
  a.padding = d.Chance(0.5f) ? Padding::kSame : Padding::kValid;
  const Axis ay = DrawAxis(d, h, a.padding, 3, false), ax = DrawAxis(d, w, a.padding, 3, false);
  a.filter_h = ay.filter;
  a.filter_w = ax.filter;
  a.stride_h = ay.stride;
  a.stride_w = ax.stride;
  if (d.Chance(0.1f)) {  // global pooling
    a.padding = Padding::kValid;
    a.filter_h = h;
    a.filter_w = w;
  }
  a.activation = d.FusedActivation();
  const Shape out = {x->shape[0], WindowOut(a.padding, h, a.filter_h, a.stride_h, 1),
                     WindowOut(a.padding, w, a.filter_w, a.stride_w, 1), x->shape[3]};
  return d.Add(op, a, {x->tensor}, out, ActivatedScale(x->scale, a.activation), 0.0f, 1.0f);
}

// MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD over one axis or, on
// [B,H,W,C], over H and W (a global pool). A sum of n values adds n input
// errors; a product of n values of at most s scales each error by about
// n * s^(n-1): Add refuses them where that grows too large.
bool MakeReduce(Draw& d) {
  const OpKind op = d.OneOf({OpKind::kMean, OpKind::kMean, OpKind::kSum, OpKind::kReduceMax, OpKind::kReduceMin,
                             OpKind::kReduceProd});
  const Value* x = d.Pick([](const Value& v) { return v.shape.size() >= 2; });
  if (x == nullptr) return false;
  const int rank = static_cast<int>(x->shape.size());
  std::vector<int32_t> axes;
  if (rank == 4 && d.Chance(0.6f)) {
    axes = d.Chance(0.8f) ? std::vector<int32_t>{1, 2} : std::vector<int32_t>{2, 1};
  } else {
    axes = {d.Int(1, rank - 1)};
    if (d.Chance(0.2f)) axes[0] -= rank;
  }
  ops::ReducerAttributes a{d.Chance(0.5f)};
  Shape out;
  float n = 1.0f;
  for (int i = 0; i < rank; ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end() ||
                         std::find(axes.begin(), axes.end(), i - rank) != axes.end();
    if (!reduced)
      out.push_back(x->shape[static_cast<size_t>(i)]);
    else if (a.keep_dims)
      out.push_back(1);
    if (reduced) n *= static_cast<float>(x->shape[static_cast<size_t>(i)]);
  }
  float scale = x->scale, floor = x->floor, gain = 1.0f;
  if (op == OpKind::kSum) {
    scale = n * x->scale;
    floor = n * x->floor;
    gain = n;
  } else if (op == OpKind::kReduceProd) {
    const float s = std::max(1.0f, x->scale);
    scale = std::pow(s, n);
    floor = 0.0f;
    gain = n * std::pow(s, n - 1.0f);
  }
  return d.Add(op, a, {x->tensor, d.Ints({static_cast<int>(axes.size())}, axes)}, out, scale, floor, gain);
}

}  // namespace

const std::vector<Maker>& Makers() {
  static const std::vector<Maker> makers = {
      {"CONV_2D", 6, MakeConv2d},
      {"DEPTHWISE_CONV_2D", 4, MakeDepthwiseConv2d},
      {"FULLY_CONNECTED", 3, MakeFullyConnected},
      {"BATCH_MATMUL", 1, MakeBatchMatmul},
      {"CUMSUM", 1, MakeCumsum},
      {"GATHER", 1, MakeGather},
      {"ONE_HOT", 1, MakeOneHot},
      {"unary", 6, MakeUnary},
      {"binary", 8, MakeBinary},
      {"PRELU", 2, MakePrelu},
      {"SOFTMAX", 1, MakeSoftmax},
      {"pool", 2, MakePool2d},
      {"MEAN/SUM/REDUCE_*", 3, MakeReduce},
      {"LSTM/UNIDIRECTIONAL_SEQUENCE_LSTM", 1, MakeLstm},
      {"CONCATENATION", 2, MakeConcatenation},
      {"RESHAPE", 2, MakeReshape},
      {"SQUEEZE/EXPAND_DIMS", 1, MakeSqueezeOrExpandDims},
      {"PAD", 2, MakePad},
      {"MIRROR_PAD", 1, MakeMirrorPad},
      {"PACK", 1, MakePack},
      {"SPLIT/SPLIT_V", 1, MakeSplit},
      {"TILE", 1, MakeTile},
      {"SLICE", 1, MakeSlice},
      {"STRIDED_SLICE", 1, MakeStridedSlice},
      {"DEPTH_TO_SPACE", 1, MakeDepthToSpace},
      {"SPACE_TO_DEPTH", 1, MakeSpaceToDepth},
      {"resize", 2, MakeResize},
      {"TRANSPOSE_CONV", 2, MakeTransposeConv},
      {"TRANSPOSE", 1, MakeTranspose},
      {"comparison/SELECT_V2/CAST", 2, MakeMask},
  };
  return makers;
}

const Maker& DrawMaker(Draw& d) {
  int total = 0;
  for (const Maker& m : Makers()) total += m.weight;
  int r = d.Int(0, total - 1);
  for (const Maker& m : Makers()) {
    if (r < m.weight) return m;
    r -= m.weight;
  }
  return Makers().front();
}

}  // namespace mgd::random_graph
