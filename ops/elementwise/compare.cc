// EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (float32 or
// int32 operands, a bool output) and SELECT_V2 (a bool condition choosing
// between two float32 or int32 operands), all with numpy broadcasting. The
// GPU takes the float32 ones (update.cc), its bools as 0.0/1.0; int32
// operands stay on the CPU (the GPU holds int32 tensors only as inputs
// that ops read as given).
#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"

namespace mgd::ops {
namespace {

absl::Status ValidateCompare(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32, DataType::kInt32}));
  if (c.In(1).type != c.In(0).type) {
    return c.Fail(fmt::format("inputs have types {} and {}, expected one", DataTypeName(c.In(0).type),
                              DataTypeName(c.In(1).type)));
  }
  return c.OutputType(0, DataType::kBool);
}

absl::Status ValidateSelect(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(3, 3, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kBool}));
  MGD_RETURN_IF_ERROR(c.InputType(1, {DataType::kFloat32, DataType::kInt32}));
  MGD_RETURN_IF_ERROR(c.InputType(2, {c.In(1).type}));
  return c.OutputType(0, c.In(1).type);
}

template <typename T>
bool Compare(OpKind op, T a, T b) {
  switch (op) {
    case OpKind::kEqual: return a == b;
    case OpKind::kNotEqual: return a != b;
    case OpKind::kLess: return a < b;
    case OpKind::kLessEqual: return a <= b;
    case OpKind::kGreater: return a > b;
    default: return a >= b;  // GREATER_EQUAL
  }
}

class CompareKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_ASSIGN_OR_RETURN(out_, BroadcastShape(ctx, ctx.in(0).shape, ctx.in(1).shape));
    strides_ = {BroadcastStrides(ctx.in(0).shape, out_), BroadcastStrides(ctx.in(1).shape, out_)};
    return ctx.ExpectOutputShape(0, out_);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& a = ctx.in(0);
    const TensorRef& b = ctx.in(1);
    uint8_t* y = ctx.out(0).as<uint8_t>();
    const OpKind op = ctx.node->op;
    if (a.type == DataType::kInt32) {
      ForEachBroadcast(out_, strides_, [&](int64_t i, const int64_t* o) { y[i] = Compare(op, a.as<int32_t>()[o[0]], b.as<int32_t>()[o[1]]); });
    } else {
      ForEachBroadcast(out_, strides_, [&](int64_t i, const int64_t* o) { y[i] = Compare(op, a.as<float>()[o[0]], b.as<float>()[o[1]]); });
    }
    return absl::OkStatus();
  }

 private:
  Shape out_;
  std::vector<std::vector<int64_t>> strides_;  // per operand, from Prepare
};

class SelectKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    MGD_ASSIGN_OR_RETURN(Shape values, BroadcastShape(ctx, ctx.in(1).shape, ctx.in(2).shape));
    MGD_ASSIGN_OR_RETURN(out_, BroadcastShape(ctx, ctx.in(0).shape, values));
    strides_ = {BroadcastStrides(ctx.in(0).shape, out_), BroadcastStrides(ctx.in(1).shape, out_),
                BroadcastStrides(ctx.in(2).shape, out_)};
    return ctx.ExpectOutputShape(0, out_);
  }

  // Any nonzero condition byte is true; the values are copied as bytes (4
  // for both float32 and int32).
  absl::Status Invoke(KernelContext& ctx) override {
    const uint8_t* condition = ctx.in(0).as<uint8_t>();
    const uint32_t* x = ctx.in(1).as<uint32_t>();
    const uint32_t* z = ctx.in(2).as<uint32_t>();
    uint32_t* y = ctx.out(0).as<uint32_t>();
    ForEachBroadcast(out_, strides_, [&](int64_t i, const int64_t* o) { y[i] = condition[o[0]] != 0 ? x[o[1]] : z[o[2]]; });
    return absl::OkStatus();
  }

 private:
  Shape out_;
  std::vector<std::vector<int64_t>> strides_;  // per operand, from Prepare
};

OpDefinition Comparison(OpKind op) {
  return {.op = op,
          .validate = ValidateCompare,
          .cpu_kernel = MakeKernel<CompareKernel>,
          .gpu = {ElementwiseShader},
          .elementwise = ElementwiseUpdateOf,
          .gpu_bools = true};
}

}  // namespace

std::vector<OpDefinition> CompareOps() {
  return {Comparison(OpKind::kEqual),   Comparison(OpKind::kNotEqual), Comparison(OpKind::kLess),
          Comparison(OpKind::kLessEqual), Comparison(OpKind::kGreater), Comparison(OpKind::kGreaterEqual),
          {.op = OpKind::kSelectV2,
           .validate = ValidateSelect,
           .cpu_kernel = MakeKernel<SelectKernel>,
           .gpu = {ElementwiseShader},
           .elementwise = ElementwiseUpdateOf,
           .gpu_bools = true}};
}

}  // namespace mgd::ops
