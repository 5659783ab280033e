#include "tests/delegate/random_graph/describe.h"

#include <fmt/format.h>

#include <sstream>

#include "ops/concatenation/concatenation.h"
#include "ops/conv/conv.h"
#include "ops/cumsum/cumsum.h"
#include "ops/elementwise/elementwise.h"
#include "ops/gather/gather.h"
#include "ops/lstm/lstm.h"
#include "ops/one_hot/one_hot.h"
#include "ops/matmul/batch_matmul.h"
#include "ops/movement/movement.h"
#include "ops/pool/pool.h"
#include "ops/reduce/reduce.h"
#include "ops/resize/resize.h"
#include "ops/softmax/softmax.h"
#include "ops/space_depth/space_depth.h"
#include "ops/split/split.h"

namespace mgd::random_graph {
namespace {

// The fields an attributes struct has, by name.
template <typename A>
std::string Fields(const A& a) {
  std::string s;
  if constexpr (requires { a.padding; }) s += a.padding == Padding::kSame ? " SAME" : " VALID";
  if constexpr (requires { a.stride_h; }) s += fmt::format(" s{}x{}", a.stride_h, a.stride_w);
  if constexpr (requires { a.dilation_h; }) s += fmt::format(" d{}x{}", a.dilation_h, a.dilation_w);
  if constexpr (requires { a.filter_h; }) s += fmt::format(" f{}x{}", a.filter_h, a.filter_w);
  if constexpr (requires { a.depth_multiplier; }) s += fmt::format(" multiplier {}", a.depth_multiplier);
  if constexpr (requires { a.axis; }) s += fmt::format(" axis {}", a.axis);
  if constexpr (requires { a.block_size; }) s += fmt::format(" block {}", a.block_size);
  if constexpr (requires { a.alpha; }) s += fmt::format(" alpha {}", a.alpha);
  if constexpr (requires { a.beta; }) s += fmt::format(" beta {}", a.beta);
  if constexpr (requires { a.keep_dims; }) s += a.keep_dims ? " keep_dims" : "";
  if constexpr (requires { a.symmetric; }) s += a.symmetric ? " SYMMETRIC" : " REFLECT";
  if constexpr (requires { a.approximate; }) s += a.approximate ? " approximate" : "";
  if constexpr (requires { a.batch_dims; }) s += fmt::format(" batch_dims {}", a.batch_dims);
  if constexpr (requires { a.adj_y; }) s += fmt::format("{}{}", a.adj_x ? " adj_x" : "", a.adj_y ? " adj_y" : "");
  if constexpr (requires { a.exclusive; }) s += fmt::format("{}{}", a.exclusive ? " exclusive" : "", a.reverse ? " reverse" : "");
  if constexpr (requires { a.num_splits; }) s += fmt::format(" {} parts", a.num_splits);
  if constexpr (requires { a.shrink_axis_mask; }) {
    s += fmt::format(" masks begin {} end {} shrink {}", a.begin_mask, a.end_mask, a.shrink_axis_mask);
  }
  if constexpr (requires { a.align_corners; }) {
    s += a.align_corners ? " align_corners" : a.half_pixel_centers ? " half_pixel_centers" : "";
  }
  if constexpr (requires { a.cell_clip; }) {
    s += fmt::format("{}{}{}", a.time_major ? " time_major" : "", a.cell_clip > 0 ? fmt::format(" cell_clip {}", a.cell_clip) : "",
                     a.proj_clip > 0 ? fmt::format(" proj_clip {}", a.proj_clip) : "");
  }
  if constexpr (requires { a.activation; }) {
    if (a.activation != Activation::kNone) s += std::string(" ") + ActivationName(a.activation);
  }
  return s;
}

// The fields of whichever of `Types` the type-erased attributes hold.
template <typename... Types>
std::string FieldsOfAny(const OpAttributes& a) {
  std::string s;
  ((s += a.get_if<Types>() != nullptr ? Fields(*a.get_if<Types>()) : std::string()), ...);
  return s;
}

std::string ParameterText(const Attributes& attributes) {
  const auto* a = std::get_if<OpAttributes>(&attributes);
  if (a == nullptr) return "";
  return FieldsOfAny<ops::ConcatenationAttributes, ops::Conv2dAttributes, ops::DepthwiseConv2dAttributes,
                     ops::ElementwiseAttributes, ops::FullyConnectedAttributes, ops::LeakyReluAttributes,
                     ops::StridedSliceAttributes, ops::PoolAttributes, ops::ReducerAttributes, ops::ResizeAttributes,
                     ops::SoftmaxAttributes, ops::BlockSizeAttributes, ops::TransposeConvAttributes,
                     ops::PackAttributes, ops::SplitAttributes, ops::MirrorPadAttributes, ops::GatherAttributes, ops::GeluAttributes,
                     ops::BatchMatmulAttributes, ops::CumsumAttributes, ops::LstmAttributes,
                     ops::OneHotAttributes>(*a);
}

}  // namespace

std::string Describe(const Graph& graph) {
  std::ostringstream s;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Tensor& input = graph.tensors[static_cast<size_t>(graph.inputs[i])];
    s << "  input " << i << ": " << ShapeToString(input.shape)
      << (input.type == DataType::kFloat32 ? "" : std::string(" ") + DataTypeName(input.type)) << "\n";
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    s << "  " << NodeLabel(graph, static_cast<int>(n)) << ParameterText(node.attributes) << ":";
    for (int t : node.inputs) {
      if (t == kNoTensor) continue;
      const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
      s << " " << (tensor.is_constant ? "const" : "t" + std::to_string(t)) << ShapeToString(tensor.shape);
    }
    s << " ->";
    for (int t : node.outputs) s << " t" << t << ShapeToString(graph.tensors[static_cast<size_t>(t)].shape);
    s << "\n";
  }
  s << "  outputs:";
  for (int t : graph.outputs) s << " t" << t;
  return s.str();
}

}  // namespace mgd::random_graph
