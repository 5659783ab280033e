#include "ops/matmul/batch_matmul.h"

#include <fmt/format.h>

#include "interpreter/kernels/kernel_util.h"
#include "model/status_macros.h"
#include "ops/tflite_io.h"
#include "shaders/ops.h"

namespace mgd::ops {
namespace {

absl::StatusOr<Attributes> Decode(const DecodeContext& file) {
  auto options = file.OptionsAs<tflite::BatchMatMulOptions>();
  if (!options.ok()) return options.status();
  BatchMatmulAttributes a;
  if (const tflite::BatchMatMulOptions* o = *options) a = {o->adj_x(), o->adj_y()};
  return a;
}

void Encode(const Node& node, EncodeContext& file) {
  const auto& a = AttributesOf<BatchMatmulAttributes>(node.attributes);
  file.Set(tflite::CreateBatchMatMulOptions(file.builder, a.adj_x, a.adj_y));
}

absl::Status Validate(const NodeChecker& c) {
  MGD_RETURN_IF_ERROR(c.Arity(2, 2, 1));
  for (size_t i = 0; i < 2; ++i) {
    MGD_RETURN_IF_ERROR(c.InputType(i, {DataType::kFloat32}));
    if (c.In(i).shape.size() < 2) {
      return c.Fail(fmt::format("input {} has shape {}, expected rank 2 or more", i, ShapeToString(c.In(i).shape)));
    }
  }
  return c.OutputType(0, DataType::kFloat32);
}

// The product's sizes and the output shape, with errors naming what does
// not fit.
struct Product {
  int m = 0, k = 0, n = 0;
  Shape out;
};

absl::StatusOr<Product> ProductOf(const Shape& a, const Shape& b, const BatchMatmulAttributes& attr) {
  const size_t ra = a.size(), rb = b.size();
  Product p;
  p.m = attr.adj_x ? a[ra - 1] : a[ra - 2];
  p.k = attr.adj_x ? a[ra - 2] : a[ra - 1];
  const int kb = attr.adj_y ? b[rb - 1] : b[rb - 2];
  p.n = attr.adj_y ? b[rb - 2] : b[rb - 1];
  if (p.k != kb) {
    return absl::InvalidArgumentError(fmt::format("inputs {} and {} do not multiply{}: {} columns against {} rows",
                                                  ShapeToString(a), ShapeToString(b),
                                                  attr.adj_x || attr.adj_y ? " (after adj_x/adj_y)" : "", p.k, kb));
  }
  const size_t rank = std::max(ra, rb);
  for (size_t i = 0; i + 2 < rank; ++i) {
    const int da = i + ra < rank ? 1 : a[i + ra - rank];
    const int db = i + rb < rank ? 1 : b[i + rb - rank];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          fmt::format("batch dimensions of {} and {} do not broadcast", ShapeToString(a), ShapeToString(b)));
    }
    p.out.push_back(da == 1 ? db : da);
  }
  p.out.push_back(p.m);
  p.out.push_back(p.n);
  return p;
}

// The flat offset of batch `index` (over the output's batch dimensions) in
// an operand of `shape`, broadcast where its dimension is 1.
int64_t BatchOffset(const Shape& shape, const Shape& out, int64_t index) {
  const size_t batch_dims = out.size() - 2, own = shape.size() - 2;
  int64_t offset = 0, stride = static_cast<int64_t>(shape[own]) * shape[own + 1];
  for (size_t i = batch_dims; i-- > 0;) {
    const int64_t coordinate = index % out[i];
    index /= out[i];
    if (i + own < batch_dims) continue;  // a dimension the operand lacks
    const int d = shape[i + own - batch_dims];
    if (d != 1) offset += coordinate * stride;
    stride *= d;
  }
  return offset;
}

class BatchMatmulKernel : public Kernel {
 public:
  absl::Status Prepare(KernelContext& ctx) override {
    attr_ = AttributesOf<BatchMatmulAttributes>(ctx.node->attributes);
    auto p = ProductOf(ctx.in(0).shape, ctx.in(1).shape, attr_);
    if (!p.ok()) return ctx.Error(std::string(p.status().message()));
    product_ = *p;
    return ctx.ExpectOutputShape(0, product_.out);
  }

  absl::Status Invoke(KernelContext& ctx) override {
    const TensorRef& a = ctx.in(0);
    const TensorRef& b = ctx.in(1);
    const int m = product_.m, k = product_.k, n = product_.n;
    const int64_t batches = NumElements(product_.out) / (static_cast<int64_t>(m) * n);
    float* y = ctx.out(0).as<float>();
    for (int64_t batch = 0; batch < batches; ++batch) {
      const float* ad = a.as<float>() + BatchOffset(a.shape, product_.out, batch);
      const float* bd = b.as<float>() + BatchOffset(b.shape, product_.out, batch);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double sum = 0.0;
          for (int q = 0; q < k; ++q) {
            const float av = attr_.adj_x ? ad[q * m + i] : ad[i * k + q];
            const float bv = attr_.adj_y ? bd[j * k + q] : bd[q * n + j];
            sum += static_cast<double>(av) * bv;
          }
          *y++ = static_cast<float>(sum);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  BatchMatmulAttributes attr_;
  Product product_;
};

using namespace shaders;  // NOLINT(google-build-using-namespace): the generator's vocabulary

// Where an operand's element (row, column) of the output's batch lies in
// PHWC4: its last dimension is the channels; the one before it is the
// width (rank 3, 4) or the batch (rank 2); its batch dimensions line up
// with the output's last ones, a dimension of 1 read at 0.
struct OperandPlaces {
  std::string b = "0", y = "0", x = "0";
};

OperandPlaces PlacesOf(const Shape& shape, size_t out_rank, const std::string& row) {
  // The output's batch dimensions as PHWC4 coordinates: rank 4 has b, y;
  // rank 3 has b.
  const std::vector<std::string> out_batch = out_rank == 4 ? std::vector<std::string>{"b", "y"}
                                             : out_rank == 3 ? std::vector<std::string>{"b"}
                                                             : std::vector<std::string>{};
  OperandPlaces p;
  const size_t rank = shape.size();
  if (rank == 2) {
    p.b = row;
    return p;
  }
  p.x = row;
  std::string* own[2] = {&p.b, &p.y};
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (shape[i] != 1) *own[i] = out_batch[i + out_rank - rank];
  }
  return p;
}

// One output vec4 (four columns of one row) per invocation; the sum runs
// over K, in the CPU's order. Without adj_x the row of A is read four
// values of K at a time.
absl::StatusOr<GeneratedShader> BatchMatmulShader(const NodeContext& ctx) {
  const auto& attr = AttributesOf<BatchMatmulAttributes>(ctx.node->attributes);
  const Shape& as = ctx.input(0).shape;
  const Shape& bs = ctx.input(1).shape;
  auto p = ProductOf(as, bs, attr);
  if (!p.ok()) return p.status();
  auto a = InputBhwc(ctx, 0);
  auto b = InputBhwc(ctx, 1);
  auto out = OutputBhwc(ctx, 0);
  if (!a.ok() || !b.ok() || !out.ok()) return absl::UnimplementedError("BATCH_MATMUL of rank above 4");
  GeneratedShader g = StartShader(ctx, *out, {0, 1});
  ShaderParams& params = g.code.params;
  const size_t rank = p->out.size();
  const std::string row = rank == 2 ? "b" : "x";
  const std::string acc = glsl::AccumulatorPrecision(ctx);
  // B(q, columns 4s..4s+3) as a vec4, for q = kq.
  std::string b_read;
  if (attr.adj_y) {  // B is [N, K]: element (q, n) at row n, channel q
    std::string lanes;
    for (int l = 0; l < 4; ++l) {
      const OperandPlaces pb = PlacesOf(bs, rank, fmt::format("min(s * 4 + {}, {})", l, params.Int("n_last", p->n - 1)));
      lanes += fmt::format("{}{}[kq % 4]", l ? ", " : "", glsl::Read(params, "in1", *b, pb.b, "kq / 4", pb.y, pb.x));
    }
    b_read = fmt::format("vec4({})", lanes);
  } else {
    const OperandPlaces pb = PlacesOf(bs, rank, "kq");
    b_read = glsl::Read(params, "in1", *b, pb.b, "s", pb.y, pb.x);
  }
  const std::string k = params.Int("k", p->k);
  g.code.body += fmt::format("  {}vec4 sum = vec4(0.0);\n", acc);
  if (attr.adj_x) {  // A is [K, M]: element (m, q) at row q, channel m
    const OperandPlaces pa = PlacesOf(as, rank, "kq");
    g.code.body += fmt::format(
        "  MGD_LOOP for (int kq = 0; kq < {}; ++kq) {{\n"
        "    sum += {}[{} % 4] * {};\n"
        "  }}\n",
        k, glsl::Read(params, "in0", *a, pa.b, fmt::format("{} / 4", row), pa.y, pa.x), row, b_read);
  } else {  // A's row four values of K at a time
    const OperandPlaces pa = PlacesOf(as, rank, row);
    g.code.body += fmt::format(
        "  MGD_LOOP for (int ks = 0; ks < {ks}; ++ks) {{\n"
        "    vec4 a = {a};\n"
        "    MGD_LOOP for (int j = 0; j < 4; ++j) {{\n"
        "      int kq = ks * 4 + j;\n"
        "      if (kq >= {k}) break;\n"
        "      sum += a[j] * {b};\n"
        "    }}\n"
        "  }}\n",
        fmt::arg("ks", params.Int("k_slices", (p->k + 3) / 4)), fmt::arg("k", k),
        fmt::arg("a", glsl::Read(params, "in0", *a, pa.b, "ks", pa.y, pa.x)), fmt::arg("b", b_read));
  }
  g.code.body += "  vec4 value = vec4(sum);\n";
  return g;
}

// A multiply and an add per output element and step of the shared
// dimension K.
double Flops(const Graph& graph, const Node& node) {
  const Shape& a = graph.tensors[static_cast<size_t>(node.inputs[0])].shape;
  const Shape& out = graph.tensors[static_cast<size_t>(node.outputs[0])].shape;
  if (a.size() < 2) return 0;
  const bool adj_x = AttributesOf<BatchMatmulAttributes>(node.attributes).adj_x;
  const int64_t k = a[a.size() - (adj_x ? 2 : 1)];
  return 2.0 * static_cast<double>(NumElements(out)) * static_cast<double>(k);
}

}  // namespace

std::vector<OpDefinition> BatchMatmulOps() {
  return {{.op = OpKind::kBatchMatmul,
           .decode = Decode,
           .encode = Encode,
           .validate = Validate,
           .cpu_kernel = MakeKernel<BatchMatmulKernel>,
           .flops = Flops,
           .gpu = {BatchMatmulShader}}};
}

}  // namespace mgd::ops
