// Programs compiled in process (glslang), shared descriptor and pipeline
// layouts, the pipeline cache and shader module identifiers.
#include <chrono>
#include <cstring>

#include "backends/vulkan/device.h"
#include "backends/vulkan/glsl_compiler.h"

namespace mgd::gpu::vulkan {

absl::StatusOr<std::unique_ptr<Program>> VulkanDevice::CreateProgram(const ProgramSource& source) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const auto t0 = Clock::now();
  auto p = std::make_unique<VulkanProgram>(device_, source.name);
  p->num_bindings = source.num_bindings;
  p->push_constant_bytes = source.push_constant_bytes;
  if (absl::Status s = SharedLayouts(source.num_bindings, source.push_constant_bytes, *p); !s.ok()) return s;
  if (CreateFromIdentifier(source, *p)) {
    p->feedback.phases = {{"SPIR-V", 0}, {"modules and layouts", 0}, {"pipelines", ms(t0, Clock::now())}};
    return std::unique_ptr<Program>(std::move(p));
  }
  auto module = source.spirv.empty() ? CompileGlsl(source.name, source.glsl, kOptimizeSpirv, info_.ieee_inf_nan)
                                     : LoadSpirv(source.name, source.spirv);
  if (!module.ok()) return module.status();
  if (!info_.int8_dot_products && SpirvDeclaresCapability(module->words, kSpirvDotProductCapability)) {
    return absl::FailedPreconditionError(fmt::format(
        "program '{}' takes integer dot products, which this device lacks (shaderIntegerDotProduct)", source.name));
  }
  if (absl::Status s = CheckProgramLimits(info_, source, module->workgroup_size); !s.ok()) return s;
  p->workgroup = module->workgroup_size;
  p->spirv_words = std::move(module->words);
  const auto t1 = Clock::now();
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = p->spirv_words.size() * 4;
  smi.pCode = p->spirv_words.data();
  MGD_VK(vkCreateShaderModule(device_, &smi, nullptr, &p->module));
  if (get_identifier_ != nullptr) {
    VkShaderModuleIdentifierEXT id{VK_STRUCTURE_TYPE_SHADER_MODULE_IDENTIFIER_EXT};
    get_identifier_(device_, p->module, &id);
    if (id.identifierSize > 0 && id.identifierSize <= VK_MAX_SHADER_MODULE_IDENTIFIER_SIZE_EXT) {
      p->identifier.assign(identifier_algorithm_.begin(), identifier_algorithm_.end());
      p->identifier.insert(p->identifier.end(), id.identifier, id.identifier + id.identifierSize);
    }
  }
  const auto t2 = Clock::now();
  VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  stage.module = p->module;
  stage.pName = "main";
  if (VkResult r = CreatePipeline(stage, 0, *p); r != VK_SUCCESS) return VkError("vkCreateComputePipelines", r);
  p->feedback.phases = {{"SPIR-V", ms(t0, t1)}, {"modules and layouts", ms(t1, t2)}, {"pipelines", ms(t2, Clock::now())}};
  return std::unique_ptr<Program>(std::move(p));
}

std::vector<uint8_t> VulkanDevice::PipelineCacheData() const {
  std::unique_lock<std::shared_mutex> lock(cache_mutex_);
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS) return {};
  std::vector<uint8_t> data(size);
  // VK_INCOMPLETE (the cache grew in between) cannot happen under the lock.
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return {};
  data.resize(size);
  return data;
}

absl::Status VulkanDevice::MergePipelineCacheData(const std::vector<uint8_t>& data) {
  if (data.empty()) return absl::OkStatus();
  VkPipelineCacheHeaderVersionOne header{};
  if (data.size() < sizeof(header)) {
    return absl::InvalidArgumentError(fmt::format("pipeline cache data: {} bytes, shorter than its header", data.size()));
  }
  std::memcpy(&header, data.data(), sizeof(header));
  if (header.headerSize < sizeof(header) || header.headerSize > data.size()) {
    return absl::InvalidArgumentError(fmt::format("pipeline cache data: header size {} of {} bytes", header.headerSize, data.size()));
  }
  if (header.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
    return absl::InvalidArgumentError(fmt::format("pipeline cache data: header version {}", static_cast<int>(header.headerVersion)));
  }
  if (header.vendorID != cache_vendor_ || header.deviceID != cache_device_) {
    return absl::InvalidArgumentError(fmt::format("pipeline cache data: made by device {:04x}:{:04x}, this is {:04x}:{:04x}",
                                                  header.vendorID, header.deviceID, cache_vendor_, cache_device_));
  }
  if (std::memcmp(header.pipelineCacheUUID, cache_uuid_.data(), VK_UUID_SIZE) != 0) {
    return absl::InvalidArgumentError("pipeline cache data: made by another driver version (pipelineCacheUUID differs)");
  }
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  pci.initialDataSize = data.size();
  pci.pInitialData = data.data();
  VkPipelineCache loaded = VK_NULL_HANDLE;
  MGD_VK(vkCreatePipelineCache(device_, &pci, nullptr, &loaded));
  std::unique_lock<std::shared_mutex> lock(cache_mutex_);
  const VkResult merged = vkMergePipelineCaches(device_, pipeline_cache_, 1, &loaded);
  vkDestroyPipelineCache(device_, loaded, nullptr);
  if (merged != VK_SUCCESS) return VkError("vkMergePipelineCaches", merged);
  return absl::OkStatus();
}

void VulkanDevice::WarmUpLayouts() {
  layouts_warm_up_ = std::thread([this] {
    VulkanProgram unused(device_, "layouts warm-up");
    (void)SharedLayouts(3, 0, unused);  // a failure here is met again, and reported, by the first program
  });
}

absl::Status VulkanDevice::SharedLayouts(uint32_t num_bindings, uint32_t push_constant_bytes, VulkanProgram& p) {
  std::lock_guard<std::mutex> lock(layouts_mutex_);
  auto [it, added] = layouts_.try_emplace({num_bindings, push_constant_bytes});
  if (added) {
    std::vector<VkDescriptorSetLayoutBinding> bindings(num_bindings);
    for (uint32_t i = 0; i < num_bindings; ++i) {
      bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo dsl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dsl.bindingCount = num_bindings;
    dsl.pBindings = bindings.data();
    VkResult r = vkCreateDescriptorSetLayout(device_, &dsl, nullptr, &it->second.set);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &it->second.set;
    pl.pushConstantRangeCount = push_constant_bytes > 0 ? 1 : 0;
    pl.pPushConstantRanges = &range;
    if (r == VK_SUCCESS) r = vkCreatePipelineLayout(device_, &pl, nullptr, &it->second.pipeline);
    if (r != VK_SUCCESS) {
      if (it->second.set != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, it->second.set, nullptr);
      layouts_.erase(it);
      return VkError("creating the pipeline layout", r);
    }
  }
  p.set_layout = it->second.set;
  p.pipeline_layout = it->second.pipeline;
  return absl::OkStatus();
}

VkResult VulkanDevice::CreatePipeline(const VkPipelineShaderStageCreateInfo& stage, VkPipelineCreateFlags flags, VulkanProgram& p) {
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.flags = flags;
  ci.stage = stage;
  ci.layout = p.pipeline_layout;
  VkPipelineCreationFeedback whole{}, stage_feedback{};
  VkPipelineCreationFeedbackCreateInfo feedback{VK_STRUCTURE_TYPE_PIPELINE_CREATION_FEEDBACK_CREATE_INFO};
  feedback.pPipelineCreationFeedback = &whole;
  feedback.pipelineStageCreationFeedbackCount = 1;
  feedback.pPipelineStageCreationFeedbacks = &stage_feedback;
  if (device_api_ >= VK_API_VERSION_1_3) ci.pNext = &feedback;
  VkResult r;
  {
    std::shared_lock<std::shared_mutex> lock(cache_mutex_);  // many creations at once; no merge meanwhile
    r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p.pipeline);
  }
  if (r != VK_SUCCESS) p.pipeline = VK_NULL_HANDLE;
  if ((whole.flags & VK_PIPELINE_CREATION_FEEDBACK_VALID_BIT) != 0) {
    p.feedback.driver_known = true;
    p.feedback.cache_hit = (whole.flags & VK_PIPELINE_CREATION_FEEDBACK_APPLICATION_PIPELINE_CACHE_HIT_BIT) != 0;
    p.feedback.driver_ms = static_cast<double>(whole.duration) / 1e6;
  }
  return r;
}

bool VulkanDevice::CreateFromIdentifier(const ProgramSource& source, VulkanProgram& p) {
  const std::vector<uint8_t>& tagged = source.binary;
  if (get_identifier_ == nullptr || source.spirv.empty() || tagged.size() <= VK_UUID_SIZE ||
      tagged.size() > VK_UUID_SIZE + VK_MAX_SHADER_MODULE_IDENTIFIER_SIZE_EXT ||
      std::memcmp(tagged.data(), identifier_algorithm_.data(), VK_UUID_SIZE) != 0) {
    return false;
  }
  const std::array<uint32_t, 3> workgroup = SpirvLocalSize(source.spirv);
  if (!CheckProgramLimits(info_, source, workgroup).ok()) return false;
  VkPipelineShaderStageModuleIdentifierCreateInfoEXT id{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_MODULE_IDENTIFIER_CREATE_INFO_EXT};
  id.identifierSize = static_cast<uint32_t>(tagged.size() - VK_UUID_SIZE);
  id.pIdentifier = tagged.data() + VK_UUID_SIZE;
  VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  stage.pNext = &id;
  stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  stage.pName = "main";
  if (CreatePipeline(stage, VK_PIPELINE_CREATE_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT, p) != VK_SUCCESS) return false;
  p.workgroup = workgroup;
  p.spirv_words = source.spirv;
  p.identifier = tagged;
  p.from_identifier = true;
  return true;
}

}  // namespace mgd::gpu::vulkan
