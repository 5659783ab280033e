#include "ops/space_depth/space_depth.h"

#include <fmt/format.h>

#include <cstring>

#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/gather.h"

namespace mgd::ops {
namespace {

// Both ops' options tables hold only block_size; a model without one gets
// 0, which validation refuses, as TFLite does.
template <typename Options>
absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<Options>();
  if (!options.ok()) return options.status();
  return BlockSizeAttributes{*options ? (*options)->block_size() : 0};
}

void EncodeSpaceToDepth(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateSpaceToDepthOptions(file.builder, AttributesOf<BlockSizeAttributes>(node.attributes).block_size));
}

void EncodeDepthToSpace(const Node& node, EncodeContext& file) {
  file.Set(tflite::CreateDepthToSpaceOptions(file.builder, AttributesOf<BlockSizeAttributes>(node.attributes).block_size));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(1, 1, 1));
  MGD_RETURN_IF_ERROR(c.Positive("block_size", AttributesOf<BlockSizeAttributes>(c.node().attributes).block_size));
  MGD_RETURN_IF_ERROR(c.InputType(0, {DataType::kFloat32}));
  MGD_RETURN_IF_ERROR(c.InputRank(0, 4));
  return c.OutputType(0, DataType::kFloat32);
}

// The depth-side tensor [N, H, W, bs, bs, C] and the space-side tensor
// [N, H, bs, W, bs, C] hold the same elements.
class SpaceDepthKernel : public Kernel {
 public:
  explicit SpaceDepthKernel(bool to_depth) : to_depth_(to_depth) {}

  absl::Status Prepare(KernelContext& ctx) override {
    bs_ = AttributesOf<BlockSizeAttributes>(ctx.node->attributes).block_size;
    const TensorRef& x = ctx.in(0);
    if (to_depth_) {
      if (x.dim(1) % bs_ != 0 || x.dim(2) % bs_ != 0) {
        return ctx.Error(fmt::format("spatial size {}x{} is not a multiple of block_size {}", x.dim(1), x.dim(2), bs_));
      }
      return ctx.ExpectOutputShape(0, {x.dim(0), x.dim(1) / bs_, x.dim(2) / bs_, x.dim(3) * bs_ * bs_});
    }
    if (x.dim(3) % (bs_ * bs_) != 0) {
      return ctx.Error(fmt::format("{} channels is not a multiple of block_size^2 = {}", x.dim(3), bs_ * bs_));
    }
    return ctx.ExpectOutputShape(0, {x.dim(0), x.dim(1) * bs_, x.dim(2) * bs_, x.dim(3) / (bs_ * bs_)});
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& depth_side = to_depth_ ? ctx.out(0) : ctx.in(0);
    const int n = depth_side.dim(0), h = depth_side.dim(1), w = depth_side.dim(2);
    const int c = depth_side.dim(3) / (bs_ * bs_);
    const float* src = ctx.in(0).as<float>();
    float* dst = ctx.out(0).as<float>();
    for (int b = 0; b < n; ++b)
      for (int y = 0; y < h; ++y)
        for (int dy = 0; dy < bs_; ++dy)
          for (int x = 0; x < w; ++x)
            for (int dx = 0; dx < bs_; ++dx) {
              const int64_t space = ((((static_cast<int64_t>(b) * h + y) * bs_ + dy) * w + x) * bs_ + dx) * c;
              const int64_t depth = ((((static_cast<int64_t>(b) * h + y) * w + x) * bs_ + dy) * bs_ + dx) * c;
              if (to_depth_) std::memcpy(dst + depth, src + space, static_cast<size_t>(c) * sizeof(float));
              else std::memcpy(dst + space, src + depth, static_cast<size_t>(c) * sizeof(float));
            }
    return absl::OkStatus();
  }

 private:
  bool to_depth_;
  int bs_ = 1;
};

// On the GPU, a gather over the same correspondence.
absl::StatusOr<shaders::GeneratedShader> SpaceDepthShader(const shaders::NodeContext& ctx) {
  const int64_t bs = AttributesOf<BlockSizeAttributes>(ctx.node->attributes).block_size;
  const bool to_depth = ctx.node->op == OpKind::kSpaceToDepth;
  const Shape& depth_side = to_depth ? ctx.output(0).shape : ctx.input(0).shape;
  if (depth_side.size() != 4) return absl::UnimplementedError("unsupported rank");
  const int64_t n = depth_side[0], h = depth_side[1], w = depth_side[2], c = depth_side[3] / (bs * bs);
  shaders::StridedGather g;
  if (to_depth) {  // read the space side in depth-side order
    const std::vector<int64_t> st = shaders::RowMajorStrides({n, h, bs, w, bs, c});
    g.full = {n, h, w, bs, bs, c};
    g.strides = {st[0], st[1], st[3], st[2], st[4], st[5]};
  } else {
    const std::vector<int64_t> st = shaders::RowMajorStrides({n, h, w, bs, bs, c});
    g.full = {n, h, bs, w, bs, c};
    g.strides = {st[0], st[1], st[3], st[2], st[4], st[5]};
  }
  return shaders::Gather(ctx, g);
}

}  // namespace

std::vector<OpDefinition> SpaceDepthOps() {
  return {
      {.op = OpKind::kSpaceToDepth,
       .decode = Decode<tflite::SpaceToDepthOptions>,
       .encode = EncodeSpaceToDepth,
       .validate = Validate,
       .cpu_kernel = MakeKernel<SpaceDepthKernel, true>,
       .gpu = {SpaceDepthShader}},
      {.op = OpKind::kDepthToSpace,
       .decode = Decode<tflite::DepthToSpaceOptions>,
       .encode = EncodeDepthToSpace,
       .validate = Validate,
       .cpu_kernel = MakeKernel<SpaceDepthKernel, false>,
       .gpu = {SpaceDepthShader}},
  };
}

}  // namespace mgd::ops
