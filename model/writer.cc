#include "model/writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "model/status_macros.h"
#include "model/tflite_enums.h"
#include "ops/registry.h"
#include "ops/tflite_io.h"

namespace mgd {
namespace {

namespace fb = flatbuffers;

tflite::TensorType ToTfl(DataType type) {
  switch (type) {
    case DataType::kFloat32: return tflite::TensorType_FLOAT32;
    case DataType::kFloat16: return tflite::TensorType_FLOAT16;
    case DataType::kInt32: return tflite::TensorType_INT32;
    case DataType::kInt64: return tflite::TensorType_INT64;
    case DataType::kInt8: return tflite::TensorType_INT8;
    case DataType::kUInt8: return tflite::TensorType_UINT8;
    case DataType::kBool: return tflite::TensorType_BOOL;
  }
  return tflite::TensorType_FLOAT32;
}

class Writer {
 public:
  explicit Writer(const StructureOptions* structure = nullptr) : structure_(structure) {}

  absl::StatusOr<std::vector<uint8_t>> Write(const Graph& graph) {
    // Buffer 0 is the empty sentinel every TFLite model starts with.
    buffers_.push_back(tflite::CreateBuffer(b_));
    std::vector<fb::Offset<tflite::Tensor>> tensors;
    for (const Tensor& t : graph.tensors) tensors.push_back(WriteTensor(t));

    std::vector<fb::Offset<tflite::Operator>> ops;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      auto op = WriteOperator(graph.nodes[n]);
      if (!op.ok()) return absl::InvalidArgumentError(fmt::format("{}: {}", NodeLabel(graph, static_cast<int>(n)), op.status().message()));
      ops.push_back(*op);
    }
    auto subgraph = tflite::CreateSubGraph(b_, b_.CreateVector(tensors), b_.CreateVector(graph.inputs),
                                           b_.CreateVector(graph.outputs), b_.CreateVector(ops),
                                           b_.CreateString("main"));
    std::vector<fb::Offset<tflite::Metadata>> metadata;
    for (const auto& [name, value] : graph.metadata) {
      if (structure_ && std::count(structure_->skip_metadata.begin(), structure_->skip_metadata.end(), name)) continue;
      const auto index = static_cast<uint32_t>(buffers_.size());
      buffers_.push_back(tflite::CreateBuffer(
          b_, b_.CreateVector(reinterpret_cast<const uint8_t*>(value.data()), value.size())));
      metadata.push_back(tflite::CreateMetadata(b_, b_.CreateString(name), index));
    }
    std::vector<fb::Offset<tflite::SubGraph>> subgraphs{subgraph};
    auto model = tflite::CreateModel(b_, 3, b_.CreateVector(codes_), b_.CreateVector(subgraphs),
                                     b_.CreateString(graph.description), b_.CreateVector(buffers_),
                                     0, b_.CreateVector(metadata));
    tflite::FinishModelBuffer(b_, model);
    return std::vector<uint8_t>(b_.GetBufferPointer(), b_.GetBufferPointer() + b_.GetSize());
  }

 private:
  fb::Offset<tflite::Tensor> WriteTensor(const Tensor& t) {
    uint32_t buffer = 0;
    if (t.is_constant) {
      const size_t bytes = structure_ ? 0 : t.data.size();
      b_.ForceVectorAlignment(bytes, 1, 16);
      buffer = static_cast<uint32_t>(buffers_.size());
      buffers_.push_back(tflite::CreateBuffer(b_, b_.CreateVector(t.data.data(), bytes)));
    }
    fb::Offset<tflite::QuantizationParameters> quant = 0;
    if (t.quantization) {
      quant = tflite::CreateQuantizationParameters(b_, 0, 0, b_.CreateVector(t.quantization->scale),
                                                   b_.CreateVector(t.quantization->zero_point),
                                                   tflite::QuantizationDetails_NONE, 0,
                                                   t.quantization->quantized_dimension);
    }
    fb::Offset<tflite::SparsityParameters> sparsity = 0;
    if (t.sparsity) {
      std::vector<fb::Offset<tflite::DimensionMetadata>> dims;
      for (const SparseDimension& d : t.sparsity->dimensions) {
        fb::Offset<void> segments = 0, indices = 0;
        auto type = tflite::SparseIndexVector_NONE;
        if (d.is_sparse) {
          segments = tflite::CreateInt32Vector(b_, b_.CreateVector(d.array_segments)).Union();
          indices = tflite::CreateInt32Vector(b_, b_.CreateVector(d.array_indices)).Union();
          type = tflite::SparseIndexVector_Int32Vector;
        }
        dims.push_back(tflite::CreateDimensionMetadata(
            b_, d.is_sparse ? tflite::DimensionType_SPARSE_CSR : tflite::DimensionType_DENSE,
            d.dense_size, type, segments, type, indices));
      }
      sparsity = tflite::CreateSparsityParameters(b_, b_.CreateVector(t.sparsity->traversal_order),
                                                  b_.CreateVector(t.sparsity->block_map),
                                                  b_.CreateVector(dims));
    }
    return tflite::CreateTensor(b_, b_.CreateVector(t.shape), ToTfl(t.type), buffer,
                                b_.CreateString(t.name), quant, t.is_variable, sparsity);
  }

  uint32_t OpcodeIndex(OpKind op, int32_t version, const std::string& custom_name) {
    const auto key = std::make_tuple(static_cast<int32_t>(op), version, custom_name);
    auto it = code_index_.find(key);
    if (it != code_index_.end()) return it->second;
    const int32_t code = static_cast<int32_t>(op);
    const auto deprecated = static_cast<int8_t>(std::min<int32_t>(code, 127));
    codes_.push_back(tflite::CreateOperatorCode(
        b_, deprecated, custom_name.empty() ? 0 : b_.CreateString(custom_name), version,
        static_cast<tflite::BuiltinOperator>(code)));
    const auto index = static_cast<uint32_t>(codes_.size() - 1);
    code_index_[key] = index;
    return index;
  }

  absl::StatusOr<fb::Offset<tflite::Operator>> WriteOperator(const Node& node) {
    std::string custom_name;
    fb::Offset<fb::Vector<uint8_t>> custom_options = 0;
    auto options_type = tflite::BuiltinOptions_NONE;
    fb::Offset<void> options = 0;
    if (const ops::OpDefinition* definition = ops::FindBuiltin(node.op)) {
      if (definition->encode != nullptr) {
        ops::EncodeContext file{b_};
        definition->encode(node, file);
        options_type = file.type;
        options = file.options;
      }
    } else if (node.op == OpKind::kCustom) {
      const auto& c = std::get<CustomAttributes>(node.attributes);
      custom_name = c.name;
      custom_options = b_.CreateVector(c.options);
    }
    if (node.op == OpKind::kCustom && custom_name.empty()) return absl::InvalidArgumentError("custom op without a name");
    const uint32_t opcode = OpcodeIndex(node.op, node.version, custom_name);
    return tflite::CreateOperator(b_, opcode, b_.CreateVector(node.inputs), b_.CreateVector(node.outputs),
                                  options_type, options, custom_options);
  }

  const StructureOptions* structure_ = nullptr;  // set: WriteModelStructure
  fb::FlatBufferBuilder b_{1 << 16};
  std::vector<fb::Offset<tflite::Buffer>> buffers_;
  std::vector<fb::Offset<tflite::OperatorCode>> codes_;
  std::map<std::tuple<int32_t, int32_t, std::string>, uint32_t> code_index_;
};

}  // namespace

absl::StatusOr<std::vector<uint8_t>> WriteModel(const Graph& graph) { return Writer().Write(graph); }

absl::StatusOr<std::vector<uint8_t>> WriteModelStructure(const Graph& graph, const StructureOptions& options) {
  return Writer(&options).Write(graph);
}

absl::Status WriteModelFile(const Graph& graph, const std::string& path) {
  auto bytes = WriteModel(graph);
  if (!bytes.ok()) return bytes.status();
  return WriteFileAtomically(path, bytes->data(), bytes->size());
}

}  // namespace mgd
