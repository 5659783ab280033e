// Custom op registry: name (+ version range) -> kernel factory. C
// registrations (include/mgd/c_api.h) are wrapped into kernels; the MediaPipe
// ops mgd ships are registered by default and can be overridden by name.
#pragma once

#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "interpreter/kernel.h"

struct MgdRegistration;

namespace mgd {

using CustomKernelFactory = std::function<std::unique_ptr<Kernel>(const Node& node)>;

class OpResolver {
 public:
  // With the MediaPipe custom ops registered.
  OpResolver();

  // Adds or replaces the op `name` for versions [min_version, max_version].
  void AddCustom(const std::string& name, CustomKernelFactory factory, int min_version = 1,
                 int max_version = INT_MAX);
  // A C registration; the struct must outlive the interpreters using it.
  void AddCustom(const std::string& name, const MgdRegistration* registration, int min_version = 1,
                 int max_version = INT_MAX);

  // The factory for a custom op, or null when none is registered.
  const CustomKernelFactory* FindCustom(const std::string& name, int version) const;

 private:
  struct Entry {
    CustomKernelFactory factory;
    int min_version;
    int max_version;
  };
  std::map<std::string, Entry> custom_;
};

// The MediaPipe ops' CPU kernels (mediapipe_ops.cc).
std::unique_ptr<Kernel> CreateConvolution2dTransposeBiasKernel();
std::unique_ptr<Kernel> CreateMaxPoolingWithArgmax2dKernel();
std::unique_ptr<Kernel> CreateMaxUnpooling2dKernel();

}  // namespace mgd
