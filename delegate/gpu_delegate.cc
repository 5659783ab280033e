#include "delegate/gpu_delegate.h"

#include <fmt/format.h>

#include <map>

#include "layout/phwc4.h"
#include "shaders/generator.h"
#include "shaders/layout_conversion.h"

namespace mgd {
namespace {

shaders::Dialect DialectOf(gpu::Api api) { return api == gpu::Api::kVulkan ? shaders::Dialect::kVulkan : shaders::Dialect::kGles; }

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// One compiled partition: its buffers, programs and the recording.
class GpuKernel : public DelegateKernel {
 public:
  explicit GpuKernel(gpu::Device& device) : device_(device) {}

  absl::Status Invoke(const std::vector<TensorRef*>& inputs, const std::vector<TensorRef*>& outputs) override {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (absl::Status s = device_.Upload(*input_buffers[i], inputs[i]->data, inputs[i]->bytes); !s.ok()) return s;
    }
    if (absl::Status s = device_.Run(*recording); !s.ok()) return s;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (absl::Status s = device_.Download(*output_buffers[i], outputs[i]->data, outputs[i]->bytes); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  gpu::Device& device_;
  std::vector<std::unique_ptr<gpu::Buffer>> buffers;     // everything the recording binds
  std::vector<gpu::Buffer*> input_buffers, output_buffers;  // BHWC user-side buffers
  std::vector<std::unique_ptr<gpu::Program>> programs;
  std::unique_ptr<gpu::Recording> recording;
};

}  // namespace

GpuDelegate::GpuDelegate(GpuDelegateOptions options, std::unique_ptr<gpu::Device> device)
    : options_(std::move(options)), device_(std::move(device)) {}
GpuDelegate::~GpuDelegate() = default;

absl::StatusOr<std::unique_ptr<GpuDelegate>> GpuDelegate::Create(const GpuDelegateOptions& options) {
  gpu::DeviceOptions device_options;
  device_options.selector = options.device;
  device_options.validation = options.validation;
  device_options.clamp_limits = options.clamp_limits;
  auto device = gpu::CreateDevice(options.api, device_options);
  if (!device.ok()) return device.status();
  return std::unique_ptr<GpuDelegate>(new GpuDelegate(options, std::move(*device)));
}

std::string GpuDelegate::name() const { return fmt::format("gpu-{}", gpu::ApiName(options_.api)); }

NodeSupport GpuDelegate::IsNodeSupported(const Graph& graph, int node_index) {
  const Node& node = graph.nodes[static_cast<size_t>(node_index)];
  for (int t : node.inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
    if (!tensor.is_constant && tensor.type != DataType::kFloat32) return {false, "non-float activations stay on the CPU"};
  }
  shaders::NodeContext ctx{&graph, node_index, &node, false};
  auto shader = shaders::GenerateShader(ctx);
  if (!shader.ok()) return {false, Message(shader.status())};
  return {true, ""};
}

absl::StatusOr<std::unique_ptr<DelegateKernel>> GpuDelegate::Prepare(const Graph& graph, const Partition& partition) {
  auto kernel = std::make_unique<GpuKernel>(*device_);
  std::map<int, gpu::Buffer*> phwc4;  // tensor -> its PHWC4 buffer
  std::vector<gpu::Dispatch> dispatches;
  const shaders::Dialect dialect = DialectOf(options_.api);

  auto new_buffer = [&](size_t bytes) -> absl::StatusOr<gpu::Buffer*> {
    auto buffer = device_->CreateBuffer(std::max<size_t>(bytes, 4));
    if (!buffer.ok()) return buffer.status();
    kernel->buffers.push_back(std::move(*buffer));
    return kernel->buffers.back().get();
  };
  auto program_for = [&](const shaders::ShaderCode& code, uint32_t bindings) -> absl::StatusOr<gpu::Program*> {
    auto program = device_->CreateProgram({code.name, shaders::Emit(dialect, code), bindings, shaders::ParamsBytes(code), 0});
    if (!program.ok()) return program.status();
    kernel->programs.push_back(std::move(*program));
    return kernel->programs.back().get();
  };
  auto activation = [&](int t) -> absl::StatusOr<gpu::Buffer*> {
    auto it = phwc4.find(t);
    if (it != phwc4.end()) return it->second;
    auto shape = shaders::ToBhwc(graph.tensors[static_cast<size_t>(t)].shape);
    if (!shape.ok()) return shape.status();
    auto buffer = new_buffer(shape->phwc4_elements() * 4);
    if (!buffer.ok()) return buffer.status();
    phwc4[t] = *buffer;
    return *buffer;
  };

  // A user-side BHWC buffer for tensor `t` and the dispatch converting it to
  // (inbound) or from (outbound) the tensor's PHWC4 buffer.
  auto edge = [&](int t, bool inbound) -> absl::StatusOr<gpu::Buffer*> {
    auto shape = shaders::ToBhwc(graph.tensors[static_cast<size_t>(t)].shape);
    if (!shape.ok()) return shape.status();
    auto user = new_buffer(shape->elements() * 4);
    auto inside = activation(t);
    if (!user.ok()) return user.status();
    if (!inside.ok()) return inside.status();
    const shaders::ConversionShader conversion =
        inbound ? shaders::BhwcToPhwc4Shader(*shape) : shaders::Phwc4ToBhwcShader(*shape);
    auto program = program_for(conversion.code, 2);
    if (!program.ok()) return program.status();
    gpu::Buffer* from = inbound ? *user : *inside;
    gpu::Buffer* to = inbound ? *inside : *user;
    dispatches.push_back({*program, {{from, gpu::Access::kRead}, {to, gpu::Access::kWrite}}, {}, conversion.groups});
    return *user;
  };

  for (int t : partition.inputs) {
    auto user = edge(t, /*inbound=*/true);
    if (!user.ok()) return user.status();
    kernel->input_buffers.push_back(*user);
  }
  // The nodes, in order.
  for (int n : partition.nodes) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    shaders::NodeContext ctx{&graph, n, &node, false};
    auto shader = shaders::GenerateShader(ctx);
    if (!shader.ok()) return absl::InternalError(fmt::format("{}: {}", NodeLabel(graph, n), Message(shader.status())));
    gpu::Dispatch d;
    for (int position : shader->activation_inputs) {
      auto buffer = activation(node.inputs[static_cast<size_t>(position)]);
      if (!buffer.ok()) return buffer.status();
      d.bindings.push_back({*buffer, gpu::Access::kRead});
    }
    for (int t : node.outputs) {
      auto buffer = activation(t);
      if (!buffer.ok()) return buffer.status();
      d.bindings.push_back({*buffer, gpu::Access::kWrite});
    }
    for (const std::vector<float>& constant : shader->constants) {
      auto buffer = new_buffer(constant.size() * 4);
      if (!buffer.ok()) return buffer.status();
      if (absl::Status s = device_->Upload(**buffer, constant.data(), constant.size() * 4); !s.ok()) return s;
      d.bindings.push_back({*buffer, gpu::Access::kRead});
    }
    auto program = program_for(shader->code, static_cast<uint32_t>(d.bindings.size()));
    if (!program.ok()) return absl::InternalError(fmt::format("{}: {}", NodeLabel(graph, n), Message(program.status())));
    d.program = *program;
    d.push_constants = shader->params;
    d.groups = shader->groups;
    dispatches.push_back(std::move(d));
  }
  for (int t : partition.outputs) {
    auto user = edge(t, /*inbound=*/false);
    if (!user.ok()) return user.status();
    kernel->output_buffers.push_back(*user);
  }
  auto recording = device_->Record(dispatches);
  if (!recording.ok()) return recording.status();
  kernel->recording = std::move(*recording);
  return std::unique_ptr<DelegateKernel>(std::move(kernel));
}

}  // namespace mgd
