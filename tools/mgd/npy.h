// .npy (float32, C order) and raw .f32 files for the command line.
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

// Reads `path` by extension: .npy (float32 '<f4', C order) or raw .f32.
absl::StatusOr<FloatArray> ReadFloatArray(const std::string& path);
// A .npy file's bytes, as NumPy's format description has them (versions 1-3):
// the header is exactly one dict of 'descr', 'fortran_order' and 'shape',
// then spaces and a newline; the data is exactly what the shape needs.
// Errors name `source`.
absl::StatusOr<FloatArray> ParseNpy(const uint8_t* data, size_t size, const std::string& source);
absl::Status WriteNpy(const std::string& path, const Shape& shape, const float* values, size_t count);

}  // namespace mgd::cli
