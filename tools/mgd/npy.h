// .npy files (C order; float32, float16, int32, int64, int8, uint8, bool)
// and raw files for the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd::cli {

struct FloatArray {
  Shape shape;               // empty for a raw .f32 file (shape unknown)
  bool has_shape = false;
  std::vector<float> values;
};

// An array of any dtype mgd's tensors have, as its bytes.
struct Array {
  Shape shape;  // empty for a raw file (shape unknown)
  bool has_shape = false;
  DataType type = DataType::kFloat32;
  std::vector<uint8_t> bytes;
};

// Reads `path` by extension: .npy (float32 '<f4', C order) or raw .f32.
absl::StatusOr<FloatArray> ReadFloatArray(const std::string& path);
// Reads `path`: a .npy file of any dtype Array holds, or any other file as
// raw values of `raw_type` (its size a whole number of them).
absl::StatusOr<Array> ReadArray(const std::string& path, DataType raw_type);
// A .npy file's bytes, as NumPy's format description has them (versions 1-3):
// the header is exactly one dict of 'descr', 'fortran_order' and 'shape',
// then spaces and a newline; the data is exactly what the shape needs.
// Little-endian dtypes only. Errors name `source`.
absl::StatusOr<Array> ParseNpy(const uint8_t* data, size_t size, const std::string& source);
absl::Status WriteNpy(const std::string& path, const Shape& shape, const float* values, size_t count);
// An array of any dtype Array holds, from its bytes.
absl::Status WriteNpy(const std::string& path, const Shape& shape, DataType type, const void* data, size_t bytes);

}  // namespace mgd::cli
