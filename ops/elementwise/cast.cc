// CAST on the CPU between every pair of its types, and on the GPU to
// float32 or bool: from a float32 or bool activation as an elementwise
// update (update.cc), from an int32, uint8 or int8 partition input read as
// given (CastReadAsGivenShader).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "model/status_macros.h"
#include "ops/elementwise/elementwise.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

constexpr std::initializer_list<DataType> kTypes = {DataType::kFloat32, DataType::kInt32, DataType::kInt64,
                                                     DataType::kUInt8,   DataType::kInt8,  DataType::kBool};

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, kTypes));
  const DataType out = c.Out(0).type;
  if (std::find(kTypes.begin(), kTypes.end(), out) == kTypes.end()) {
    return c.Fail(fmt::format("output 0 has type {}, which CAST does not make", DataTypeName(out)));
  }
  return absl::OkStatus();
}

// C++'s conversion, as TFLite's kernel does it, except where C++ leaves it
// undefined: a float outside the integer's range saturates and NaN gives 0.
template <typename To, typename From>
To CastValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To{0};
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Calls f with a value of the C++ type of `type`.
template <typename F>
void WithType(DataType type, F&& f) {
  switch (type) {
    case DataType::kFloat32: f(float{}); break;
    case DataType::kInt32: f(int32_t{}); break;
    case DataType::kInt64: f(int64_t{}); break;
    case DataType::kUInt8: f(uint8_t{}); break;
    case DataType::kInt8: f(int8_t{}); break;
    case DataType::kBool: f(bool{}); break;
    default: break;  // the validator allows no other
  }
}

class CastKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override { return ctx.ExpectOutputShape(0, ctx.in(0).shape); }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    TensorRef& y = ctx.out(0);
    const int64_t n = x.elements();
    WithType(x.type, [&](auto from) {
      using From = decltype(from);
      WithType(y.type, [&](auto to) {
        using To = decltype(to);
        To* out = y.as<To>();
        if constexpr (std::is_same_v<From, bool>) {
          // Any nonzero byte is true (a bool's byte from outside may be
          // other than 0 or 1, which C++ may not load as a bool).
          const uint8_t* in = x.as<uint8_t>();
          for (int64_t i = 0; i < n; ++i) out[i] = CastValue<To>(in[i] != 0);
        } else {
          const From* in = x.as<From>();
          for (int64_t i = 0; i < n; ++i) out[i] = CastValue<To>(in[i]);
        }
      });
    });
    return absl::OkStatus();
  }
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// An integer tensor the partition is given (token ids, a mask, an image's
// bytes) to float32 or bool: each output lane reads its element from the
// input buffer as the host wrote it, 4 bytes or 1 per element.
absl::StatusOr<GeneratedShader> CastReadAsGivenShader(const NodeContext& ctx) {
  const DataType from = ctx.input(0).type;
  std::string element;  // GLSL of the input element at `position`, as a float
  switch (from) {
    case DataType::kInt32: element = "float(src[position])"; break;
    case DataType::kUInt8: element = "float((src[position >> 2] >> uint(8 * (position & 3))) & 255u)"; break;
    case DataType::kInt8: element = "float(int((src[position >> 2] >> uint(8 * (position & 3))) << 24u) >> 24)"; break;
    default: return absl::UnimplementedError(fmt::format("{} input is an activation", DataTypeName(from)));
  }
  auto out = OutputBhwc(ctx, 0);
  if (!out.ok()) return absl::UnimplementedError("unsupported rank");
  GeneratedShader g = StartShader(ctx, *out, {});
  AddRawInput(g, 0, "src", from == DataType::kInt32 ? "int" : "uint");
  if (ctx.output(0).type == DataType::kBool) element = fmt::format("({} != 0.0 ? 1.0 : 0.0)", element);
  g.code.body += glsl::ForEachLane(g.code.params, *out, fmt::format("    value[k] = {};\n", element),
                                   /*flat_position=*/true);
  return g;
}

}  // namespace

std::vector<OpDefinition> CastOps() {
  return {{.op = OpKind::kCast,
           .validate = Validate,
           .cpu_kernel = MakeKernel<CastKernel>,
           .gpu = {CastReadAsGivenShader, ElementwiseShader},
           .elementwise = ElementwiseUpdateOf,
           .raw_types = {DataType::kInt32, DataType::kUInt8, DataType::kInt8},
           .gpu_bools = true}};
}

}  // namespace mgd::ops
