#include "backends/gl/gl_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <vector>

namespace mgd::gpu::gl {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ContainsAny(const std::string& haystack, std::initializer_list<const char*> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](const char* needle) { return haystack.find(needle) != std::string::npos; });
}

std::string GlString(GLenum name) {
  const GLubyte* s = glGetString(name);
  return s != nullptr ? reinterpret_cast<const char*>(s) : "";
}

std::set<std::string> GlExtensionSet() {
  std::set<std::string> extensions;
  GLint count = 0;
  glGetIntegerv(GL_NUM_EXTENSIONS, &count);
  for (GLint i = 0; i < count; ++i) {
    if (const GLubyte* e = glGetStringi(GL_EXTENSIONS, static_cast<GLuint>(i))) {
      extensions.insert(reinterpret_cast<const char*>(e));
    }
  }
  return extensions;
}

uint32_t GetUint(GLenum name) {
  GLint value = 0;
  glGetIntegerv(name, &value);
  return static_cast<uint32_t>(std::max(value, 0));
}

uint32_t GetUintIndexed(GLenum name, GLuint index) {
  GLint value = 0;
  glGetIntegeri_v(name, index, &value);
  return static_cast<uint32_t>(std::max(value, 0));
}

GpuLimits QueryLimits() {
  GpuLimits l;
  for (GLuint i = 0; i < 3; ++i) {
    l.max_workgroup_count[i] = GetUintIndexed(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i);
    l.max_workgroup_size[i] = GetUintIndexed(GL_MAX_COMPUTE_WORK_GROUP_SIZE, i);
  }
  l.max_workgroup_invocations = GetUint(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS);
  l.max_shared_memory_bytes = GetUint(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE);
  l.max_storage_buffers_per_shader = GetUint(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS);
  GLint64 block = 0;  // may exceed 2 GiB: 64-bit query
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &block);
  l.max_storage_buffer_bytes = static_cast<uint64_t>(std::max<GLint64>(block, 0));
  l.storage_buffer_offset_alignment = GetUint(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT);
  // The push constants live in a uniform block; mgd never needs more than 128 bytes.
  l.max_push_constant_bytes = std::min(GetUint(GL_MAX_UNIFORM_BLOCK_SIZE), 128u);
  return l;
}

GlExtensions LoadExtensions(const std::set<std::string>& extensions) {
  GlExtensions ext;
  if (extensions.count("GL_EXT_disjoint_timer_query") > 0) {
    ext.query_counter = reinterpret_cast<PFNGLQUERYCOUNTEREXTPROC>(eglGetProcAddress("glQueryCounterEXT"));
    ext.get_query_object_ui64v =
        reinterpret_cast<PFNGLGETQUERYOBJECTUI64VEXTPROC>(eglGetProcAddress("glGetQueryObjectui64vEXT"));
    ext.get_query_iv = reinterpret_cast<PFNGLGETQUERYIVEXTPROC>(eglGetProcAddress("glGetQueryivEXT"));
  }
  if (extensions.count("GL_KHR_parallel_shader_compile") > 0) {
    ext.max_shader_compiler_threads =
        reinterpret_cast<PFNGLMAXSHADERCOMPILERTHREADSKHRPROC>(eglGetProcAddress("glMaxShaderCompilerThreadsKHR"));
  }
  return ext;
}

// The extension allows a timestamp counter of 0 bits, meaning none.
bool HasTimestamps(const GlExtensions& ext) {
  if (ext.query_counter == nullptr || ext.get_query_object_ui64v == nullptr || ext.get_query_iv == nullptr) {
    return false;
  }
  GLint bits = 0;
  ext.get_query_iv(GL_TIMESTAMP_EXT, GL_QUERY_COUNTER_BITS_EXT, &bits);
  return bits > 0;
}

void FillFeatures(const std::set<std::string>& extensions, GpuInfo& info) {
  info.storage_16bit = extensions.count("GL_EXT_shader_16bit_storage") > 0;
  info.fp16_arithmetic = extensions.count("GL_EXT_shader_explicit_arithmetic_types_float16") > 0;
  if (extensions.count("GL_KHR_shader_subgroup") > 0) {
    info.subgroup_size = GetUint(GL_SUBGROUP_SIZE_KHR);
    info.subgroups = info.subgroup_size > 0;
  }
}

}  // namespace

DriverVersion ParseDriverVersion(const std::string& gl_version) {
  // "OpenGL ES N.M" then vendor-specific text: the first word holding a
  // digit is the driver's version; the words before it name the driver.
  if (gl_version.rfind("OpenGL ES", 0) != 0) return {};
  std::istringstream words(gl_version);
  std::string word;
  std::vector<std::string> rest;
  int index = 0;
  while (words >> word) {
    if (index++ >= 3) rest.push_back(word);  // skip "OpenGL", "ES", "N.M"
  }
  DriverVersion driver;
  for (const std::string& w : rest) {
    if (std::any_of(w.begin(), w.end(), [](unsigned char c) { return std::isdigit(c); })) {
      driver.version = w;
      break;
    }
    driver.name += (driver.name.empty() ? "" : " ") + w;
  }
  if (driver.version.empty()) driver.name.clear();  // unrecognized: say nothing rather than guess
  return driver;
}

DeviceType GuessDeviceType(const std::string& vendor, const std::string& renderer) {
  const std::string v = Lower(vendor), r = Lower(renderer);
  if (ContainsAny(r, {"llvmpipe", "softpipe", "swiftshader", "swrast"})) return DeviceType::kCpu;
  if (ContainsAny(r, {"virgl", "virtio", "svga3d", "venus"})) return DeviceType::kVirtual;
  if (ContainsAny(v + " " + r, {"nvidia"})) {
    return ContainsAny(r, {"tegra", "orin", "xavier"}) ? DeviceType::kIntegrated : DeviceType::kDiscrete;
  }
  if (ContainsAny(v + " " + r, {"intel"})) {
    return ContainsAny(r, {"arc(", "arc "}) ? DeviceType::kDiscrete : DeviceType::kIntegrated;
  }
  // Phone and SoC GPUs share memory with the CPU.
  if (ContainsAny(v + " " + r, {"arm", "mali", "qualcomm", "adreno", "imagination", "powervr", "apple",
                                "broadcom", "v3d", "vivante", "freedreno", "panfrost"})) {
    return DeviceType::kIntegrated;
  }
  return DeviceType::kOther;  // e.g. AMD: APU or card, GL does not say
}

uint32_t GuessVendorId(const std::string& vendor, const std::string& renderer) {
  const std::string v = Lower(vendor) + " " + Lower(renderer);
  if (ContainsAny(v, {"llvmpipe", "softpipe", "swiftshader"})) return 0;  // no PCI vendor
  if (ContainsAny(v, {"nvidia"})) return 0x10DE;
  if (ContainsAny(v, {"amd", "ati technologies", "radeon"})) return 0x1002;
  if (ContainsAny(v, {"intel"})) return 0x8086;
  if (ContainsAny(v, {"arm", "mali"})) return 0x13B5;
  if (ContainsAny(v, {"qualcomm", "adreno"})) return 0x5143;
  if (ContainsAny(v, {"imagination", "powervr"})) return 0x1010;
  return 0;
}

int DeviceTypeRank(DeviceType type) {
  switch (type) {
    case DeviceType::kDiscrete: return 0;
    case DeviceType::kIntegrated: return 1;
    case DeviceType::kVirtual: return 2;
    case DeviceType::kOther: return 3;
    case DeviceType::kCpu: return 4;
  }
  return 3;
}

absl::StatusOr<ContextCapabilities> QueryCurrentContext(const std::string& label) {
  DrainGlErrors();
  GLint major = 0, minor = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  if (major < 3 || (major == 3 && minor < 1)) {
    return absl::UnavailableError(fmt::format("{}: the context is OpenGL ES {}.{} ('{}'); compute needs 3.1", label,
                                              major, minor, GlString(GL_VERSION)));
  }
  ContextCapabilities caps;
  GpuInfo& info = caps.info;
  info.api = Api::kGles;
  info.vendor = GlString(GL_VENDOR);
  info.device_name = GlString(GL_RENDERER);
  info.api_version = GlString(GL_VERSION);
  const DriverVersion driver = ParseDriverVersion(info.api_version);
  info.driver_name = driver.name;
  info.driver_version = driver.version;
  info.type = GuessDeviceType(info.vendor, info.device_name);
  info.vendor_id = GuessVendorId(info.vendor, info.device_name);
  info.limits = QueryLimits();

  const std::set<std::string> extensions = GlExtensionSet();
  FillFeatures(extensions, info);
  caps.ext = LoadExtensions(extensions);
  info.timestamps = HasTimestamps(caps.ext);
  caps.binary_formats = GetUint(GL_NUM_PROGRAM_BINARY_FORMATS) > 0;
  // A failed query above would leave a zero; it is not worth refusing the device.
  DrainGlErrors();
  return caps;
}

}  // namespace mgd::gpu::gl
