#include "ops/cumsum/cumsum.h"

#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/constants.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::CumsumOptions>();
  if (!options.ok()) return options.status();
  CumsumAttributes a;
  if (const tflite::CumsumOptions* o = *options) a = {o->exclusive(), o->reverse()};
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<CumsumAttributes>(node.attributes);
  file.Set(tflite::CreateCumsumOptions(file.builder, a.exclusive, a.reverse));
}

absl::Status Validate(const NodeChecker& c) { return c.FloatWithConstantIndices(); }

absl::StatusOr<int> AxisOf(const Shape& shape, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(fmt::format("axis {} is out of range for input {}", axis, ShapeToString(shape)));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

class CumsumKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    if (ctx.in(1).elements() != 1) return ctx.Error(fmt::format("axis has {} elements, expected 1", ctx.in(1).elements()));
    auto axis = AxisOf(ctx.in(0).shape, IndexValue(ctx.in(1), 0));
    if (!axis.ok()) return ctx.Error(std::string(axis.status().message()));
    axis_ = *axis;
    return ctx.ExpectOutputShape(0, ctx.in(0).shape);
  }

  // Along the axis in the order TFLite sums: forwards, or backwards when
  // reversed; a float running sum, as TFLite's.
  absl::Status Invoke(KernelContext& ctx) override {
    const auto& a = AttributesOf<CumsumAttributes>(ctx.node->attributes);
    const Shape& shape = ctx.in(0).shape;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis_) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int n = shape[static_cast<size_t>(axis_)];
    const float* x = ctx.in(0).as<float>();
    float* y = ctx.out(0).as<float>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        float sum = 0.0f;
        for (int step = 0; step < n; ++step) {
          const int j = a.reverse ? n - 1 - step : step;
          const int64_t at = (o * n + j) * inner + i;
          if (a.exclusive) {
            y[at] = sum;
            sum += x[at];
          } else {
            sum += x[at];
            y[at] = sum;
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int axis_ = 0;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// Each output sums its part of the axis in the CPU's order. Along channels
// lane by lane; along batch, height or width whole vec4s.
absl::StatusOr<GeneratedShader> CumsumShader(const NodeContext& ctx) {
  const auto& a = AttributesOf<CumsumAttributes>(ctx.node->attributes);
  const std::vector<int64_t> axis_value = ConstantInts(ctx.input(1));
  if (axis_value.size() != 1) return absl::UnimplementedError("axis is not a scalar");
  auto axis = AxisOf(ctx.input(0).shape, axis_value[0]);
  if (!axis.ok()) return axis.status();
  auto in = InputBhwc(ctx, 0);
  auto out = OutputBhwc(ctx, 0);
  if (!in.ok() || !out.ok()) return absl::UnimplementedError("unsupported rank");
  const int d = BhwcAxis(*axis, static_cast<int>(ctx.input(0).shape.size()));
  GeneratedShader g = StartShader(ctx, *out, {0});
  ShaderParams& params = g.code.params;
  const std::string acc = glsl::AccumulatorPrecision(ctx);
  // The positions j along the axis that position p sums, in order.
  const char* coordinate = d == 0 ? "b" : d == 1 ? "y" : d == 2 ? "x" : "c";
  const int extent = d == 0 ? in->batch : d == 1 ? in->height : d == 2 ? in->width : in->channels;
  const std::string n = params.Int("axis_extent", extent);
  const std::string first = a.reverse ? fmt::format("{} - 1", n) : "0";
  const std::string last = a.reverse ? fmt::format("{} {}", coordinate, a.exclusive ? "+ 1" : "")
                                     : fmt::format("{} {}", coordinate, a.exclusive ? "- 1" : "");
  const std::string loop = fmt::format("MGD_LOOP for (int step = 0; step < {count}; ++step) {{\n",
                                       fmt::arg("count", a.reverse ? fmt::format("{} - ({})", n, last)
                                                                   : fmt::format("({}) + 1", last)));
  const std::string j = a.reverse ? fmt::format("{} - step", first) : "step";
  if (d == 3) {
    g.code.body += glsl::ForEachLane(
        params, *out,
        fmt::format("    {acc}float sum = 0.0;\n"
                    "    {loop}"
                    "      int j = {j};\n"
                    "      sum += {read}[j % 4];\n"
                    "    }}\n"
                    "    value[k] = sum;\n",
                    fmt::arg("acc", acc), fmt::arg("loop", loop), fmt::arg("j", j),
                    fmt::arg("read", glsl::Read(params, "in0", *in, "b", "j / 4", "y", "x"))));
  } else {
    std::string c[4] = {"b", "s", "y", "x"};  // index order of glsl::Index
    c[d == 0 ? 0 : d == 1 ? 2 : 3] = "j";
    g.code.body += fmt::format(
        "  {acc}vec4 sum = vec4(0.0);\n"
        "  {loop}"
        "    int j = {j};\n"
        "    sum += {read};\n"
        "  }}\n"
        "  vec4 value = vec4(sum);\n",
        fmt::arg("acc", acc), fmt::arg("loop", loop), fmt::arg("j", j),
        fmt::arg("read", glsl::Read(params, "in0", *in, c[0], c[1], c[2], c[3])));
  }
  return g;
}

}  // namespace

std::vector<OpDefinition> CumsumOps() {
  return {{.op = OpKind::kCumsum,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<CumsumKernel>,
           .gpu = {CumsumShader}}};
}

}  // namespace mgd::ops
