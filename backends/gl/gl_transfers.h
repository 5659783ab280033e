// Copies between the host and GL buffers: their arguments checked on the
// caller's thread (no GL), the copies made on the device's context thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gl/gl_objects.h"

namespace mgd::gpu::gl {

// `buffer` as one of `core`'s GL buffers; null when it is another device's
// (or another API's) or there is none.
const GlBuffer* OwnBuffer(const DeviceCore& core, const Buffer* buffer);

// Each request's buffer, checked to be `core`'s and to hold the request's
// bytes. Errors name the call and the request: "UploadAll: upload 3 (64 bytes
// at offset 16): ...".
absl::StatusOr<std::vector<const GlBuffer*>> CheckedTargets(const DeviceCore& core, std::string_view call,
                                                            const std::vector<Device::UploadRequest>& uploads);
absl::StatusOr<std::vector<const GlBuffer*>> CheckedSources(const DeviceCore& core, std::string_view call,
                                                            const std::vector<Device::DownloadRequest>& downloads);

// On the context thread. uploads[i] into targets[i] (CheckedTargets), behind
// one barrier for the shader writes of earlier runs.
absl::Status UploadOnThread(const std::vector<const GlBuffer*>& targets,
                            const std::vector<Device::UploadRequest>& uploads, std::string_view call);
// downloads[i] out of sources[i] (CheckedSources), after shader writes are
// made visible to buffer reads.
absl::Status DownloadOnThread(const std::vector<const GlBuffer*>& sources,
                              const std::vector<Device::DownloadRequest>& downloads, std::string_view call);

}  // namespace mgd::gpu::gl
