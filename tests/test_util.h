// Shared helpers for mgd's tests: test data paths and the numerics of
// docs/design.md section 5.
#pragma once

#include <string>
#include <vector>

namespace mgd::testing {

// tests/data in the source tree (set by CMake; MGD_TEST_DATA_DIR overrides it).
std::string DataPath(const std::string& relative);

std::vector<float> ReadF32(const std::string& path);

// sqrt(mean((a-e)^2)) / sqrt(mean(e^2)).
double RelativeRms(const std::vector<float>& actual, const std::vector<float>& expected);

// Index of the first element with |a-e| > atol + rtol*|e|, or -1.
long FirstOutOfBounds(const std::vector<float>& actual, const std::vector<float>& expected, double atol, double rtol);

// True when MGD_REQUIRE_GPU_BACKENDS=1 (CI): a GPU test with no device must
// fail rather than skip.
bool GpuBackendsRequired();

}  // namespace mgd::testing
