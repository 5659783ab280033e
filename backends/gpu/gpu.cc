#include "backends/gpu/gpu.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace mgd::gpu {

const char* ApiName(Api api) { return api == Api::kVulkan ? "vulkan" : "gl"; }

const char* DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kDiscrete: return "discrete";
    case DeviceType::kIntegrated: return "integrated";
    case DeviceType::kVirtual: return "virtual";
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kOther: return "other";
  }
  return "other";
}

GpuLimits Gles31MinimumLimits() {
  // OpenGL ES 3.1 specification, table 20.47 (compute shader minimums); the
  // storage-block count follows DESIGN.md (8, what current phone drivers
  // report) rather than the bare spec minimum of 4.
  GpuLimits l;
  l.max_workgroup_invocations = 128;
  l.max_workgroup_size = {128, 128, 64};
  l.max_workgroup_count = {65535, 65535, 65535};
  l.max_shared_memory_bytes = 16384;
  l.max_storage_buffers_per_shader = 8;
  l.max_storage_buffer_bytes = uint64_t{1} << 27;
  l.max_push_constant_bytes = 128;
  return l;
}

GpuLimits ClampToGles31(const GpuLimits& real) {
  const GpuLimits min = Gles31MinimumLimits();
  GpuLimits l;
  l.max_workgroup_invocations = std::min(real.max_workgroup_invocations, min.max_workgroup_invocations);
  for (size_t i = 0; i < 3; ++i) {
    l.max_workgroup_size[i] = std::min(real.max_workgroup_size[i], min.max_workgroup_size[i]);
    l.max_workgroup_count[i] = std::min(real.max_workgroup_count[i], min.max_workgroup_count[i]);
  }
  l.max_shared_memory_bytes = std::min(real.max_shared_memory_bytes, min.max_shared_memory_bytes);
  l.max_storage_buffers_per_shader = std::min(real.max_storage_buffers_per_shader, min.max_storage_buffers_per_shader);
  l.max_storage_buffer_bytes = std::min(real.max_storage_buffer_bytes, min.max_storage_buffer_bytes);
  l.max_push_constant_bytes = std::min(real.max_push_constant_bytes, min.max_push_constant_bytes);
  return l;
}

void PinLoadedModules(bool (*matches)(const std::string& file_name)) {
#if defined(__linux__) && defined(RTLD_NODELETE) && defined(RTLD_NOLOAD)
  struct Search {
    bool (*matches)(const std::string&);
    std::vector<std::string> paths;
  } search{matches, {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (s->matches(path.substr(path.find_last_of('/') + 1))) s->paths.push_back(path);
        return 0;
      },
      &search);
  // NOLOAD: only modules already loaded; NODELETE: never unloaded. The handle
  // is deliberately not closed.
  for (const std::string& path : search.paths) dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#else
  (void)matches;
#endif
}

absl::StatusOr<size_t> SelectDevice(const std::vector<GpuInfo>& devices, const std::string& selector) {
  if (devices.empty()) return absl::NotFoundError("no device found");
  if (selector.empty()) return 0;
  if (std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const size_t index = std::stoul(selector);
    if (index < devices.size()) return index;
    return absl::NotFoundError(fmt::format("device index {} is out of range ({} devices)", index, devices.size()));
  }
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string wanted = lower(selector);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (lower(devices[i].device_name).find(wanted) != std::string::npos) return i;
  }
  std::vector<std::string> names;
  for (const GpuInfo& d : devices) names.push_back("'" + d.device_name + "'");
  return absl::NotFoundError(
      fmt::format("no device matches '{}' (devices: {})", selector, fmt::join(names, ", ")));
}

absl::Status CheckProgramLimits(const GpuInfo& info, const ProgramSource& source,
                                const std::array<uint32_t, 3>& wg) {
  const GpuLimits& l = info.limits;
  const uint64_t invocations = uint64_t{wg[0]} * wg[1] * wg[2];
  const char* why = info.clamped_limits ? " (clamped to the GLES 3.1 minimums)" : "";
  if (invocations > l.max_workgroup_invocations || wg[0] > l.max_workgroup_size[0] ||
      wg[1] > l.max_workgroup_size[1] || wg[2] > l.max_workgroup_size[2]) {
    return absl::InvalidArgumentError(fmt::format(
        "program '{}': workgroup {}x{}x{} ({} invocations) exceeds the device's limits {}x{}x{}, {} invocations{}",
        source.name, wg[0], wg[1], wg[2], invocations, l.max_workgroup_size[0], l.max_workgroup_size[1],
        l.max_workgroup_size[2], l.max_workgroup_invocations, why));
  }
  if (source.shared_memory_bytes > l.max_shared_memory_bytes) {
    return absl::InvalidArgumentError(fmt::format("program '{}': {} bytes of shared memory exceed the limit of {}{}",
                                                  source.name, source.shared_memory_bytes,
                                                  l.max_shared_memory_bytes, why));
  }
  if (source.num_bindings > l.max_storage_buffers_per_shader) {
    return absl::InvalidArgumentError(fmt::format("program '{}': {} storage buffers exceed the limit of {}{}",
                                                  source.name, source.num_bindings,
                                                  l.max_storage_buffers_per_shader, why));
  }
  if (source.push_constant_bytes % 4 != 0 || source.push_constant_bytes > std::min(128u, l.max_push_constant_bytes)) {
    return absl::InvalidArgumentError(fmt::format(
        "program '{}': {} bytes of push constants (must be a multiple of 4, at most {})", source.name,
        source.push_constant_bytes, std::min(128u, l.max_push_constant_bytes)));
  }
  return absl::OkStatus();
}

absl::Status CheckDispatch(const GpuInfo& info, const Dispatch& d, const std::string& name, uint32_t num_bindings,
                           uint32_t push_constant_bytes, size_t index) {
  if (d.bindings.size() != num_bindings) {
    return absl::InvalidArgumentError(fmt::format("dispatch {} ('{}'): {} bindings given, the program has {}", index,
                                                  name, d.bindings.size(), num_bindings));
  }
  for (size_t b = 0; b < d.bindings.size(); ++b) {
    if (d.bindings[b].buffer == nullptr) {
      return absl::InvalidArgumentError(fmt::format("dispatch {} ('{}'): binding {} has no buffer", index, name, b));
    }
  }
  if (d.push_constants.size() != push_constant_bytes) {
    return absl::InvalidArgumentError(fmt::format("dispatch {} ('{}'): {} bytes of push constants, the program takes {}",
                                                  index, name, d.push_constants.size(), push_constant_bytes));
  }
  for (int i = 0; i < 3; ++i) {
    if (d.groups[static_cast<size_t>(i)] == 0 || d.groups[static_cast<size_t>(i)] > info.limits.max_workgroup_count[static_cast<size_t>(i)]) {
      return absl::InvalidArgumentError(fmt::format("dispatch {} ('{}'): {} workgroups along axis {} (limit {})", index,
                                                    name, d.groups[static_cast<size_t>(i)], i,
                                                    info.limits.max_workgroup_count[static_cast<size_t>(i)]));
    }
  }
  return absl::OkStatus();
}

std::vector<bool> PlanBarriers(const std::vector<Dispatch>& dispatches) {
  std::vector<bool> barrier(dispatches.size(), false);
  std::set<const Buffer*> written, read;  // since the last barrier
  for (size_t i = 0; i < dispatches.size(); ++i) {
    bool needed = false;
    for (const Binding& b : dispatches[i].bindings) {
      const bool writes = b.access != Access::kRead;
      // Any access after a write, or a write after a read.
      needed = needed || written.count(b.buffer) > 0 || (writes && read.count(b.buffer) > 0);
    }
    if (needed) {
      barrier[i] = true;
      written.clear();
      read.clear();
    }
    for (const Binding& b : dispatches[i].bindings) {
      if (b.access != Access::kWrite) read.insert(b.buffer);
      if (b.access != Access::kRead) written.insert(b.buffer);
    }
  }
  return barrier;
}

}  // namespace mgd::gpu
