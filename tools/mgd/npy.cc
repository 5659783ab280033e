#include "tools/mgd/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "model/reader.h"

namespace mgd::cli {
namespace {

// The text after 'key': in a .npy header dict, up to the next top-level
// comma: "'<f4'", "False", "(1, 2, 3)". Empty when the key is missing.
std::string DictValue(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t i = header.find(':', k);
  if (i == std::string::npos) return "";
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t end = i;
  int depth = 0;
  while (end < header.size() && !(depth == 0 && (header[end] == ',' || header[end] == '}'))) {
    if (header[end] == '(') ++depth;
    if (header[end] == ')') --depth;
    ++end;
  }
  return header.substr(i, end - i);
}

absl::StatusOr<FloatArray> ParseNpy(const std::string& path, const Bytes& bytes) {
  auto bad = [&](const std::string& why) { return absl::InvalidArgumentError(fmt::format("{}: not a float32 .npy file: {}", path, why)); };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad("missing the \\x93NUMPY magic");
  const int major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return bad(fmt::format("unknown format version {}", major));
  }
  if (header_start + header_len > bytes.size()) return bad("truncated header");
  const std::string header(bytes.begin() + static_cast<long>(header_start),
                           bytes.begin() + static_cast<long>(header_start + header_len));
  const std::string descr = DictValue(header, "descr");
  if (descr != "'<f4'" && descr != "'=f4'") {
    return bad(fmt::format("dtype is {}, expected '<f4'", descr.empty() ? "missing" : descr));
  }
  if (DictValue(header, "fortran_order") != "False") return bad("fortran_order must be False");
  const std::string shape = DictValue(header, "shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') return bad("no shape");
  FloatArray array;
  array.has_shape = true;
  int64_t dim = -1;
  for (char ch : shape.substr(1)) {
    if (ch >= '0' && ch <= '9') {
      dim = (dim < 0 ? 0 : dim) * 10 + (ch - '0');
      if (dim > (int64_t{1} << 31)) return bad("dimension too large");
    } else if (ch == ',' || ch == ')') {
      if (dim >= 0) array.shape.push_back(static_cast<int32_t>(dim));
      dim = -1;
    } else if (ch != ' ') {
      return bad(fmt::format("cannot read shape {}", shape));
    }
  }
  const size_t data_start = header_start + header_len;
  const int64_t count = NumElements(array.shape);
  if (bytes.size() - data_start != static_cast<size_t>(count) * 4) {
    return bad(fmt::format("shape {} needs {} bytes of data, the file has {}", ShapeToString(array.shape), count * 4,
                           bytes.size() - data_start));
  }
  array.values.resize(static_cast<size_t>(count));
  std::memcpy(array.values.data(), bytes.data() + data_start, static_cast<size_t>(count) * 4);
  return array;
}

}  // namespace

absl::StatusOr<FloatArray> ReadFloatArray(const std::string& path) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return ParseNpy(path, *bytes);
  if (bytes->size() % 4 != 0) {
    return absl::InvalidArgumentError(fmt::format("{}: {} bytes is not a whole number of float32 values", path, bytes->size()));
  }
  FloatArray array;
  array.values.resize(bytes->size() / 4);
  std::memcpy(array.values.data(), bytes->data(), bytes->size());
  return array;
}

absl::Status WriteNpy(const std::string& path, const Shape& shape, const float* values, size_t count) {
  std::string dims;
  for (int32_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
  // Pad so the data starts on a 64-byte boundary, ending the header with \n.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::PermissionDeniedError(fmt::format("{}: cannot open for writing", path));
  const uint16_t len = static_cast<uint16_t>(header.size());
  file.write("\x93NUMPY\x01\x00", 8);
  file.put(static_cast<char>(len & 0xff));
  file.put(static_cast<char>(len >> 8));
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(float)));
  if (!file) return absl::DataLossError(fmt::format("{}: write failed", path));
  return absl::OkStatus();
}

}  // namespace mgd::cli
