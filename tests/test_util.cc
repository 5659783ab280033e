#include "tests/test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace mgd::testing {

std::string DataPath(const std::string& relative) {
  // MGD_TEST_DATA_DIR in the environment: the test binaries moved to another
  // machine (the GPU host) with the tree somewhere else.
  const char* moved = std::getenv("MGD_TEST_DATA_DIR");
  return std::string(moved != nullptr ? moved : MGD_TEST_DATA_DIR) + "/" + relative;
}

std::vector<float> ReadF32(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

double RelativeRms(const std::vector<float>& actual, const std::vector<float>& expected) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    const double d = static_cast<double>(actual[i]) - expected[i];
    diff += d * d;
    ref += static_cast<double>(expected[i]) * expected[i];
  }
  if (ref == 0) return diff == 0 ? 0 : INFINITY;
  return std::sqrt(diff / ref);
}

long FirstOutOfBounds(const std::vector<float>& actual, const std::vector<float>& expected, double atol, double rtol) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!(std::abs(static_cast<double>(actual[i]) - expected[i]) <= atol + rtol * std::abs(expected[i]))) {
      return static_cast<long>(i);
    }
  }
  return -1;
}

bool GpuBackendsRequired() {
  const char* env = std::getenv("MGD_REQUIRE_GPU_BACKENDS");
  return env != nullptr && std::string(env) == "1";
}

}  // namespace mgd::testing
