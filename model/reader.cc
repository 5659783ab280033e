#include "model/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "base/parallel.h"
#include "model/status_macros.h"
#include "model/validator.h"
#include "ops/registry.h"
#include "ops/tflite_io.h"

namespace mgd {
namespace {

// Models under a few MiB are converted faster on one thread than threads
// start.
constexpr size_t kParallelBytes = size_t{4} << 20;

using absl::InvalidArgumentError;

// Converts one flatbuffer model into the IR. The buffer has passed the
// Verifier, so every offset is in range; what remains are semantic checks.
class Converter {
 public:
  // `owner`, when given, keeps `data` alive: constants then point into it
  // instead of being copied out.
  Converter(const uint8_t* data, size_t size, std::string_view source, std::shared_ptr<const void> owner)
      : data_(data), size_(size), source_(source), owner_(std::move(owner)) {}

  absl::StatusOr<Graph> Convert(const tflite::Model& model) {
    if (model.version() != 3) {
      return Error(fmt::format("schema version {} is not supported (expected 3)", model.version()));
    }
    if (model.subgraphs() == nullptr || model.subgraphs()->size() == 0) {
      return Error("the model has no subgraphs");
    }
    Graph graph;
    if (model.description() != nullptr) graph.description = model.description()->str();
    const auto* buffers = model.buffers();
    const size_t num_buffers = buffers != nullptr ? buffers->size() : 0;

    if (model.metadata() != nullptr) {
      for (const tflite::Metadata* meta : *model.metadata()) {
        if (meta == nullptr || meta->name() == nullptr) continue;
        if (meta->buffer() >= num_buffers) {
          return Error(fmt::format("metadata '{}': buffer {} out of range ({} buffers)",
                                   meta->name()->str(), meta->buffer(), num_buffers));
        }
        auto bytes = BufferBytes(*buffers->Get(meta->buffer()), meta->buffer());
        if (!bytes.ok()) return bytes.status();
        graph.metadata[meta->name()->str()] = std::string(bytes->begin(), bytes->end());
      }
    }

    const tflite::SubGraph& subgraph = *model.subgraphs()->Get(0);
    if (subgraph.tensors() != nullptr) {
      const auto& tensors = *subgraph.tensors();
      // Copying the constants out of the file into fresh memory is most of
      // reading a large model: tensors convert on all cores then. The first
      // error in tensor order is the one reported, as in one pass.
      std::vector<absl::StatusOr<Tensor>> converted(tensors.size(), absl::UnknownError("not converted"));
      auto convert = [&](size_t i) {
        converted[i] = ConvertTensor(*tensors.Get(static_cast<flatbuffers::uoffset_t>(i)), static_cast<int>(i), buffers);
      };
      ParallelFor(converted.size(), convert, size_ < kParallelBytes ? 1 : SIZE_MAX);
      graph.tensors.reserve(tensors.size());
      for (absl::StatusOr<Tensor>& tensor : converted) {
        if (!tensor.ok()) return tensor.status();
        graph.tensors.push_back(std::move(*tensor));
      }
    }
    graph.inputs = ToVector(subgraph.inputs());
    graph.outputs = ToVector(subgraph.outputs());

    if (subgraph.operators() != nullptr) {
      const auto& ops = *subgraph.operators();
      graph.nodes.reserve(ops.size());
      for (flatbuffers::uoffset_t i = 0; i < ops.size(); ++i) {
        auto node = ConvertOperator(*ops.Get(i), static_cast<int>(i), model);
        if (!node.ok()) return node.status();
        graph.nodes.push_back(std::move(*node));
      }
    }
    return graph;
  }

 private:
  absl::Status Error(const std::string& message) const {
    return InvalidArgumentError(fmt::format("{}: {}", source_, message));
  }

  static std::vector<int> ToVector(const flatbuffers::Vector<int32_t>* v) {
    if (v == nullptr) return {};
    return std::vector<int>(v->begin(), v->end());
  }

  // A buffer's bytes: inline data, or (models over 2 GB) a range of the file.
  absl::StatusOr<ConstantBytes> BufferBytes(const tflite::Buffer& buffer, uint32_t index) const {
    if (buffer.data() != nullptr) return FileRange(buffer.data()->data(), buffer.data()->size());
    if (buffer.offset() > 1) {
      if (buffer.offset() > size_ || buffer.size() > size_ - buffer.offset()) {
        return Error(fmt::format("buffer {}: external data [{}, +{}) lies outside the {}-byte file",
                                 index, buffer.offset(), buffer.size(), size_));
      }
      return FileRange(data_ + buffer.offset(), static_cast<size_t>(buffer.size()));
    }
    return ConstantBytes{};
  }

  // A range of the file: shared with it when it is kept and the range is
  // aligned for any element type (TFLite aligns buffers to 16), else copied.
  ConstantBytes FileRange(const uint8_t* begin, size_t size) const {
    if (owner_ != nullptr && reinterpret_cast<uintptr_t>(begin) % 16 == 0) return ConstantBytes(owner_, begin, size);
    return std::vector<uint8_t>(begin, begin + size);
  }

  absl::StatusOr<DataType> ConvertType(tflite::TensorType type, int index,
                                       const std::string& name) const {
    switch (type) {
      case tflite::TensorType_FLOAT32: return DataType::kFloat32;
      case tflite::TensorType_FLOAT16: return DataType::kFloat16;
      case tflite::TensorType_INT32: return DataType::kInt32;
      case tflite::TensorType_INT64: return DataType::kInt64;
      case tflite::TensorType_INT8: return DataType::kInt8;
      case tflite::TensorType_UINT8: return DataType::kUInt8;
      case tflite::TensorType_BOOL: return DataType::kBool;
      default: break;
    }
    const char* type_name = tflite::EnumNameTensorType(type);
    return Error(fmt::format("tensor {} '{}': field type: {} ({}) is not supported", index, name,
                             *type_name != '\0' ? type_name : "unknown", static_cast<int>(type)));
  }

  static std::vector<int32_t> IndexVector(tflite::SparseIndexVector type, const void* value) {
    if (value == nullptr) return {};
    switch (type) {
      case tflite::SparseIndexVector_Int32Vector: {
        const auto* v = static_cast<const tflite::Int32Vector*>(value)->values();
        return v ? std::vector<int32_t>(v->begin(), v->end()) : std::vector<int32_t>{};
      }
      case tflite::SparseIndexVector_Uint16Vector: {
        const auto* v = static_cast<const tflite::Uint16Vector*>(value)->values();
        return v ? std::vector<int32_t>(v->begin(), v->end()) : std::vector<int32_t>{};
      }
      case tflite::SparseIndexVector_Uint8Vector: {
        const auto* v = static_cast<const tflite::Uint8Vector*>(value)->values();
        return v ? std::vector<int32_t>(v->begin(), v->end()) : std::vector<int32_t>{};
      }
      default: return {};
    }
  }

  absl::StatusOr<Tensor> ConvertTensor(const tflite::Tensor& t, int index,
                                       const flatbuffers::Vector<flatbuffers::Offset<tflite::Buffer>>* buffers) const {
    Tensor tensor;
    if (t.name() != nullptr) tensor.name = t.name()->str();
    if (t.shape() != nullptr) tensor.shape.assign(t.shape()->begin(), t.shape()->end());
    auto type = ConvertType(t.type(), index, tensor.name);
    if (!type.ok()) return type.status();
    tensor.type = *type;
    const size_t num_buffers = buffers != nullptr ? buffers->size() : 0;
    if (t.buffer() >= num_buffers && !(t.buffer() == 0 && num_buffers == 0)) {
      return Error(fmt::format("tensor {} '{}': field buffer: index {} out of range ({} buffers)",
                               index, tensor.name, t.buffer(), num_buffers));
    }
    if (t.buffer() != 0 && num_buffers > 0) {
      auto bytes = BufferBytes(*buffers->Get(t.buffer()), t.buffer());
      if (!bytes.ok()) return bytes.status();
      if (!bytes->empty()) {
        tensor.data = std::move(*bytes);
        tensor.is_constant = true;
      }
    }
    if (t.is_variable()) {  // its buffer, if any, is where TFLite keeps the state: not a constant
      tensor.is_variable = true;
      tensor.is_constant = false;
      tensor.data = ConstantBytes();
    }
    // A float activation's parameters are dropped, as TFLite ignores them:
    // in mgd they say that its values lie on that grid (passes/int8_as_float.h).
    const bool float_activation = tensor.type == DataType::kFloat32 && !tensor.is_constant;
    if (const auto* q = t.quantization();
        q != nullptr && q->scale() != nullptr && q->scale()->size() > 0 && !float_activation) {
      Quantization quant;
      quant.scale.assign(q->scale()->begin(), q->scale()->end());
      if (q->zero_point() != nullptr) quant.zero_point.assign(q->zero_point()->begin(), q->zero_point()->end());
      quant.quantized_dimension = q->quantized_dimension();
      tensor.quantization = std::move(quant);
    }
    if (const auto* s = t.sparsity(); s != nullptr) {
      Sparsity sparsity;
      if (s->traversal_order()) sparsity.traversal_order.assign(s->traversal_order()->begin(), s->traversal_order()->end());
      if (s->block_map()) sparsity.block_map.assign(s->block_map()->begin(), s->block_map()->end());
      if (s->dim_metadata()) {
        for (const tflite::DimensionMetadata* dm : *s->dim_metadata()) {
          SparseDimension dim;
          if (dm != nullptr) {
            dim.is_sparse = dm->format() == tflite::DimensionType_SPARSE_CSR;
            dim.dense_size = dm->dense_size();
            dim.array_segments = IndexVector(dm->array_segments_type(), dm->array_segments());
            dim.array_indices = IndexVector(dm->array_indices_type(), dm->array_indices());
          }
          sparsity.dimensions.push_back(std::move(dim));
        }
      }
      tensor.sparsity = std::move(sparsity);
    }
    return tensor;
  }

  absl::Status ConvertAttributes(const tflite::Operator& op, Node& node, const std::string& label) const {
    const ops::DecodeContext file{op, label};
    if (const ops::OpDefinition* definition = ops::FindBuiltin(node.op)) {
      if (definition->decode == nullptr) return absl::OkStatus();
      auto attributes = definition->decode(file);
      if (!attributes.ok()) return Error(std::string(attributes.status().message()));
      node.attributes = std::move(*attributes);
      return absl::OkStatus();
    }
    node.attributes = std::monostate{};
    return absl::OkStatus();
  }

  absl::StatusOr<Node> ConvertOperator(const tflite::Operator& op, int index, const tflite::Model& model) const {
    const auto* codes = model.operator_codes();
    const size_t num_codes = codes != nullptr ? codes->size() : 0;
    if (op.opcode_index() >= num_codes) {
      return Error(fmt::format("node {}: field opcode_index: {} out of range ({} operator codes)",
                               index, op.opcode_index(), num_codes));
    }
    const tflite::OperatorCode& code = *codes->Get(op.opcode_index());
    // Schema 3a: the wider builtin_code field wins when it is larger.
    const int32_t builtin = std::max<int32_t>(code.deprecated_builtin_code(), code.builtin_code());
    if (static_cast<OpKind>(builtin) != OpKind::kCustom && ops::FindBuiltin(static_cast<OpKind>(builtin)) == nullptr) {
      return Error(fmt::format("node {}: operator {} ({}) is not supported by mgd", index,
                               BuiltinName(builtin), builtin));
    }
    Node node;
    node.op = static_cast<OpKind>(builtin);
    node.version = code.version();
    node.inputs = ToVector(op.inputs());
    node.outputs = ToVector(op.outputs());
    if (node.op == OpKind::kCustom) {
      CustomAttributes custom;
      if (code.custom_code() == nullptr || code.custom_code()->size() == 0) {
        return Error(fmt::format("node {} (CUSTOM): field custom_code is empty", index));
      }
      custom.name = code.custom_code()->str();
      if (op.custom_options() != nullptr) {
        custom.options.assign(op.custom_options()->begin(), op.custom_options()->end());
      } else if (op.large_custom_options_offset() > 1) {
        const uint64_t offset = op.large_custom_options_offset();
        const uint64_t size = op.large_custom_options_size();
        if (offset > size_ || size > size_ - offset) {
          return Error(fmt::format("node {} (custom {}): large custom options lie outside the file",
                                   index, custom.name));
        }
        custom.options.assign(data_ + offset, data_ + offset + size);
      }
      node.attributes = std::move(custom);
      return node;
    }
    const std::string label = fmt::format("node {} ({})", index, BuiltinName(builtin));
    if (absl::Status s = ConvertAttributes(op, node, label); !s.ok()) return s;
    return node;
  }

  const uint8_t* data_;
  size_t size_;
  std::string source_;
  std::shared_ptr<const void> owner_;
};

// `owner`: what keeps `data` alive for the graph's constants to share, or
// none to copy them.
absl::StatusOr<Graph> ReadModelFrom(const uint8_t* data, size_t size, std::string_view source,
                                    std::shared_ptr<const void> owner) {
  if (data == nullptr || size < 8) {
    return InvalidArgumentError(fmt::format("{}: not a TFLite model: {} bytes is too short", source, size));
  }
  if (!flatbuffers::BufferHasIdentifier(data, tflite::ModelIdentifier())) {
    return InvalidArgumentError(
        fmt::format("{}: not a TFLite model: the file identifier is not \"TFL3\"", source));
  }
  // flatbuffers offsets are 32-bit: a larger buffer cannot be a valid model.
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return InvalidArgumentError(fmt::format("{}: {} bytes is larger than a flatbuffer can be", source, size));
  }
  flatbuffers::Verifier verifier(data, size);
  if (!tflite::VerifyModelBuffer(verifier)) {
    return InvalidArgumentError(fmt::format(
        "{}: the flatbuffer is malformed (truncated or corrupt; the flatbuffers Verifier rejected it)",
        source));
  }
  Converter converter(data, size, source, std::move(owner));
  auto graph = converter.Convert(*tflite::GetModel(data));
  if (!graph.ok()) return graph.status();
  if (absl::Status s = ValidateGraph(*graph); !s.ok()) {
    return InvalidArgumentError(fmt::format("{}: {}", source, s.message()));
  }
  return graph;
}

}  // namespace

absl::StatusOr<Graph> ReadModel(const uint8_t* data, size_t size, std::string_view source) {
  return ReadModelFrom(data, size, source, nullptr);
}

absl::StatusOr<Graph> ReadModelFile(const std::string& path) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  // The file's bytes stay with the graph: its constants point into them
  // (copying a MobileNet's 14-17 MB of weights out was most of reading it).
  auto kept = std::make_shared<const Bytes>(std::move(*bytes));
  return ReadModelFrom(kept->data(), kept->size(), path, kept);
}

}  // namespace mgd
