#include "ops/dequantize/dequantize.h"

#include <fmt/format.h>

#include <cstring>

#include "interpreter/kernels/kernel_util.h"
#include "model/fp16.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"

namespace mgd::ops {
namespace {

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat16, DataType::kInt8, DataType::kUInt8}));
  if (c.In(0).type != DataType::kFloat16 && !c.In(0).quantization.has_value()) {
    return c.Fail("input 0 is quantized but has no quantization parameters");
  }
  return c.OutputType(0, DataType::kFloat32);
}

// DequantizeOptions is an empty table; it is written for TFLite's sake.
void Encode(const Node&, EncodeContext& file) { file.Set(tflite::CreateDequantizeOptions(file.builder)); }

class DequantizeKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    MGD_RETURN_IF_ERROR(ctx.ExpectOutputShape(0, x.shape));
    if (x.type == DataType::kFloat16) return absl::OkStatus();
    const Tensor& t = ctx.graph->tensors[static_cast<size_t>(x.index)];
    const Quantization& q = *t.quantization;
    axis_ = q.quantized_dimension;
    if (q.scale.size() > 1) {
      if (axis_ < 0 || axis_ >= x.rank() || static_cast<int>(q.scale.size()) != x.dim(axis_)) {
        return ctx.Error(fmt::format("{} per-channel scales do not match dimension {} of {}", q.scale.size(), axis_,
                                     ShapeToString(x.shape)));
      }
    }
    if (!q.zero_point.empty() && q.zero_point.size() != q.scale.size()) {
      return ctx.Error("zero_point and scale have different lengths");
    }
    scale_ = q.scale;
    zero_point_ = q.zero_point;
    return absl::OkStatus();
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& x = ctx.in(0);
    float* y = ctx.out(0).as<float>();
    const int64_t n = x.elements();
    if (x.type == DataType::kFloat16) {
      const uint8_t* src = x.data;
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        y[i] = HalfToFloat(h);
      }
      return absl::OkStatus();
    }
    int64_t inner = 1;
    for (int d = axis_ + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const int64_t channels = scale_.size() > 1 ? static_cast<int64_t>(scale_.size()) : 1;
    for (int64_t i = 0; i < n; ++i) {
      const size_t ch = channels > 1 ? static_cast<size_t>((i / inner) % channels) : 0;
      const int64_t q = x.type == DataType::kInt8 ? x.as<int8_t>()[i] : x.as<uint8_t>()[i];
      const int64_t zp = zero_point_.empty() ? 0 : zero_point_[ch];
      y[i] = static_cast<float>(q - zp) * scale_[ch];
    }
    return absl::OkStatus();
  }

 private:
  int axis_ = 0;
  std::vector<float> scale_;
  std::vector<int64_t> zero_point_;
};

}  // namespace

std::vector<OpDefinition> DequantizeOps() {
  return {{.op = OpKind::kDequantize,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<DequantizeKernel>,
           .gpu = {}}};  // folded at load; a runtime input stays on the CPU
}

}  // namespace mgd::ops
