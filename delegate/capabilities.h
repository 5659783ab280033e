// What a device can do, measured (NNAPI's getCapabilities): the time of one
// run of a small reference workload (three convolutions over a 56x56x32
// activation, 0.083 GFLOP) in fp32 and in relaxed fp16, as `mgd info --json`,
// the C API (MgdGpuDelegateGetCapabilities) and `auto` report and use.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "delegate/gpu_delegate.h"

namespace mgd {

struct Capabilities {
  double fp32_ms = 0, fp16_ms = 0;  // median of one run (inputs and outputs through host memory)
  double fp32_gflops = 0, fp16_gflops = 0;
  gpu::Interop interop;  // what the device takes of an app's (handles of the device measured on, gone since)
};

// The reference workload: three convolutions over a 56x56x32 activation.
Graph ReferenceWorkload();
// The reference workload's floating-point operations.
double ReferenceWorkloadFlops();

// The median time of one run of the reference workload on each device
// `options` name (api, device, precision), the runs taking turns; the first
// device's interop flags where asked for.
absl::StatusOr<std::vector<double>> MeasureSideBySide(const std::vector<GpuDelegateOptions>& options,
                                                      gpu::Interop* interop = nullptr);

// Measures fp32 and fp16 on the device `options` names (api, device): a
// delegate per precision is made for it and dropped again.
absl::StatusOr<Capabilities> MeasureCapabilities(GpuDelegateOptions options);

}  // namespace mgd
