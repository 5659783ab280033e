// Faults a device can be made to show, as a real driver's would: for tests
// of what an invoke does when the GPU runs out of memory, hangs or is lost,
// and for an app to try its own error handling (MGD_FAULTS). The switches
// may be flipped at any time from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu {

struct FaultSwitches {
  // Every CreateBuffer fails as out of device memory (ResourceExhausted).
  std::atomic<bool> out_of_memory{false};
  // Submissions never complete while set: waits time out (a fence that
  // never signals). Cleared, they complete.
  std::atomic<bool> hang{false};
  // The next submission loses the device for good: it and every later run,
  // upload or download fail with Unavailable, as after
  // VK_ERROR_DEVICE_LOST.
  std::atomic<bool> lose_device{false};
};

// MGD_FAULTS: a comma-separated list of out_of_memory, hang and
// lose_device, set from the start. Null when unset; an error naming an
// unknown word.
absl::StatusOr<std::shared_ptr<FaultSwitches>> FaultsFromEnvironment();

// `device` with the switches in front of it.
std::unique_ptr<Device> WithFaults(std::unique_ptr<Device> device, std::shared_ptr<FaultSwitches> switches);

// The error every call gets once a device is lost.
absl::Status DeviceLostError(const std::string& where);

}  // namespace mgd::gpu
