#include "tools/mgd/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <optional>

#include "base/files.h"

namespace mgd::cli {
namespace {

// The header's dict, read as the Python literal it is: {'key': value, ...}
// with string, boolean and tuple-of-int values, and nothing after it but
// spaces and one newline.
class HeaderParser {
 public:
  explicit HeaderParser(std::string text) : s_(std::move(text)) {}

  // key -> the value's text ("'<f4'" unquoted to "<f4", "False", "(1, 2)").
  std::optional<std::string> Parse(std::map<std::string, std::string>& dict) {
    Space();
    if (!Eat('{')) return "the header is not a dict";
    for (;;) {
      Space();
      if (Eat('}')) break;
      std::string key, value;
      if (!String(key)) return "a key is not a quoted string";
      Space();
      if (!Eat(':')) return fmt::format("no ':' after '{}'", key);
      Space();
      if (!Value(value)) return fmt::format("cannot read the value of '{}'", key);
      if (!dict.emplace(key, value).second) return fmt::format("'{}' appears twice", key);
      Space();
      if (Eat('}')) break;
      if (!Eat(',')) return fmt::format("no ',' after the value of '{}'", key);
    }
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
    if (i_ + 1 != s_.size() || s_[i_] != '\n') return "bytes after the header's dict (it must end in spaces and a newline)";
    return std::nullopt;
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool String(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char quote = s_[i_++];
    const size_t end = s_.find(quote, i_);
    if (end == std::string::npos) return false;
    out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out.find('\\') == std::string::npos;
  }
  bool Value(std::string& out) {
    if (String(out)) return true;
    for (const char* word : {"True", "False"}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        out = word;
        i_ += std::strlen(word);
        return true;
      }
    }
    if (!Eat('(')) return false;
    out = "(";
    while (i_ < s_.size() && s_[i_] != ')') {
      const char c = s_[i_++];
      if (!(c == ' ' || c == ',' || (c >= '0' && c <= '9'))) return false;
      out += c;
    }
    if (!Eat(')')) return false;
    out += ')';
    return true;
  }

  std::string s_;
  size_t i_ = 0;
};

// "(1, 2, 3)", "(5,)" or "()" (a Python tuple literal) as dims, each below
// 2^31.
std::optional<Shape> ParseShape(const std::string& tuple) {
  const std::string inner = tuple.substr(1, tuple.size() - 2);
  Shape shape;
  if (inner.find_first_not_of(' ') == std::string::npos) return shape;
  std::vector<std::string> parts(1);
  for (char c : inner) {
    if (c == ',') parts.emplace_back();
    else parts.back() += c;
  }
  for (std::string& part : parts) {
    const size_t first = part.find_first_not_of(' ');
    part = first == std::string::npos ? "" : part.substr(first, part.find_last_not_of(' ') - first + 1);
  }
  // A trailing comma leaves an empty last part; a single item needs one
  // ("(5)" is the number 5, not a tuple).
  const bool trailing_comma = parts.back().empty();
  if (trailing_comma) parts.pop_back();
  if (parts.size() == 1 && !trailing_comma) return std::nullopt;
  for (const std::string& part : parts) {
    if (part.empty() || part.size() > 10 || part.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const int64_t dim = std::stoll(part);
    if (dim > INT32_MAX) return std::nullopt;
    shape.push_back(static_cast<int32_t>(dim));
  }
  return shape;
}

// NumPy's dtype strings for mgd's dtypes ('=' is the machine's order, which
// is little-endian wherever mgd runs; '|' is for single bytes).
std::optional<DataType> DtypeOf(const std::string& descr) {
  static const std::map<std::string, DataType> kDtypes = {
      {"<f4", DataType::kFloat32}, {"=f4", DataType::kFloat32}, {"<f2", DataType::kFloat16}, {"=f2", DataType::kFloat16},
      {"<i4", DataType::kInt32},   {"=i4", DataType::kInt32},   {"<i8", DataType::kInt64},   {"=i8", DataType::kInt64},
      {"|i1", DataType::kInt8},    {"|u1", DataType::kUInt8},   {"|b1", DataType::kBool},
  };
  auto it = kDtypes.find(descr);
  if (it == kDtypes.end()) return std::nullopt;
  return it->second;
}

}  // namespace

absl::StatusOr<Array> ParseNpy(const uint8_t* bytes, size_t size, const std::string& path) {
  auto bad = [&](const std::string& why) { return absl::InvalidArgumentError(fmt::format("{}: not a .npy file mgd reads: {}", path, why)); };
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) return bad("missing the \\x93NUMPY magic");
  const int major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return bad("truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return bad(fmt::format("unknown format version {}", major));
  }
  if (header_len > size - header_start) return bad("truncated header");
  std::map<std::string, std::string> dict;
  HeaderParser parser(std::string(reinterpret_cast<const char*>(bytes) + header_start, header_len));
  if (auto error = parser.Parse(dict)) return bad(*error);
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.count(key)) return bad(fmt::format("the header has no '{}'", key));
  }
  if (dict.size() != 3) return bad("the header has keys other than 'descr', 'fortran_order' and 'shape'");
  const std::optional<DataType> type = DtypeOf(dict["descr"]);
  if (!type) return bad(fmt::format("dtype is '{}', expected one of <f4, <f2, <i4, <i8, |i1, |u1, |b1", dict["descr"]));
  const uint64_t element = ElementSize(*type);
  if (dict["fortran_order"] != "False") return bad("fortran_order must be False");
  const std::string& shape_text = dict["shape"];
  auto shape = shape_text.front() == '(' ? ParseShape(shape_text) : std::nullopt;
  if (!shape) return bad(fmt::format("cannot read shape {}", shape_text));
  // The count checked against the bytes there are, one dim at a time, so
  // that no product overflows.
  const size_t data_bytes = size - header_start - header_len;
  uint64_t count = 1;
  for (int32_t d : *shape) {
    if (d != 0 && count > data_bytes / element / static_cast<uint64_t>(d)) {
      return bad(fmt::format("shape {} needs more than the {} bytes of data the file has", ShapeToString(*shape), data_bytes));
    }
    count *= static_cast<uint64_t>(d);
  }
  if (data_bytes != count * element) {
    return bad(fmt::format("shape {} needs {} bytes of data, the file has {}", ShapeToString(*shape), count * element, data_bytes));
  }
  Array array;
  array.has_shape = true;
  array.shape = std::move(*shape);
  array.type = *type;
  const uint8_t* data = bytes + header_start + header_len;
  array.bytes.assign(data, data + data_bytes);
  return array;
}

absl::StatusOr<Array> ReadArray(const std::string& path, DataType raw_type) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return ParseNpy(bytes->data(), bytes->size(), path);
  if (bytes->size() % ElementSize(raw_type) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes is not a whole number of {} values", path, bytes->size(), DataTypeName(raw_type)));
  }
  Array array;
  array.type = raw_type;
  array.bytes.assign(bytes->begin(), bytes->end());
  return array;
}

absl::StatusOr<FloatArray> ReadFloatArray(const std::string& path) {
  auto array = ReadArray(path, DataType::kFloat32);
  if (!array.ok()) return array.status();
  if (array->type != DataType::kFloat32) {
    return absl::InvalidArgumentError(fmt::format("{}: holds {} values, expected float32", path, DataTypeName(array->type)));
  }
  FloatArray floats{array->shape, array->has_shape, std::vector<float>(array->bytes.size() / 4)};
  if (!array->bytes.empty()) std::memcpy(floats.values.data(), array->bytes.data(), array->bytes.size());
  return floats;
}

absl::Status WriteNpy(const std::string& path, const Shape& shape, const float* values, size_t count) {
  return WriteNpy(path, shape, DataType::kFloat32, values, count * sizeof(float));
}

absl::Status WriteNpy(const std::string& path, const Shape& shape, DataType type, const void* data, size_t bytes) {
  static const std::map<DataType, const char*> kDescr = {
      {DataType::kFloat32, "<f4"}, {DataType::kFloat16, "<f2"}, {DataType::kInt32, "<i4"}, {DataType::kInt64, "<i8"},
      {DataType::kInt8, "|i1"},    {DataType::kUInt8, "|u1"},   {DataType::kBool, "|b1"}};
  std::string dims;
  for (int32_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", kDescr.at(type), dims);
  // Pad so the data starts on a 64-byte boundary, ending the header with \n.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const uint16_t len = static_cast<uint16_t>(header.size());
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(len & 0xff));
  file.push_back(static_cast<char>(len >> 8));
  file += header;
  file.append(static_cast<const char*>(data), bytes);
  return WriteFileAtomically(path, file);
}

}  // namespace mgd::cli
