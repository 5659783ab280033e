// The C API over the C++ interpreter. MgdTensor* is a TensorRef* seen
// through an opaque type; custom op and delegate structs are wrapped into the
// C++ Kernel and Delegate interfaces.
#include "mgd/c_api.h"

#include <fmt/format.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "interpreter/interpreter.h"
#include "model/reader.h"

struct MgdModel {
  mgd::Graph graph;
};

struct MgdInterpreterOptions {
  mgd::OpResolver resolver;
  std::vector<MgdDelegate*> delegates;
  int32_t max_partitions = 0;
  MgdErrorReporter reporter = nullptr;
  void* reporter_data = nullptr;
};

struct MgdInterpreter {
  std::unique_ptr<mgd::Interpreter> interpreter;
  std::vector<std::unique_ptr<mgd::Delegate>> delegates;
  MgdErrorReporter reporter = nullptr;
  void* reporter_data = nullptr;
};

struct MgdOpContext {
  mgd::KernelContext* kernel = nullptr;
  bool preparing = false;
  std::string error;
};

struct MgdOpNode {
  mgd::KernelContext* kernel = nullptr;
  void* user_data = nullptr;
};

namespace {

void Report(MgdErrorReporter reporter, void* data, const std::string& message) {
  if (reporter != nullptr) {
    reporter(data, message.c_str());
  } else {
    std::fprintf(stderr, "mgd: %s\n", message.c_str());
  }
}

mgd::TensorRef* Ref(MgdTensor* t) { return reinterpret_cast<mgd::TensorRef*>(t); }
const mgd::TensorRef* Ref(const MgdTensor* t) { return reinterpret_cast<const mgd::TensorRef*>(t); }
MgdTensor* Opaque(mgd::TensorRef* t) { return reinterpret_cast<MgdTensor*>(t); }

// A custom op given as a C registration.
class RegistrationKernel : public mgd::Kernel {
 public:
  RegistrationKernel(const MgdRegistration* registration, const mgd::Node& node)
      : reg_(registration), options_(std::get<mgd::CustomAttributes>(node.attributes).options) {}
  ~RegistrationKernel() override {
    if (initialized_ && reg_->free != nullptr) {
      MgdOpContext context;
      reg_->free(&context, node_.user_data);
    }
  }

  absl::Status Prepare(mgd::KernelContext& ctx) override {
    MgdOpContext context{&ctx, true, {}};
    node_.kernel = &ctx;
    if (!initialized_) {
      if (reg_->init != nullptr) {
        node_.user_data = reg_->init(&context, reinterpret_cast<const char*>(options_.data()), options_.size());
      }
      initialized_ = true;
    }
    if (reg_->prepare != nullptr && reg_->prepare(&context, &node_) != kMgdOk) {
      return ctx.Error(context.error.empty() ? "custom op prepare failed" : context.error);
    }
    return absl::OkStatus();
  }

  absl::Status Invoke(mgd::KernelContext& ctx) override {
    MgdOpContext context{&ctx, false, {}};
    node_.kernel = &ctx;
    if (reg_->invoke == nullptr || reg_->invoke(&context, &node_) != kMgdOk) {
      return ctx.Error(context.error.empty() ? "custom op invoke failed" : context.error);
    }
    return absl::OkStatus();
  }

 private:
  const MgdRegistration* reg_;
  std::vector<uint8_t> options_;
  MgdOpNode node_;
  bool initialized_ = false;
};

class CDelegateKernel : public mgd::DelegateKernel {
 public:
  CDelegateKernel(MgdDelegate* delegate, void* kernel) : delegate_(delegate), kernel_(kernel) {}
  ~CDelegateKernel() override {
    if (delegate_->free_kernel != nullptr) delegate_->free_kernel(delegate_->data, kernel_);
  }
  absl::Status Invoke(const std::vector<mgd::TensorRef*>& inputs, const std::vector<mgd::TensorRef*>& outputs) override {
    std::vector<MgdTensor*> in, out;
    for (auto* t : inputs) in.push_back(Opaque(t));
    for (auto* t : outputs) out.push_back(Opaque(t));
    if (delegate_->invoke(delegate_->data, kernel_, in.data(), static_cast<int32_t>(in.size()), out.data(),
                          static_cast<int32_t>(out.size())) != kMgdOk) {
      return absl::InternalError(fmt::format("delegate {} failed to invoke", delegate_->name ? delegate_->name : "?"));
    }
    return absl::OkStatus();
  }

 private:
  MgdDelegate* delegate_;
  void* kernel_;
};

class CDelegate : public mgd::Delegate {
 public:
  explicit CDelegate(MgdDelegate* delegate) : d_(delegate) {}
  std::string name() const override { return d_->name != nullptr ? d_->name : "delegate"; }

  mgd::NodeSupport IsNodeSupported(const mgd::Graph& graph, int node_index) override {
    const mgd::Node& node = graph.nodes[static_cast<size_t>(node_index)];
    const auto* custom = std::get_if<mgd::CustomAttributes>(&node.attributes);
    char reason[256] = "not supported";
    const int ok = d_->is_node_supported(d_->data, node_index, static_cast<int32_t>(node.op),
                                         custom ? custom->name.c_str() : nullptr, reason, sizeof reason);
    reason[sizeof reason - 1] = '\0';
    return {ok != 0, ok != 0 ? "" : reason};
  }

  absl::StatusOr<std::unique_ptr<mgd::DelegateKernel>> Prepare(const mgd::Graph&, const mgd::Partition& p) override {
    char error[512] = "prepare failed";
    std::vector<int32_t> nodes(p.nodes.begin(), p.nodes.end()), ins(p.inputs.begin(), p.inputs.end()),
        outs(p.outputs.begin(), p.outputs.end());
    void* kernel = d_->prepare(d_->data, nodes.data(), static_cast<int32_t>(nodes.size()), ins.data(),
                               static_cast<int32_t>(ins.size()), outs.data(), static_cast<int32_t>(outs.size()), error,
                               sizeof error);
    error[sizeof error - 1] = '\0';
    if (kernel == nullptr) return absl::InternalError(error);
    return std::unique_ptr<mgd::DelegateKernel>(new CDelegateKernel(d_, kernel));
  }

 private:
  MgdDelegate* d_;
};

// mgd's own delegates behind the C API: the interpreter talks to them
// directly (they need the graph, which the C callbacks do not carry).
class BorrowedDelegate : public mgd::Delegate {
 public:
  explicit BorrowedDelegate(mgd::Delegate* d) : d_(d) {}
  std::string name() const override { return d_->name(); }
  mgd::NodeSupport IsNodeSupported(const mgd::Graph& graph, int node_index) override {
    return d_->IsNodeSupported(graph, node_index);
  }
  absl::StatusOr<std::unique_ptr<mgd::DelegateKernel>> Prepare(const mgd::Graph& graph, const mgd::Partition& p) override {
    return d_->Prepare(graph, p);
  }

 private:
  mgd::Delegate* d_;
};

MgdModel* CreateModel(absl::StatusOr<mgd::Graph> graph, MgdErrorReporter reporter, void* data) {
  if (!graph.ok()) {
    Report(reporter, data, std::string(graph.status().message()));
    return nullptr;
  }
  return new MgdModel{std::move(*graph)};
}

}  // namespace

extern "C" {

MgdModel* MgdModelCreate(const void* model_data, size_t model_size) {
  return MgdModelCreateWithErrorReporter(model_data, model_size, nullptr, nullptr);
}

MgdModel* MgdModelCreateWithErrorReporter(const void* model_data, size_t model_size, MgdErrorReporter reporter,
                                          void* user_data) {
  return CreateModel(mgd::ReadModel(static_cast<const uint8_t*>(model_data), model_size, "<buffer>"), reporter,
                     user_data);
}

MgdModel* MgdModelCreateFromFile(const char* model_path) {
  return MgdModelCreateFromFileWithErrorReporter(model_path, nullptr, nullptr);
}

MgdModel* MgdModelCreateFromFileWithErrorReporter(const char* model_path, MgdErrorReporter reporter, void* user_data) {
  if (model_path == nullptr) {
    Report(reporter, user_data, "model path is NULL");
    return nullptr;
  }
  return CreateModel(mgd::ReadModelFile(model_path), reporter, user_data);
}

void MgdModelDelete(MgdModel* model) { delete model; }

int32_t MgdOpNodeNumInputs(const MgdOpNode* node) { return static_cast<int32_t>(node->kernel->inputs.size()); }
int32_t MgdOpNodeNumOutputs(const MgdOpNode* node) { return static_cast<int32_t>(node->kernel->outputs.size()); }

MgdTensor* MgdOpNodeGetInput(const MgdOpNode* node, int32_t index) {
  if (index < 0 || index >= MgdOpNodeNumInputs(node)) return nullptr;
  return Opaque(node->kernel->inputs[static_cast<size_t>(index)]);
}

MgdTensor* MgdOpNodeGetOutput(const MgdOpNode* node, int32_t index) {
  if (index < 0 || index >= MgdOpNodeNumOutputs(node)) return nullptr;
  return Opaque(node->kernel->outputs[static_cast<size_t>(index)]);
}

void* MgdOpNodeGetUserData(const MgdOpNode* node) { return node->user_data; }

MgdStatus MgdOpContextResizeTensor(MgdOpContext* context, MgdTensor* tensor, const int32_t* dims, int32_t num_dims) {
  if (!context->preparing) {
    context->error = "tensors can only be resized during prepare";
    return kMgdError;
  }
  bool is_output = false;
  for (auto* t : context->kernel->outputs) is_output = is_output || Opaque(t) == tensor;
  if (!is_output || num_dims < 0 || num_dims > 8 || (num_dims > 0 && dims == nullptr)) {
    context->error = "only the node's own outputs can be resized, to rank 0..8";
    return kMgdError;
  }
  for (int32_t i = 0; i < num_dims; ++i) {
    if (dims[i] < 0) {
      context->error = "a dimension is negative";
      return kMgdError;
    }
  }
  Ref(tensor)->shape.assign(dims, dims + num_dims);
  return kMgdOk;
}

void MgdOpContextReportError(MgdOpContext* context, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  context->error = buffer;
}

MgdInterpreterOptions* MgdInterpreterOptionsCreate(void) { return new MgdInterpreterOptions(); }
void MgdInterpreterOptionsDelete(MgdInterpreterOptions* options) { delete options; }

void MgdInterpreterOptionsAddDelegate(MgdInterpreterOptions* options, MgdDelegate* delegate) {
  if (delegate != nullptr) options->delegates.push_back(delegate);
}

void MgdInterpreterOptionsSetMaxDelegatedPartitions(MgdInterpreterOptions* options, int32_t max) {
  options->max_partitions = max < 0 ? 0 : max;
}

void MgdInterpreterOptionsAddCustomOp(MgdInterpreterOptions* options, const char* name,
                                      const MgdRegistration* registration, int32_t min_version, int32_t max_version) {
  if (name == nullptr || registration == nullptr) return;
  options->resolver.AddCustom(
      name, [registration](const mgd::Node& node) { return std::make_unique<RegistrationKernel>(registration, node); },
      min_version, max_version);
}

void MgdInterpreterOptionsSetErrorReporter(MgdInterpreterOptions* options, MgdErrorReporter reporter, void* user_data) {
  options->reporter = reporter;
  options->reporter_data = user_data;
}

MgdInterpreter* MgdInterpreterCreate(const MgdModel* model, const MgdInterpreterOptions* options) {
  MgdInterpreterOptions defaults;
  if (options == nullptr) options = &defaults;
  if (model == nullptr) {
    Report(options->reporter, options->reporter_data, "model is NULL");
    return nullptr;
  }
  auto result = std::make_unique<MgdInterpreter>();
  result->reporter = options->reporter;
  result->reporter_data = options->reporter_data;
  mgd::InterpreterOptions cpp;
  cpp.resolver = options->resolver;
  cpp.max_delegated_partitions = options->max_partitions;
  for (MgdDelegate* d : options->delegates) {
    if (d->native_delegate != nullptr) {
      result->delegates.push_back(std::make_unique<BorrowedDelegate>(static_cast<mgd::Delegate*>(d->native_delegate)));
    } else {
      result->delegates.push_back(std::make_unique<CDelegate>(d));
    }
    cpp.delegates.push_back(result->delegates.back().get());
  }
  MgdErrorReporter reporter = options->reporter;
  void* data = options->reporter_data;
  cpp.logger = [reporter, data](mgd::LogLevel level, const std::string& message) {
    if (level >= mgd::LogLevel::kWarning) Report(reporter, data, message);
  };
  auto interpreter = mgd::Interpreter::Create(model->graph, std::move(cpp));
  if (!interpreter.ok()) {
    Report(reporter, data, std::string(interpreter.status().message()));
    return nullptr;
  }
  result->interpreter = std::move(*interpreter);
  return result.release();
}

void MgdInterpreterDelete(MgdInterpreter* interpreter) { delete interpreter; }

int32_t MgdInterpreterGetInputTensorCount(const MgdInterpreter* interpreter) {
  return static_cast<int32_t>(interpreter->interpreter->num_inputs());
}

MgdTensor* MgdInterpreterGetInputTensor(const MgdInterpreter* interpreter, int32_t index) {
  if (index < 0 || index >= MgdInterpreterGetInputTensorCount(interpreter)) return nullptr;
  return Opaque(&interpreter->interpreter->input(static_cast<size_t>(index)));
}

int32_t MgdInterpreterGetOutputTensorCount(const MgdInterpreter* interpreter) {
  return static_cast<int32_t>(interpreter->interpreter->num_outputs());
}

const MgdTensor* MgdInterpreterGetOutputTensor(const MgdInterpreter* interpreter, int32_t index) {
  if (index < 0 || index >= MgdInterpreterGetOutputTensorCount(interpreter)) return nullptr;
  return reinterpret_cast<const MgdTensor*>(&interpreter->interpreter->output(static_cast<size_t>(index)));
}

MgdStatus MgdInterpreterAllocateTensors(MgdInterpreter* interpreter) {
  // Memory is planned at creation; kept for TFLite-shaped call sequences.
  return interpreter != nullptr ? kMgdOk : kMgdError;
}

MgdStatus MgdInterpreterInvoke(MgdInterpreter* interpreter) {
  if (interpreter == nullptr) return kMgdError;
  absl::Status s = interpreter->interpreter->Invoke();
  if (!s.ok()) {
    Report(interpreter->reporter, interpreter->reporter_data, std::string(s.message()));
    return kMgdError;
  }
  return kMgdOk;
}

MgdType MgdTensorType(const MgdTensor* tensor) {
  switch (Ref(tensor)->type) {
    case mgd::DataType::kFloat32: return kMgdFloat32;
    case mgd::DataType::kFloat16: return kMgdFloat16;
    case mgd::DataType::kInt32: return kMgdInt32;
    case mgd::DataType::kInt64: return kMgdInt64;
    case mgd::DataType::kInt8: return kMgdInt8;
    case mgd::DataType::kUInt8: return kMgdUInt8;
    case mgd::DataType::kBool: return kMgdBool;
  }
  return kMgdNoType;
}

int32_t MgdTensorNumDims(const MgdTensor* tensor) { return Ref(tensor)->rank(); }

int32_t MgdTensorDim(const MgdTensor* tensor, int32_t dim_index) {
  if (dim_index < 0 || dim_index >= Ref(tensor)->rank()) return -1;
  return Ref(tensor)->dim(dim_index);
}

size_t MgdTensorByteSize(const MgdTensor* tensor) { return Ref(tensor)->bytes; }
void* MgdTensorData(const MgdTensor* tensor) { return Ref(tensor)->data; }
const char* MgdTensorName(const MgdTensor* tensor) { return Ref(tensor)->name.c_str(); }

MgdStatus MgdTensorCopyFromBuffer(MgdTensor* tensor, const void* input_data, size_t input_data_size) {
  mgd::TensorRef* t = Ref(tensor);
  if (input_data_size != t->bytes || (t->bytes > 0 && (input_data == nullptr || t->data == nullptr))) {
    Report(nullptr, nullptr, fmt::format("tensor '{}': got {} bytes, expected {}", t->name, input_data_size, t->bytes));
    return kMgdError;
  }
  if (t->bytes > 0) std::memcpy(t->data, input_data, t->bytes);
  return kMgdOk;
}

MgdStatus MgdTensorCopyToBuffer(const MgdTensor* tensor, void* output_data, size_t output_data_size) {
  const mgd::TensorRef* t = Ref(tensor);
  if (output_data_size != t->bytes || (t->bytes > 0 && (output_data == nullptr || t->data == nullptr))) {
    Report(nullptr, nullptr, fmt::format("tensor '{}': buffer has {} bytes, expected {}", t->name, output_data_size, t->bytes));
    return kMgdError;
  }
  if (t->bytes > 0) std::memcpy(output_data, t->data, t->bytes);
  return kMgdOk;
}

}  // extern "C"
