// Custom op registry: name (+ version range) -> kernel factory. C
// registrations (include/mgd/c_api.h) are wrapped into kernels; the MediaPipe
// ops mgd ships are registered by default and can be overridden by name.
#pragma once

#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "interpreter/kernel.h"

struct MgdRegistration;

namespace mgd {

using CustomKernelFactory = std::function<std::unique_ptr<Kernel>(const Node& node)>;

// A registered custom op: its kernel factory and, for mgd's own ops, the
// decoder of its options (ops/), run once per node before the kernel is made.
struct CustomOp {
  CustomKernelFactory factory;
  absl::StatusOr<OpAttributes> (*decode)(const std::vector<uint8_t>& options) = nullptr;
};

class OpResolver {
 public:
  // With the custom ops mgd ships registered (MediaPipe's, ops/).
  OpResolver();

  // Adds or replaces the op `name` for versions [min_version, max_version].
  void AddCustom(const std::string& name, CustomKernelFactory factory, int min_version = 1,
                 int max_version = INT_MAX);
  // A C registration; the struct must outlive the interpreters using it.
  void AddCustom(const std::string& name, const MgdRegistration* registration, int min_version = 1,
                 int max_version = INT_MAX);

  // The custom op `name` at `version`, or null when none is registered.
  const CustomOp* FindCustom(const std::string& name, int version) const;

 private:
  struct Entry {
    CustomOp op;
    int min_version;
    int max_version;
  };
  std::map<std::string, Entry> custom_;
};

}  // namespace mgd
