// What an op's decode and encode functions (OpDefinition) see of the
// flatbuffer: the operator with its options table on the way in, the builder
// on the way out. Only the op files that have options include this.
#pragma once

#include <fmt/format.h>

#include <string>

#include "absl/status/statusor.h"
#include "model/tflite_enums.h"

namespace mgd::ops {

struct DecodeContext {
  const tflite::Operator& op;
  std::string label;  // "node 3 (SPACE_TO_DEPTH)", for messages

  absl::Status Error(const std::string& message) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}", label, message));
  }

  // The options table of the expected union type, null when the model has
  // none (TFLite's defaults apply), or an error when it has another type.
  template <typename Options>
  absl::StatusOr<const Options*> OptionsAs() const {
    if (op.builtin_options_type() == tflite::BuiltinOptions_NONE) return nullptr;
    const auto* options = op.builtin_options_as<Options>();
    if (options != nullptr) return options;
    const char* got = tflite::EnumNameBuiltinOptions(op.builtin_options_type());
    return Error(fmt::format("field builtin_options: has type {} ({}), expected {}", *got != '\0' ? got : "unknown",
                             static_cast<int>(op.builtin_options_type()),
                             tflite::EnumNameBuiltinOptions(tflite::BuiltinOptionsTraits<Options>::enum_value)));
  }
};

struct EncodeContext {
  flatbuffers::FlatBufferBuilder& builder;
  tflite::BuiltinOptions type = tflite::BuiltinOptions_NONE;
  flatbuffers::Offset<void> options = 0;

  template <typename Options>
  void Set(flatbuffers::Offset<Options> value) {
    type = tflite::BuiltinOptionsTraits<Options>::enum_value;
    options = value.Union();
  }
};

}  // namespace mgd::ops
