// mgd info: every backend and device, with what the tuning tables key on.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "backends/gpu/gpu.h"
#include "delegate/capabilities.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

nlohmann::json ToJson(const gpu::GpuInfo& i) {
  const gpu::GpuLimits& l = i.limits;
  return {{"vendor", i.vendor},
          {"vendor_id", i.vendor_id},
          {"device", i.device_name},
          {"device_id", i.device_id},
          {"type", gpu::DeviceTypeName(i.type)},
          {"driver", i.driver_name},
          {"driver_version", i.driver_version},
          {"api_version", i.api_version},
          {"limits",
           {{"max_workgroup_invocations", l.max_workgroup_invocations},
            {"max_workgroup_size", l.max_workgroup_size},
            {"max_workgroup_count", l.max_workgroup_count},
            {"max_shared_memory_bytes", l.max_shared_memory_bytes},
            {"max_storage_buffers_per_shader", l.max_storage_buffers_per_shader},
            {"max_storage_buffer_bytes", l.max_storage_buffer_bytes},
            {"storage_buffer_offset_alignment", l.storage_buffer_offset_alignment},
            {"max_push_constant_bytes", l.max_push_constant_bytes}}},
          {"fp16_arithmetic", i.fp16_arithmetic},
          {"storage_16bit", i.storage_16bit},
          {"ieee_inf_nan", i.ieee_inf_nan},
          {"int8_dot_products", i.int8_dot_products},
          {"subgroups", i.subgroups},
          {"subgroup_size", i.subgroup_size},
          {"timestamps", i.timestamps},
          {"clamped_limits", i.clamped_limits}};
}

// The reference workload's times on the device (NNAPI's capabilities), or
// why they could not be measured.
nlohmann::json Measured(gpu::Api api, size_t index, std::string& line) {
  GpuDelegateOptions options;
  options.api = api;
  options.device = std::to_string(index);
  absl::StatusOr<Capabilities> c = MeasureCapabilities(options);
  if (!c.ok()) {
    line = fmt::format("\n        measured: failed ({})", std::string(c.status().message()));
    return {{"error", std::string(c.status().message())}};
  }
  const gpu::Interop& i = c->interop;
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  line = fmt::format("\n        measured: fp32 {:.3f} ms ({:.1f} GFLOP/s), fp16 {:.3f} ms ({:.1f} GFLOP/s) per reference run"
                     "\n        apps' objects: timeline semaphores {}, memory fds {}, sync fds wait {} signal {}, EGL fence syncs {}",
                     c->fp32_ms, c->fp32_gflops, c->fp16_ms, c->fp16_gflops, yes(i.timeline_semaphores), yes(i.memory_fd_import),
                     yes(i.sync_fd_wait), yes(i.sync_fd_signal), yes(i.egl_fence_sync));
  return {{"fp32_ms", c->fp32_ms}, {"fp16_ms", c->fp16_ms}, {"fp32_gflops", c->fp32_gflops}, {"fp16_gflops", c->fp16_gflops},
          {"workload_gflop", ReferenceWorkloadFlops() * 1e-9},
          {"interop",
           {{"timeline_semaphores", i.timeline_semaphores}, {"memory_fd_import", i.memory_fd_import},
            {"sync_fd_wait", i.sync_fd_wait}, {"sync_fd_signal", i.sync_fd_signal}, {"egl_fence_sync", i.egl_fence_sync}}}};
}

}  // namespace

absl::Status Info(const InfoOptions& options) {
  nlohmann::json backends = nlohmann::json::array();
  struct Candidate {
    std::string backend, device;
    int rank;  // 0 real GPU, 1 software GPU
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> text;
  for (gpu::Api api : {gpu::Api::kVulkan, gpu::Api::kGles}) {
    auto devices = gpu::ListDevices(api);
    nlohmann::json list = nlohmann::json::array();
    std::string error;
    if (!devices.ok()) {
      error = std::string(devices.status().message());
    } else {
      for (size_t index = 0; index < devices->size(); ++index) {
        gpu::GpuInfo info = (*devices)[index];
        if (options.clamp_limits) {
          info.limits = gpu::ClampToGles31(info.limits);
          info.clamped_limits = true;
        }
        list.push_back(ToJson(info));
        std::string measured;
        if (options.measure) list.back()["capabilities"] = Measured(api, index, measured);
        candidates.push_back({gpu::ApiName(api), info.device_name, info.is_software() ? 1 : 0});
        const gpu::GpuLimits& l = info.limits;
        text.push_back(fmt::format(
            "{:<7} {} ({}, {})\n        driver {} {}, API {}\n        workgroup <= {} invocations ({}x{}x{}), "
            "shared {} KiB, {} storage buffers, push constants {} B\n        fp16 {}, 16-bit storage {}, "
            "subgroups {} (size {}), timestamps {}, IEEE Inf/NaN {}, int8 dot products {}{}",
            gpu::ApiName(api), info.device_name, info.vendor, gpu::DeviceTypeName(info.type), info.driver_name,
            info.driver_version, info.api_version, l.max_workgroup_invocations, l.max_workgroup_size[0],
            l.max_workgroup_size[1], l.max_workgroup_size[2], l.max_shared_memory_bytes / 1024,
            l.max_storage_buffers_per_shader, l.max_push_constant_bytes, info.fp16_arithmetic ? "yes" : "no",
            info.storage_16bit ? "yes" : "no", info.subgroups ? "yes" : "no", info.subgroup_size,
            info.timestamps ? "yes" : "no", info.ieee_inf_nan ? "yes" : "no",
            info.int8_dot_products ? "yes" : "no", info.clamped_limits ? "\n        (limits clamped to GLES 3.1 minimums)" : "") + measured);
      }
      if (devices->empty()) text.push_back(fmt::format("{:<7} no device", gpu::ApiName(api)));
    }
    nlohmann::json entry = {{"api", gpu::ApiName(api)}, {"devices", list}};
    if (!error.empty()) {
      entry["error"] = error;
      text.push_back(fmt::format("{:<7} unavailable: {}", gpu::ApiName(api), error));
    }
    backends.push_back(entry);
  }
  // auto: a real GPU over a software one over the CPU; Vulkan before GL at equal rank.
  Candidate best{"cpu", "CPU reference kernels", 2};
  for (const Candidate& c : candidates) {
    if (c.rank < best.rank) best = c;
  }
  const std::string why = best.rank == 0   ? "a hardware GPU"
                          : best.rank == 1 ? "no hardware GPU; a software GPU"
                                           : "no GPU at all";
  if (options.json) {
    std::printf("%s\n", JsonText(nlohmann::json{{"backends", backends},
                                      {"auto", {{"backend", best.backend}, {"device", best.device}, {"why", why}}}}
                           ).c_str());
    return absl::OkStatus();
  }
  for (const std::string& line : text) fmt::print("{}\n", line);
  fmt::print("auto    {} on {} ({})\n", best.backend, best.device, why);
  return absl::OkStatus();
}

}  // namespace mgd::cli
