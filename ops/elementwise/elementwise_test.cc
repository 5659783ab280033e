// The elementwise ops: the CPU kernels against numpy's broadcasting and the
// ops' formulas, the GPU against the CPU in every broadcast form.
#include "ops/elementwise/elementwise.h"

#include "tests/delegate/delegate_fixture.h"
#include "tests/interpreter/kernels/kernel_test.h"

namespace mgd::ops {
namespace {

// ---------------------------------------------------------------------------
// ADD / SUB / MUL / DIV / MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / PRELU
// ---------------------------------------------------------------------------

// numpy broadcasting, written as a plain index decomposition: the shapes are
// right-aligned, a dimension of 1 repeats.
template <typename F>
std::vector<double> RefBroadcast(const Shape& as, const std::vector<float>& a, const Shape& bs,
                                 const std::vector<float>& b, F f, Shape* out_shape) {
  const size_t rank = std::max(as.size(), bs.size());
  Shape pa(rank - as.size(), 1), pb(rank - bs.size(), 1);
  pa.insert(pa.end(), as.begin(), as.end());
  pb.insert(pb.end(), bs.begin(), bs.end());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = std::max(pa[d], pb[d]);
  *out_shape = out;
  std::vector<double> y;
  const int64_t n = NumElements(out);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      const int64_t idx = rest % out[ud];
      rest /= out[ud];
      if (pa[ud] != 1) ia += idx * sa;
      if (pb[ud] != 1) ib += idx * sb;
      sa *= pa[ud];
      sb *= pb[ud];
    }
    y.push_back(f(static_cast<double>(a[static_cast<size_t>(ia)]), static_cast<double>(b[static_cast<size_t>(ib)])));
  }
  return y;
}

double RefBinary(OpKind op, double p, double q) {
  switch (op) {
    case OpKind::kAdd: return p + q;
    case OpKind::kSub: return p - q;
    case OpKind::kMul: return p * q;
    case OpKind::kDiv: return p / q;
    case OpKind::kMaximum: return std::max(p, q);
    case OpKind::kMinimum: return std::min(p, q);
    case OpKind::kSquaredDifference: return (p - q) * (p - q);
    case OpKind::kPrelu: return p >= 0 ? p : p * q;
    case OpKind::kPow: return std::pow(p, q);
    case OpKind::kFloorDiv: return std::floor(p / q);
    case OpKind::kFloorMod: return p - q * std::floor(p / q);
    default: return std::nan("");
  }
}

// Runs `op` on random [as] x [bs] (the second operand a constant when
// `b_constant`) and compares with RefBroadcast.
void CheckBinary(OpKind op, Activation act, const Shape& as, const Shape& bs, uint32_t seed, bool b_constant = false) {
  SCOPED_TRACE(::testing::Message() << OpName(op) << " " << ShapeToString(as) << " x " << ShapeToString(bs) << " "
                                    << ActivationName(act));
  const auto a = Random(Count(as), seed, -3.0f, 3.0f);
  auto b = Random(Count(bs), seed + 1, -3.0f, 3.0f);
  if (op == OpKind::kDiv) {
    for (float& v : b) v = v < 0 ? v - 0.5f : v + 0.5f;  // away from 0
  }
  Shape out_shape;
  const auto expected = RefBroadcast(
      as, a, bs, b, [&](double p, double q) { return ApplyActivation(act, RefBinary(op, p, q)); }, &out_shape);
  Attributes attrs;
  if (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv) {
    attrs = ElementwiseAttributes{act};
  }
  const auto actual = RunSingleOp(op, attrs, {In(as, a), b_constant ? Const(bs, b) : In(bs, b)}, out_shape);
  ExpectClose(actual, expected);
}

// The broadcast patterns every arithmetic op is checked on.
void CheckBroadcastPatterns(OpKind op, uint32_t seed) {
  CheckBinary(op, Activation::kNone, {1, 3, 5, 7}, {1, 3, 5, 7}, seed);             // same shape
  CheckBinary(op, Activation::kNone, {1, 3, 5, 7}, {1, 1, 1, 7}, seed + 10, true);  // per-channel
  CheckBinary(op, Activation::kNone, {1, 1, 1, 7}, {1, 3, 5, 7}, seed + 20);        // per-channel, first operand
  CheckBinary(op, Activation::kNone, {1, 6, 3}, {1}, seed + 30, true);              // [1,N,3] x [1]
  CheckBinary(op, Activation::kNone, {1}, {1, 6, 3}, seed + 40);                    // [1] x [1,N,3]
  CheckBinary(op, Activation::kNone, {2, 5}, {}, seed + 50, true);                  // tensor x scalar
  CheckBinary(op, Activation::kNone, {}, {2, 5}, seed + 60);                        // scalar x tensor
  CheckBinary(op, Activation::kNone, {2, 1, 3, 1}, {1, 4, 1, 5}, seed + 70);        // general 4-D
  CheckBinary(op, Activation::kNone, {1, 4, 1, 5}, {2, 1, 3, 1}, seed + 80);        // and the other way
  CheckBinary(op, Activation::kNone, {4, 1, 5}, {2, 1, 3, 1}, seed + 90);           // different ranks
  CheckBinary(op, Activation::kNone, {2, 3, 1, 6}, {3, 4, 1}, seed + 100);          // different ranks
}

TEST(BinaryTest, AddChannelBroadcastByHand) {
  // [[1,2,3],[4,5,6]] + [10,20,30] = [[11,22,33],[14,25,36]].
  const auto out = RunSingleOp(OpKind::kAdd, ElementwiseAttributes{},
                               {In({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}), Const({1, 1, 1, 3}, {10, 20, 30})}, {1, 1, 2, 3});
  ExpectClose(out, {11, 22, 33, 14, 25, 36});
}

TEST(BinaryTest, SubScalarMinusTensorByHand) {
  // 10 - [1, 2.5, -3] = [9, 7.5, 13] (the scalar is the first operand).
  const auto out =
      RunSingleOp(OpKind::kSub, ElementwiseAttributes{}, {Const({}, {10}), In({1, 3}, {1, 2.5f, -3})}, {1, 3});
  ExpectClose(out, {9, 7.5, 13});
}

TEST(BinaryTest, DivGeneral4dBroadcastByHand) {
  // a [2,1] = [[6],[12]] / b [1,3] = [[1,2,3]] -> [[6,3,2],[12,6,4]].
  const auto out =
      RunSingleOp(OpKind::kDiv, ElementwiseAttributes{}, {In({2, 1}, {6, 12}), In({1, 3}, {1, 2, 3})}, {2, 3});
  ExpectClose(out, {6, 3, 2, 12, 6, 4});
}

TEST(BinaryTest, AddMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kAdd, 2000); }
TEST(BinaryTest, SubMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kSub, 2200); }
TEST(BinaryTest, MulMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMul, 2400); }
TEST(BinaryTest, DivMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kDiv, 2600); }
TEST(BinaryTest, MaximumMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMaximum, 2800); }
TEST(BinaryTest, MinimumMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kMinimum, 3000); }
TEST(BinaryTest, SquaredDifferenceMatchesBroadcastLoop) { CheckBroadcastPatterns(OpKind::kSquaredDifference, 3200); }

TEST(BinaryTest, FusedActivationsMatchBroadcastLoop) {
  CheckBinary(OpKind::kAdd, Activation::kRelu, {1, 3, 4, 5}, {1, 1, 1, 5}, 3400, true);
  CheckBinary(OpKind::kAdd, Activation::kRelu6, {2, 1, 3, 1}, {1, 4, 1, 5}, 3410);
  CheckBinary(OpKind::kSub, Activation::kReluN1To1, {1, 6, 3}, {1}, 3420, true);
  CheckBinary(OpKind::kMul, Activation::kRelu6, {1, 4, 1, 5}, {2, 1, 3, 1}, 3430);
  CheckBinary(OpKind::kMul, Activation::kTanh, {2, 5}, {}, 3440, true);
  CheckBinary(OpKind::kDiv, Activation::kRelu, {1, 3, 4, 5}, {1, 3, 4, 5}, 3450);
  CheckBinary(OpKind::kDiv, Activation::kReluN1To1, {}, {2, 5}, 3460);
}

TEST(BinaryTest, AddFusedRelu6ByHand) {
  // relu6([-5, 1, 4, 8] + 1) = relu6([-4, 2, 5, 9]) = [0, 2, 5, 6].
  const auto out = RunSingleOp(OpKind::kAdd, ElementwiseAttributes{Activation::kRelu6},
                               {In({4}, {-5, 1, 4, 8}), Const({1}, {1})}, {4});
  ExpectClose(out, {0, 2, 5, 6});
}

TEST(BinaryTest, MaximumMinimumSquaredDifferenceByHand) {
  // a = [1, -2, 3, 0], b = [0.5] broadcast:
  // max = [1, 0.5, 3, 0.5]; min = [0.5, -2, 0.5, 0]; (a-b)^2 = [0.25, 6.25, 6.25, 0.25].
  const std::vector<Operand> ops = {In({4}, {1, -2, 3, 0}), Const({1}, {0.5f})};
  ExpectClose(RunSingleOp(OpKind::kMaximum, {}, ops, {4}), {1, 0.5, 3, 0.5});
  ExpectClose(RunSingleOp(OpKind::kMinimum, {}, ops, {4}), {0.5, -2, 0.5, 0});
  ExpectClose(RunSingleOp(OpKind::kSquaredDifference, {}, ops, {4}), {0.25, 6.25, 6.25, 0.25});
}

TEST(BinaryTest, PreluChannelAlphaByHand) {
  // x [1,1,2,3] = [[-1, 2, -3], [4, -5, -6]], alpha [1,1,3] = [0.1, 0.2, 0.3]:
  // [[-0.1, 2, -0.9], [4, -1.0, -1.8]].
  const auto out =
      RunSingleOp(OpKind::kPrelu, {}, {In({1, 1, 2, 3}, {-1, 2, -3, 4, -5, -6}), Const({1, 1, 3}, {0.1f, 0.2f, 0.3f})},
                  {1, 1, 2, 3});
  ExpectClose(out, {-0.1, 2, -0.9, 4, -1.0, -1.8});
}

TEST(BinaryTest, PreluChannelAlphaMatchesLoop) {
  CheckBinary(OpKind::kPrelu, Activation::kNone, {1, 5, 6, 7}, {1, 1, 7}, 3500, true);
  CheckBinary(OpKind::kPrelu, Activation::kNone, {2, 3, 4, 13}, {1, 1, 13}, 3510, true);
}

// POW of positive bases; FLOOR_DIV and FLOOR_MOD of divisors away from 0.
TEST(BinaryTest, PowFloorDivFloorModMatchBroadcastLoop) {
  for (OpKind op : {OpKind::kPow, OpKind::kFloorDiv, OpKind::kFloorMod}) {
    SCOPED_TRACE(OpName(op));
    const Shape as{2, 1, 3, 1}, bs{1, 4, 1, 5};
    auto a = Random(Count(as), 3600, -3.0f, 3.0f), b = Random(Count(bs), 3601, -3.0f, 3.0f);
    if (op == OpKind::kPow) {
      for (float& v : a) v = std::fabs(v) + 0.1f;
    } else {
      for (float& v : b) v = v < 0 ? v - 0.5f : v + 0.5f;
    }
    Shape out_shape;
    const auto expected = RefBroadcast(as, a, bs, b, [&](double p, double q) { return RefBinary(op, p, q); }, &out_shape);
    ExpectClose(RunSingleOp(op, {}, {In(as, a), In(bs, b)}, out_shape), expected);
  }
}

// TFLite's results by hand: POW of negative bases with integer exponents
// and of zero; FLOOR_DIV rounding down; FLOOR_MOD taking the divisor's sign.
TEST(BinaryTest, PowFloorDivFloorModByHand) {
  const auto pow = RunSingleOp(OpKind::kPow, {}, {In({6}, {-2, -2, 4, 0, 0, -2}), In({6}, {3, 2, 0.5f, 2, 0, 0.5f})}, {6});
  ExpectClose(std::vector<float>(pow.begin(), pow.end() - 1), {-8, 4, 2, 0, 1});
  EXPECT_TRUE(std::isnan(pow[5]));
  const std::vector<Operand> ops = {In({4}, {7, -7, 7, -7}), In({4}, {2, 2, -2, -2})};
  ExpectClose(RunSingleOp(OpKind::kFloorDiv, {}, ops, {4}), {3, -4, -4, 3});
  ExpectClose(RunSingleOp(OpKind::kFloorMod, {}, ops, {4}), {1, 1, -1, -1});
  ExpectClose(RunSingleOp(OpKind::kFloorMod, {}, {In({2}, {5.5f, -0.75f}), Const({1}, {2})}, {2}), {1.5f, 1.25f});
}

TEST(BinaryTest, IncompatibleShapesAreAnError) {
  const absl::Status s =
      CreateStatus(OpKind::kAdd, ElementwiseAttributes{}, {In({1, 2, 3}, {}), In({1, 4, 3}, {})}, {{1, 4, 3}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("do not broadcast"));
}

// ---------------------------------------------------------------------------
// Unary activations
// ---------------------------------------------------------------------------

// A grid of values over [lo, hi] plus a few special points.
std::vector<float> Grid(float lo, float hi, int steps, std::vector<float> extra = {}) {
  std::vector<float> v;
  for (int i = 0; i <= steps; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps));
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

template <typename F>
void CheckUnary(OpKind op, const std::vector<float>& x, F f, Attributes attrs = {}) {
  SCOPED_TRACE(OpName(op));
  std::vector<double> expected;
  for (float v : x) expected.push_back(f(static_cast<double>(v)));
  const Shape shape{1, static_cast<int32_t>(x.size())};
  ExpectClose(RunSingleOp(op, attrs, {In(shape, x)}, shape), expected);
}

const std::vector<float> kClampInputs = {-7, -1.5f, -1, -0.5f, 0, 0.5f, 1, 3, 6, 7.5f};

TEST(UnaryTest, ReluByHand) {
  const auto out = RunSingleOp(OpKind::kRelu, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {0, 0, 0, 0, 0, 0.5, 1, 3, 6, 7.5});
}

TEST(UnaryTest, Relu6ByHand) {
  const auto out = RunSingleOp(OpKind::kRelu6, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {0, 0, 0, 0, 0, 0.5, 1, 3, 6, 6});
}

TEST(UnaryTest, ReluN1To1ByHand) {
  const auto out = RunSingleOp(OpKind::kReluN1To1, {}, {In({10}, kClampInputs)}, {10});
  ExpectClose(out, {-1, -1, -1, -0.5, 0, 0.5, 1, 1, 1, 1});
}

TEST(UnaryTest, LeakyReluByHand) {
  // alpha 0.3: [-2, -0.5, 0, 4] -> [-0.6, -0.15, 0, 4].
  const auto out = RunSingleOp(OpKind::kLeakyRelu, LeakyReluAttributes{0.3f}, {In({4}, {-2, -0.5f, 0, 4})}, {4});
  ExpectClose(out, {-0.6, -0.15, 0, 4});
}

TEST(UnaryTest, LogisticMatchesFormula) {
  CheckUnary(OpKind::kLogistic, Grid(-20, 20, 97, {0}), [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

TEST(UnaryTest, TanhMatchesFormula) {
  CheckUnary(OpKind::kTanh, Grid(-10, 10, 97, {0, 1e-3f}), [](double v) { return std::tanh(v); });
}

TEST(UnaryTest, HardSwishMatchesFormula) {
  // x * relu6(x + 3) / 6 (mgd evaluates it in XNNPACK's order: tolerance).
  CheckUnary(OpKind::kHardSwish, Grid(-6, 6, 89, {-3, 3, 0, -2.9f, 2.9f}),
             [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
}

TEST(UnaryTest, ExpMatchesFormula) {
  CheckUnary(OpKind::kExp, Grid(-10, 10, 83, {0}), [](double v) { return std::exp(v); });
}

TEST(UnaryTest, RsqrtMatchesFormula) {
  CheckUnary(OpKind::kRsqrt, Grid(0.01f, 100, 91, {1, 4, 0.25f}), [](double v) { return 1.0 / std::sqrt(v); });
}

TEST(UnaryTest, EluMatchesFormula) {
  CheckUnary(OpKind::kElu, Grid(-8, 4, 79, {0, -1e-4f}), [](double v) { return v < 0 ? std::exp(v) - 1.0 : v; });
}

TEST(UnaryTest, LeakyReluMatchesFormula) {
  CheckUnary(
      OpKind::kLeakyRelu, Grid(-5, 5, 37), [](double v) { return v >= 0 ? v : 0.05 * v; }, LeakyReluAttributes{0.05f});
}

// x * Phi(x) with Phi from erf, in double; approximate: TFLite's tanh form.
TEST(UnaryTest, GeluMatchesFormula) {
  const std::vector<float> x = Grid(-9, 9, 83, {0, -0.5f, 0.5f, -5, 5});
  CheckUnary(OpKind::kGelu, x, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
  CheckUnary(
      OpKind::kGelu, x,
      [](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); },
      GeluAttributes{true});
  // By hand: GELU(1) = Phi(1) = 0.8413447, GELU(-1) = -(1 - Phi(1)).
  ExpectClose(RunSingleOp(OpKind::kGelu, {}, {In({2}, {1.0f, -1.0f})}, {2}), {0.8413447460685429, -0.15865525393145707});
}

TEST(UnaryTest, MathOpsMatchFormulas) {
  const std::vector<float> any = Grid(-9, 9, 83, {0, -0.5f, 0.5f, 1e-4f});
  CheckUnary(OpKind::kAbs, any, [](double v) { return std::fabs(v); });
  CheckUnary(OpKind::kNeg, any, [](double v) { return -v; });
  CheckUnary(OpKind::kSquare, any, [](double v) { return v * v; });
  CheckUnary(OpKind::kSin, any, [](double v) { return std::sin(v); });
  CheckUnary(OpKind::kCos, any, [](double v) { return std::cos(v); });
  const std::vector<float> positive = Grid(0.01f, 100, 91, {1, 4, 0.25f});
  CheckUnary(OpKind::kSqrt, positive, [](double v) { return std::sqrt(v); });
  CheckUnary(OpKind::kLog, positive, [](double v) { return std::log(v); });
}

// TFLite's results at the edges, by hand: FLOOR and CEIL of negatives and
// integers, SIGN of zero, LOG and SQRT outside their domain.
TEST(UnaryTest, MathOpsAtTheirEdgesByHand) {
  const std::vector<float> x = {-2.5f, -2.0f, -0.5f, 0.0f, 0.5f, 2.0f, 2.5f};
  ExpectClose(RunSingleOp(OpKind::kFloor, {}, {In({7}, x)}, {7}), {-3, -2, -1, 0, 0, 2, 2});
  ExpectClose(RunSingleOp(OpKind::kCeil, {}, {In({7}, x)}, {7}), {-2, -2, 0, 0, 1, 2, 3});
  ExpectClose(RunSingleOp(OpKind::kSign, {}, {In({7}, x)}, {7}), {-1, -1, -1, 0, 1, 1, 1});
  const auto log = RunSingleOp(OpKind::kLog, {}, {In({3}, {-1.0f, 0.0f, 1.0f})}, {3});
  EXPECT_TRUE(std::isnan(log[0]));
  EXPECT_EQ(log[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log[2], 0.0f);
  const auto sqrt = RunSingleOp(OpKind::kSqrt, {}, {In({2}, {-4.0f, 9.0f})}, {2});
  EXPECT_TRUE(std::isnan(sqrt[0]));
  EXPECT_EQ(sqrt[1], 3.0f);
}

using ElementwiseGpuTest = testing::DelegateTest;

TEST_P(ElementwiseGpuTest, UnaryOpsMatchTheCpu) {
  for (OpKind op : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLogistic, OpKind::kTanh,
                    OpKind::kHardSwish, OpKind::kExp, OpKind::kElu, OpKind::kLeakyRelu, OpKind::kAbs, OpKind::kNeg,
                    OpKind::kSquare, OpKind::kSin, OpKind::kCos, OpKind::kGelu}) {
    for (bool variant : {false, true}) {
      if (variant && op != OpKind::kGelu) continue;
      SCOPED_TRACE(::testing::Message() << OpName(op) << (variant ? " approximate" : ""));
      GraphBuilder b;
      const int x = b.Input({1, 5, 3, 7});
      const int y = b.Tensor({1, 5, 3, 7});
      Attributes a;
      if (op == OpKind::kLeakyRelu) a = LeakyReluAttributes{0.1f};
      if (op == OpKind::kGelu) a = GeluAttributes{variant};
      b.Op(op, a, {x}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {testing::Uniform(105, 11, 4.0f)});
    }
  }
}

// SQRT and LOG on their domain; FLOOR, CEIL and SIGN away from the steps,
// where one rounding of the input (fp16 storage) would move the answer by 1.
TEST_P(ElementwiseGpuTest, MathOpsOnTheirDomainsMatchTheCpu) {
  std::vector<float> positive = testing::Uniform(105, 12, 4.0f), stepped = testing::Uniform(105, 13, 4.0f);
  for (float& v : positive) v = 0.05f + std::fabs(v);
  for (float& v : stepped) v = std::round(v) + (v >= std::round(v) ? 0.25f : -0.25f);
  for (OpKind op : {OpKind::kSqrt, OpKind::kLog, OpKind::kFloor, OpKind::kCeil, OpKind::kSign}) {
    SCOPED_TRACE(OpName(op));
    GraphBuilder b;
    const int x = b.Input({1, 5, 3, 7});
    const int y = b.Tensor({1, 5, 3, 7});
    b.Op(op, {}, {x}, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), {op == OpKind::kSqrt || op == OpKind::kLog ? positive : stepped});
  }
}

TEST_P(ElementwiseGpuTest, BinaryOpsInTheirBroadcastFormsMatchTheCpu) {
  const Shape full{1, 4, 5, 6};
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kMaximum, OpKind::kMinimum, OpKind::kSquaredDifference}) {
    SCOPED_TRACE(OpName(op));
    const Attributes a = (op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul)
                             ? Attributes{ElementwiseAttributes{Activation::kRelu6}}
                             : Attributes{};
    {  // two activations of one shape
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input(full), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {testing::Uniform(120, 1), testing::Uniform(120, 2)});
    }
    {  // a per-channel constant [C] and a scalar constant
      GraphBuilder b;
      const int x = b.Input(full), t = b.Tensor(full), y = b.Tensor(full);
      b.Op(op, a, {x, b.Constant({6}, testing::Uniform(6, 3))}, {t});
      b.Op(op, a, {b.Constant({1}, {0.75f}), t}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {testing::Uniform(120, 4)});
    }
    {  // [1,H,W,C] x [1,1,1,C] activation
      GraphBuilder b;
      const int x = b.Input(full), z = b.Input({1, 1, 1, 6}), y = b.Tensor(full);
      b.Op(op, a, {x, z}, {y});
      b.Output(y);
      ExpectSameAsCpu(b.Build(), {testing::Uniform(120, 5), testing::Uniform(6, 6)});
    }
  }
}

// POW: positive bases, and negative or zero bases with integer exponents
// (odd, even, zero, negative). FLOOR_DIV and FLOOR_MOD: quotients a quarter
// away from integers, where one rounding of an input does not step.
TEST_P(ElementwiseGpuTest, PowFloorDivFloorModMatchTheCpu) {
  const Shape full{1, 3, 4, 6};
  std::vector<float> base = testing::Uniform(72, 130, 3.0f), exponent = testing::Uniform(72, 131, 2.0f);
  for (size_t i = 0; i < base.size(); ++i) {
    if (i % 3 == 0) {
      exponent[i] = std::round(exponent[i]);  // -2..2
      base[i] = base[i] < 0 ? base[i] - 0.5f : base[i] + 0.5f;
      if (i % 9 == 0) base[i] = 0.0f;
      if (base[i] == 0.0f && exponent[i] < 0.0f) exponent[i] = -exponent[i];  // Inf: not comparable
    } else {
      base[i] = std::fabs(base[i]) + 0.1f;
    }
  }
  std::vector<float> divisor = testing::Uniform(6, 132, 2.0f), dividend(72);
  for (float& d : divisor) d = d < 0 ? d - 0.5f : d + 0.5f;
  const std::vector<float> quotients = testing::Uniform(72, 133, 5.0f);
  for (size_t i = 0; i < dividend.size(); ++i) {
    const float q = std::round(quotients[i]) + 0.25f;
    dividend[i] = q * divisor[i % 6];
  }
  for (OpKind op : {OpKind::kPow, OpKind::kFloorDiv, OpKind::kFloorMod}) {
    SCOPED_TRACE(OpName(op));
    GraphBuilder b;
    const int x = b.Input(full), z = b.Input(op == OpKind::kPow ? full : Shape{6}), y = b.Tensor(full);
    b.Op(op, {}, {x, z}, {y});
    b.Output(y);
    ExpectSameAsCpu(b.Build(), op == OpKind::kPow ? std::vector<std::vector<float>>{base, exponent}
                                                  : std::vector<std::vector<float>>{dividend, divisor});
  }
}

TEST_P(ElementwiseGpuTest, PreluWithPerChannelAlpha) {
  GraphBuilder b;
  const int x = b.Input({1, 3, 4, 5}), y = b.Tensor({1, 3, 4, 5});
  b.Op(OpKind::kPrelu, {}, {x, b.Constant({1, 1, 5}, testing::Uniform(5, 9))}, {y});
  b.Output(y);
  ExpectSameAsCpu(b.Build(), {testing::Uniform(60, 10)});
}

TEST_P(ElementwiseGpuTest, BinaryOpsWithNumpyBroadcasting) {
  const Shape full{1, 4, 5, 6};
  for (const Shape& other : {Shape{1, 4, 5, 1}, Shape{1, 1, 5, 6}, Shape{1, 4, 1, 6}, Shape{1, 5, 6}, Shape{6}, Shape{1, 1, 1, 1}}) {
    SCOPED_TRACE(ShapeToString(other));
    testing::OneOp g;
    const int x = g.Input(full), z = g.Input(other);
    g.Out(g.Op(OpKind::kSub, ElementwiseAttributes{}, {z, x}, {full}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // a full-shape constant and DIV by positive values
    testing::OneOp g;
    const int x = g.Input(full);
    const int k = g.b.Constant(full, [&] {
      auto v = testing::Uniform(120, 77);
      for (float& f : v) f = 1.5f + f;
      return v;
    }());
    g.Out(g.Op(OpKind::kDiv, ElementwiseAttributes{}, {x, k}, {full}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
  {  // RSQRT of positive values
    testing::OneOp g;
    g.data.push_back([] {
      auto v = testing::Uniform(30, 78);
      for (float& f : v) f = 1.2f + f;
      return v;
    }());
    const int x = g.b.Input({1, 2, 3, 5});
    g.Out(g.Op(OpKind::kRsqrt, {}, {x}, {{1, 2, 3, 5}}));
    ExpectSameAsCpu(g.b.Build(), g.data);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseGpuTest, ::testing::ValuesIn(testing::AllBackends()),
                         testing::BackendName);

}  // namespace
}  // namespace mgd::ops
