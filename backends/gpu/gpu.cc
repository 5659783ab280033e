#include "backends/gpu/gpu.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

#include "base/parallel.h"

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
  // storage-block count follows docs/design.md (8, what current phone drivers
  // report) rather than the bare spec minimum of 4.
  GpuLimits l;
  l.max_workgroup_invocations = 128;
  l.max_workgroup_size = {128, 128, 64};
  l.max_workgroup_count = {65535, 65535, 65535};
  l.max_shared_memory_bytes = 16384;
  l.max_storage_buffers_per_shader = 8;
  l.max_storage_buffer_bytes = uint64_t{1} << 27;
  l.storage_buffer_offset_alignment = 256;  // a maximum: drivers may need any alignment up to it
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
  l.storage_buffer_offset_alignment = std::max(real.storage_buffer_offset_alignment, min.storage_buffer_offset_alignment);
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
    const Binding& binding = d.bindings[b];
    const std::string where = fmt::format("dispatch {} ('{}') binding {}", index, name, b);
    if (binding.buffer == nullptr) return absl::InvalidArgumentError(where + ": no buffer");
    const size_t size = binding.buffer->size();
    const uint32_t alignment = std::max(info.limits.storage_buffer_offset_alignment, 1u);
    if (binding.offset >= size || binding.bytes > size - binding.offset) {
      return absl::InvalidArgumentError(fmt::format("{}: {} bytes at offset {} do not fit the {}-byte buffer", where,
                                                    binding.bytes, binding.offset, size));
    }
    if (binding.offset % alignment != 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}: offset {} is not a multiple of the device's {}-byte alignment", where, binding.offset, alignment));
    }
    if (BindingEnd(binding) - binding.offset > info.limits.max_storage_buffer_bytes) {
      return absl::InvalidArgumentError(fmt::format("{}: {} bytes exceed the storage block limit of {}", where,
                                                    BindingEnd(binding) - binding.offset,
                                                    info.limits.max_storage_buffer_bytes));
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

size_t BindingEnd(const Binding& binding) {
  return binding.bytes != 0 ? binding.offset + binding.bytes : binding.buffer->size();
}

const char* WaitModeName(WaitMode mode) {
  switch (mode) {
    case WaitMode::kAuto: return "auto";
    case WaitMode::kPassive: return "passive";
    case WaitMode::kActive: return "active";
  }
  return "?";
}

std::chrono::nanoseconds PollTime(WaitMode mode, const GpuInfo& info) {
  const bool active = mode == WaitMode::kActive || (mode == WaitMode::kAuto && !info.is_software());
  return active ? std::chrono::nanoseconds(kActiveWaitLimit) : std::chrono::nanoseconds(0);
}

WaitPlan PlanWait(std::chrono::nanoseconds poll_time, std::chrono::nanoseconds expected,
                  std::chrono::nanoseconds waited) {
  WaitPlan plan;
  if (poll_time.count() <= 0) return plan;  // a passive wait
  plan.poll = poll_time;
  plan.sleep = std::max(expected - kWakeLead - waited, std::chrono::nanoseconds(0));
  return plan;
}

const char* PriorityName(Priority priority) {
  switch (priority) {
    case Priority::kLow: return "low";
    case Priority::kMedium: return "medium";
    case Priority::kHigh: return "high";
  }
  return "medium";
}

absl::StatusOr<uint64_t> Device::Submit(Recording& recording, const SubmitSync& sync) {
  if (!sync.empty()) return absl::UnimplementedError("this device cannot wait on or signal an app's sync objects");
  if (absl::Status s = Run(recording); !s.ok()) return s;
  return 0;
}

absl::Status Device::Wait(uint64_t /*ticket*/, std::chrono::nanoseconds /*timeout*/) { return absl::OkStatus(); }

absl::Status Device::RunWithTransfers(const std::vector<UploadRequest>& uploads, Recording& recording,
                                      const std::vector<DownloadRequest>& downloads) {
  for (const UploadRequest& u : uploads) {
    if (u.buffer == nullptr) return absl::InvalidArgumentError("RunWithTransfers: an upload without a buffer");
    if (absl::Status s = Upload(*u.buffer, u.data, u.bytes, u.offset); !s.ok()) return s;
  }
  if (absl::Status s = Run(recording); !s.ok()) return s;
  for (const DownloadRequest& d : downloads) {
    if (d.buffer == nullptr) return absl::InvalidArgumentError("RunWithTransfers: a download without a buffer");
    if (absl::Status s = Download(*d.buffer, d.data, d.bytes, d.offset); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<std::unique_ptr<Program>>> Device::CreatePrograms(const std::vector<ProgramSource>& sources,
                                                                             size_t threads) {
  std::vector<absl::StatusOr<std::unique_ptr<Program>>> built;
  for (size_t i = 0; i < sources.size(); ++i) built.emplace_back(absl::UnknownError("not built"));
  // Longest source first: the last program begun then is a short one, not
  // the one the whole start waits for.
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].glsl.size() > sources[b].glsl.size(); });
  ParallelFor(sources.size(), [&](size_t k) { built[order[k]] = CreateProgram(sources[order[k]]); }, threads);
  return built;
}

namespace {

// Byte ranges of buffers touched since the last barrier.
class Touched {
 public:
  void Add(const Binding& b) { ranges_[b.buffer].push_back({b.offset, BindingEnd(b)}); }
  bool Overlaps(const Binding& b) const {
    auto it = ranges_.find(b.buffer);
    if (it == ranges_.end()) return false;
    const size_t start = b.offset, end = BindingEnd(b);
    return std::any_of(it->second.begin(), it->second.end(), [&](const auto& r) { return r.first < end && start < r.second; });
  }
  void Clear() { ranges_.clear(); }

 private:
  std::map<const Buffer*, std::vector<std::pair<size_t, size_t>>> ranges_;
};

}  // namespace

std::vector<bool> PlanBarriers(const std::vector<Dispatch>& dispatches) {
  std::vector<bool> barrier(dispatches.size(), false);
  Touched written, read;  // since the last barrier
  for (size_t i = 0; i < dispatches.size(); ++i) {
    bool needed = false;
    for (const Binding& b : dispatches[i].bindings) {
      const bool writes = b.access != Access::kRead;
      // Any access after a write, or a write after a read, of the same bytes.
      needed = needed || written.Overlaps(b) || (writes && read.Overlaps(b));
    }
    if (needed) {
      barrier[i] = true;
      written.Clear();
      read.Clear();
    }
    for (const Binding& b : dispatches[i].bindings) {
      if (b.access != Access::kWrite) read.Add(b);
      if (b.access != Access::kRead) written.Add(b);
    }
  }
  return barrier;
}

}  // namespace mgd::gpu
