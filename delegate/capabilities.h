// What a device can do, measured (NNAPI's getCapabilities): the time of one
// run of a small reference workload (three convolutions over a 56x56x32
// activation, 0.083 GFLOP) in fp32 and in relaxed fp16, as `mgd info --json`,
// the C API (MgdGpuDelegateGetCapabilities) and `auto` report and use.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "delegate/gpu_delegate.h"

namespace mgd {

struct Capabilities {
  std::string backend;  // "vulkan", "gl"
  std::string device;
  double fp32_ms = 0, fp16_ms = 0;  // median of one run (inputs and outputs through host memory)
  double fp32_gflops = 0, fp16_gflops = 0;
};

// The reference workload's floating-point operations.
double ReferenceWorkloadFlops();

// The median time of one run of the reference workload on the device
// `options` names, at options.precision.
absl::StatusOr<double> MeasureReferenceMs(GpuDelegateOptions options);

// Measures on the device `options` names (api, device): a delegate per
// precision is made for it and dropped again. `fp16` false measures fp32
// only (fp16_ms stays 0), for a quicker choice.
absl::StatusOr<Capabilities> MeasureCapabilities(GpuDelegateOptions options, bool fp16 = true);

}  // namespace mgd
