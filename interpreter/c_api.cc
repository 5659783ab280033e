// The C API over the C++ interpreter. An MgdTensor is a view of one of the
// interpreter's TensorRefs that also knows where its errors go; custom op and
// delegate structs are wrapped into the C++ Kernel and Delegate interfaces.
//
// Every function checks its arguments: a NULL where an object is needed, an
// index out of range or a size that does not match is reported (to the
// error reporter of the object it concerns, else stderr) and answered with
// kMgdError, NULL, -1 or 0, never a crash.
#include "mgd/c_api.h"

#include <fmt/format.h>

#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <string>

#include "interpreter/c_api_parts.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"

namespace {

using namespace mgd::c_api;  // NOLINT(google-build-using-namespace): the C API's own parts

// Runs `body`; an exception (out of memory, say) is reported and answered
// with `failed` instead of unwinding into the app's C code.
template <typename T, typename F>
T NoThrow(const Reporter& report, const char* function, T failed, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    report(fmt::format("{}: unexpected failure: {}", function, e.what()));
  } catch (...) {
    report(fmt::format("{}: unexpected failure", function));
  }
  return failed;
}

MgdModel* CreateModel(absl::StatusOr<mgd::Graph> graph, const Reporter& report) {
  if (!graph.ok()) {
    report(std::string(graph.status().message()));
    return nullptr;
  }
  return new MgdModel{std::move(*graph)};
}

const Reporter& ReporterOf(const MgdTensor* t) { return t != nullptr ? *t->reporter : kStderr; }

// A tensor argument that must be there: reports `function: tensor is NULL`.
bool TensorGiven(const MgdTensor* tensor, const char* function) {
  if (tensor != nullptr && tensor->ref != nullptr) return true;
  ReporterOf(tensor)(fmt::format("{}: tensor is NULL", function));
  return false;
}

bool InterpreterGiven(const MgdInterpreter* interpreter, const char* function) {
  if (interpreter != nullptr) return true;
  kStderr(fmt::format("{}: interpreter is NULL", function));
  return false;
}

// The C arrays of an invoke with buffers, checked for NULLs (the sizes
// are the interpreter's to check).
struct Buffers {
  std::vector<mgd::InputBytes> inputs;
  std::vector<mgd::OutputBytes> outputs;
};
absl::StatusOr<Buffers> BuffersOf(const void* const* inputs, const size_t* input_sizes, int32_t num_inputs,
                                  void* const* outputs, const size_t* output_sizes, int32_t num_outputs) {
  if (num_inputs < 0 || num_outputs < 0) {
    return absl::InvalidArgumentError(fmt::format("{} inputs and {} outputs", num_inputs, num_outputs));
  }
  if ((num_inputs > 0 && (inputs == nullptr || input_sizes == nullptr)) ||
      (num_outputs > 0 && (outputs == nullptr || output_sizes == nullptr))) {
    return absl::InvalidArgumentError("an array of buffers or of their sizes is NULL");
  }
  Buffers b;
  for (int32_t i = 0; i < num_inputs; ++i) b.inputs.push_back({inputs[i], input_sizes[i]});
  for (int32_t i = 0; i < num_outputs; ++i) b.outputs.push_back({outputs[i], output_sizes[i]});
  return b;
}

MgdTiming ToC(const mgd::InvokeTiming& t) { return {t.total_ms, t.in_delegates_ms, t.device_ms.value_or(-1.0)}; }

void KeepTiming(MgdInterpreter& interpreter, const mgd::InvokeTiming& timing) {
  std::lock_guard<std::mutex> lock(interpreter.timing_mutex);
  interpreter.last_timing = timing;
}

bool NodeGiven(const MgdOpNode* node, const char* function) {
  if (node != nullptr) return true;
  kStderr(fmt::format("{}: node is NULL", function));
  return false;
}

// Whether `index` is within [0, count); reports which it is not.
bool InRange(int32_t index, size_t count, const char* what, const char* function, const Reporter& report) {
  if (index >= 0 && static_cast<size_t>(index) < count) return true;
  report(fmt::format("{}: {} {} is out of range (there are {})", function, what, index, count));
  return false;
}

// Whether `size` bytes may be copied between `tensor` and the app's
// `buffer`; reports why not.
bool CopyAllowed(const MgdTensor* tensor, const void* buffer, size_t size, const char* function, const char* buffer_name) {
  if (!TensorGiven(tensor, function)) return false;
  const mgd::TensorRef& t = *tensor->ref;
  const Reporter& report = *tensor->reporter;
  if (size != t.bytes) {
    report(fmt::format("{}: tensor '{}' has {} bytes, {} has {}", function, t.name, t.bytes, buffer_name, size));
    return false;
  }
  if (t.bytes > 0 && buffer == nullptr) {
    report(fmt::format("{}: {} is NULL (tensor '{}')", function, buffer_name, t.name));
    return false;
  }
  if (t.bytes > 0 && t.data == nullptr) {
    report(fmt::format("{}: tensor '{}' has no memory of its own", function, t.name));
    return false;
  }
  return true;
}

MgdInterpreter* CreateInterpreter(const MgdModel* model, const MgdInterpreterOptions* options) {
  if (model == nullptr) {
    options->reporter("MgdInterpreterCreate: model is NULL");
    return nullptr;
  }
  auto result = std::make_unique<MgdInterpreter>();
  result->reporter = options->reporter;
  mgd::InterpreterOptions cpp;
  cpp.resolver = options->resolver;
  cpp.max_delegated_partitions = options->max_partitions;
  cpp.partition_by_cost = options->partition_by_cost;
  cpp.check_finite = options->check_finite;
  cpp.max_in_flight = options->max_in_flight;
  cpp.measure_timing = options->measure_timing;
  for (MgdDelegate* d : options->delegates) {
    // Checked again: the app may have changed the struct since it was added.
    if (const std::string problem = DelegateProblem(*d); !problem.empty()) {
      options->reporter("MgdInterpreterCreate: " + problem);
      return nullptr;
    }
    if (d->native_delegate != nullptr) {
      result->delegates.push_back(NewBorrowedDelegate(static_cast<mgd::Delegate*>(d->native_delegate)));
    } else {
      result->delegates.push_back(NewCDelegate(d, &result->reporter));
    }
    cpp.delegates.push_back(result->delegates.back().get());
  }
  const Reporter report = options->reporter;
  cpp.logger = [report](mgd::LogLevel level, const std::string& message) {
    if (level >= mgd::LogLevel::kWarning) report(message);
  };
  auto interpreter = mgd::Interpreter::Create(model->graph, std::move(cpp));
  if (!interpreter.ok()) {
    report(std::string(interpreter.status().message()));
    return nullptr;
  }
  result->interpreter = std::move(*interpreter);
  for (size_t i = 0; i < result->interpreter->num_inputs(); ++i) {
    result->inputs.push_back({&result->interpreter->input(i), &result->reporter});
  }
  for (size_t i = 0; i < result->interpreter->num_outputs(); ++i) {
    result->outputs.push_back({const_cast<mgd::TensorRef*>(&result->interpreter->output(i)), &result->reporter});
  }
  return result.release();
}

}  // namespace

namespace {

MgdStatus InvokeWithBuffers(MgdInterpreter* interpreter, const void* const* inputs, const size_t* input_sizes,
                            int32_t num_inputs, void* const* outputs, const size_t* output_sizes, int32_t num_outputs,
                            const MgdFences* c_fences, const char* kFunction) {
  if (!InterpreterGiven(interpreter, kFunction)) return kMgdError;
  absl::StatusOr<Buffers> buffers = BuffersOf(inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs);
  absl::Status s = buffers.status();
  mgd::InvokeTiming timing;
  CFences fences;
  if (s.ok()) s = fences.Read(c_fences);
  if (s.ok()) {
    s = NoThrow(interpreter->reporter, kFunction, absl::InternalError("unexpected failure"), [&] {
      mgd::InvokeOptions options = interpreter->InvokeOptionsFor(&timing);
      options.fences = fences.fences;
      absl::Status ran = interpreter->interpreter->Invoke(buffers->inputs, buffers->outputs, options);
      fences.WriteBack();
      return ran;
    });
  }
  if (!s.ok()) {
    interpreter->reporter(fmt::format("{}: {}", kFunction, std::string(s.message())));
    return kMgdError;
  }
  KeepTiming(*interpreter, timing);
  return kMgdOk;
}

MgdInvokeEvent* InvokeAsync(MgdInterpreter* interpreter, const void* const* inputs, const size_t* input_sizes,
                            int32_t num_inputs, void* const* outputs, const size_t* output_sizes, int32_t num_outputs,
                            const MgdFences* c_fences, MgdInvokeCallback callback, void* user_data, const char* kFunction) {
  if (!InterpreterGiven(interpreter, kFunction)) return nullptr;
  absl::StatusOr<Buffers> buffers = BuffersOf(inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs);
  CFences fences;
  absl::Status given = buffers.status();
  if (given.ok()) given = fences.Read(c_fences);
  if (!given.ok()) {
    interpreter->reporter(fmt::format("{}: {}", kFunction, std::string(given.message())));
    return nullptr;
  }
  // A failed run is reported here, on the completion thread, before the
  // callback hears of it.
  const Reporter* report = &interpreter->reporter;
  mgd::InvokeCallback done = [report, callback, user_data, kFunction](const absl::Status& status) {
    if (!status.ok()) (*report)(std::string(kFunction) + ": " + std::string(status.message()));
    if (callback != nullptr) callback(user_data, status.ok() ? kMgdOk : kMgdError);
  };
  absl::StatusOr<std::shared_ptr<mgd::InvokeEvent>> event = NoThrow(
      interpreter->reporter, kFunction,
      absl::StatusOr<std::shared_ptr<mgd::InvokeEvent>>(absl::InternalError("unexpected failure")),
      [&] {
        mgd::InvokeOptions options = interpreter->InvokeOptionsFor(nullptr);
        options.fences = fences.fences;
        auto made = interpreter->interpreter->InvokeAsync(buffers->inputs, buffers->outputs, std::move(done), options);
        fences.WriteBack();
        return made;
      });
  if (!event.ok()) {
    interpreter->reporter(fmt::format("{}: {}", kFunction, std::string(event.status().message())));
    return nullptr;
  }
  return new MgdInvokeEvent{std::move(*event)};
}

}  // namespace

extern "C" {

MgdModel* MgdModelCreate(const void* model_data, size_t model_size) {
  return MgdModelCreateWithErrorReporter(model_data, model_size, nullptr, nullptr);
}

MgdModel* MgdModelCreateWithErrorReporter(const void* model_data, size_t model_size, MgdErrorReporter reporter,
                                          void* user_data) {
  const Reporter report{reporter, user_data};
  if (model_data == nullptr) {
    report("MgdModelCreate: model_data is NULL");
    return nullptr;
  }
  return NoThrow(report, "MgdModelCreate", static_cast<MgdModel*>(nullptr), [&] {
    return CreateModel(mgd::ReadModel(static_cast<const uint8_t*>(model_data), model_size, "<buffer>"), report);
  });
}

MgdModel* MgdModelCreateFromFile(const char* model_path) {
  return MgdModelCreateFromFileWithErrorReporter(model_path, nullptr, nullptr);
}

MgdModel* MgdModelCreateFromFileWithErrorReporter(const char* model_path, MgdErrorReporter reporter, void* user_data) {
  const Reporter report{reporter, user_data};
  if (model_path == nullptr) {
    report("MgdModelCreateFromFile: model_path is NULL");
    return nullptr;
  }
  return NoThrow(report, "MgdModelCreateFromFile", static_cast<MgdModel*>(nullptr),
                 [&] { return CreateModel(mgd::ReadModelFile(model_path), report); });
}

void MgdModelDelete(MgdModel* model) { delete model; }

int32_t MgdOpNodeNumInputs(const MgdOpNode* node) {
  return NodeGiven(node, "MgdOpNodeNumInputs") ? static_cast<int32_t>(node->inputs.size()) : 0;
}
int32_t MgdOpNodeNumOutputs(const MgdOpNode* node) {
  return NodeGiven(node, "MgdOpNodeNumOutputs") ? static_cast<int32_t>(node->outputs.size()) : 0;
}

MgdTensor* MgdOpNodeGetInput(const MgdOpNode* node, int32_t index) {
  if (!NodeGiven(node, "MgdOpNodeGetInput")) return nullptr;
  if (index < 0 || static_cast<size_t>(index) >= node->inputs.size()) return nullptr;
  MgdTensor& t = const_cast<MgdOpNode*>(node)->inputs[static_cast<size_t>(index)];
  return t.ref != nullptr ? &t : nullptr;
}

MgdTensor* MgdOpNodeGetOutput(const MgdOpNode* node, int32_t index) {
  if (!NodeGiven(node, "MgdOpNodeGetOutput")) return nullptr;
  if (index < 0 || static_cast<size_t>(index) >= node->outputs.size()) return nullptr;
  return &const_cast<MgdOpNode*>(node)->outputs[static_cast<size_t>(index)];
}

void* MgdOpNodeGetUserData(const MgdOpNode* node) {
  return NodeGiven(node, "MgdOpNodeGetUserData") ? node->user_data : nullptr;
}

MgdStatus MgdOpContextResizeTensor(MgdOpContext* context, MgdTensor* tensor, const int32_t* dims, int32_t num_dims) {
  if (context == nullptr || context->kernel == nullptr) {
    kStderr("MgdOpContextResizeTensor: context is NULL");
    return kMgdError;
  }
  if (!context->preparing) {
    context->error = "tensors can only be resized during prepare";
    return kMgdError;
  }
  bool is_output = false;
  for (auto* t : context->kernel->outputs) is_output = is_output || (tensor != nullptr && tensor->ref == t);
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
  tensor->ref->shape.assign(dims, dims + num_dims);
  return kMgdOk;
}

void MgdOpContextReportError(MgdOpContext* context, const char* format, ...) {
  if (context == nullptr) {
    kStderr("MgdOpContextReportError: context is NULL");
    return;
  }
  if (format == nullptr) {
    context->error = "(MgdOpContextReportError: format is NULL)";
    return;
  }
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  context->error = buffer;
}

MgdInterpreter* MgdInterpreterCreate(const MgdModel* model, const MgdInterpreterOptions* options) {
  const MgdInterpreterOptions defaults;
  if (options == nullptr) options = &defaults;
  return NoThrow(options->reporter, "MgdInterpreterCreate", static_cast<MgdInterpreter*>(nullptr),
                 [&] { return CreateInterpreter(model, options); });
}

void MgdInterpreterDelete(MgdInterpreter* interpreter) { delete interpreter; }

int32_t MgdInterpreterGetInputTensorCount(const MgdInterpreter* interpreter) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterGetInputTensorCount")) return 0;
  return static_cast<int32_t>(interpreter->inputs.size());
}

MgdTensor* MgdInterpreterGetInputTensor(const MgdInterpreter* interpreter, int32_t index) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterGetInputTensor")) return nullptr;
  if (!InRange(index, interpreter->inputs.size(), "input", "MgdInterpreterGetInputTensor", interpreter->reporter)) {
    return nullptr;
  }
  return const_cast<MgdTensor*>(&interpreter->inputs[static_cast<size_t>(index)]);
}

int32_t MgdInterpreterGetOutputTensorCount(const MgdInterpreter* interpreter) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterGetOutputTensorCount")) return 0;
  return static_cast<int32_t>(interpreter->outputs.size());
}

const MgdTensor* MgdInterpreterGetOutputTensor(const MgdInterpreter* interpreter, int32_t index) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterGetOutputTensor")) return nullptr;
  if (!InRange(index, interpreter->outputs.size(), "output", "MgdInterpreterGetOutputTensor", interpreter->reporter)) {
    return nullptr;
  }
  return &interpreter->outputs[static_cast<size_t>(index)];
}

MgdStatus MgdInterpreterAllocateTensors(MgdInterpreter* interpreter) {
  // Memory is planned at creation; kept for TFLite-shaped call sequences.
  return InterpreterGiven(interpreter, "MgdInterpreterAllocateTensors") ? kMgdOk : kMgdError;
}

MgdStatus MgdInterpreterInvoke(MgdInterpreter* interpreter) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterInvoke")) return kMgdError;
  mgd::InvokeTiming timing;
  absl::Status s = NoThrow(interpreter->reporter, "MgdInterpreterInvoke", absl::InternalError("unexpected failure"),
                           [&] { return interpreter->interpreter->Invoke(interpreter->InvokeOptionsFor(&timing)); });
  if (!s.ok()) {
    interpreter->reporter(std::string(s.message()));
    return kMgdError;
  }
  KeepTiming(*interpreter, timing);
  return kMgdOk;
}

MgdStatus MgdInterpreterResetVariableTensors(MgdInterpreter* interpreter) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterResetVariableTensors")) return kMgdError;
  interpreter->interpreter->ResetVariableTensors();
  return kMgdOk;
}

MgdStatus MgdInterpreterInvokeWithBuffers(MgdInterpreter* interpreter, const void* const* inputs,
                                           const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                           const size_t* output_sizes, int32_t num_outputs) {
  return InvokeWithBuffers(interpreter, inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs, nullptr,
                           "MgdInterpreterInvokeWithBuffers");
}

MgdStatus MgdInterpreterInvokeFenced(MgdInterpreter* interpreter, const void* const* inputs, const size_t* input_sizes,
                                     int32_t num_inputs, void* const* outputs, const size_t* output_sizes,
                                     int32_t num_outputs, const MgdFences* fences) {
  return InvokeWithBuffers(interpreter, inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs, fences,
                           "MgdInterpreterInvokeFenced");
}

MgdInvokeEvent* MgdInterpreterInvokeAsync(MgdInterpreter* interpreter, const void* const* inputs,
                                          const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                          const size_t* output_sizes, int32_t num_outputs, MgdInvokeCallback callback,
                                          void* user_data) {
  return InvokeAsync(interpreter, inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs, nullptr, callback,
                     user_data, "MgdInterpreterInvokeAsync");
}

MgdInvokeEvent* MgdInterpreterInvokeAsyncFenced(MgdInterpreter* interpreter, const void* const* inputs,
                                                const size_t* input_sizes, int32_t num_inputs, void* const* outputs,
                                                const size_t* output_sizes, int32_t num_outputs, const MgdFences* fences,
                                                MgdInvokeCallback callback, void* user_data) {
  return InvokeAsync(interpreter, inputs, input_sizes, num_inputs, outputs, output_sizes, num_outputs, fences, callback,
                     user_data, "MgdInterpreterInvokeAsyncFenced");
}

MgdStatus MgdInvokeEventWait(const MgdInvokeEvent* event, int64_t timeout_ns) {
  if (event == nullptr) {
    kStderr("MgdInvokeEventWait: event is NULL");
    return kMgdError;
  }
  if (timeout_ns < 0) {
    event->event->Wait();
  } else if (!event->event->WaitFor(std::chrono::nanoseconds(timeout_ns))) {
    return kMgdError;
  }
  return event->event->status().ok() ? kMgdOk : kMgdError;
}

int32_t MgdInvokeEventIsDone(const MgdInvokeEvent* event) {
  if (event == nullptr) {
    kStderr("MgdInvokeEventIsDone: event is NULL");
    return 0;
  }
  return event->event->done() ? 1 : 0;
}

void MgdInvokeEventDelete(MgdInvokeEvent* event) { delete event; }

void MgdInterpreterSetInvokeTimeout(MgdInterpreter* interpreter, int64_t timeout_ns) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterSetInvokeTimeout")) return;
  interpreter->timeout_ns.store(timeout_ns);
}

MgdStatus MgdInterpreterGetLastTiming(const MgdInterpreter* interpreter, MgdTiming* timing) {
  if (!InterpreterGiven(interpreter, "MgdInterpreterGetLastTiming")) return kMgdError;
  if (timing == nullptr) {
    interpreter->reporter("MgdInterpreterGetLastTiming: timing is NULL");
    return kMgdError;
  }
  std::lock_guard<std::mutex> lock(interpreter->timing_mutex);
  *timing = ToC(interpreter->last_timing);
  return kMgdOk;
}

MgdStatus MgdInvokeEventGetTiming(const MgdInvokeEvent* event, MgdTiming* timing) {
  if (event == nullptr || timing == nullptr) {
    kStderr("MgdInvokeEventGetTiming: event or timing is NULL");
    return kMgdError;
  }
  if (!event->event->done() || !event->event->status().ok()) {
    kStderr("MgdInvokeEventGetTiming: the invoke has not completed successfully");
    return kMgdError;
  }
  *timing = ToC(event->event->timing());
  return kMgdOk;
}

MgdType MgdTensorType(const MgdTensor* tensor) {
  if (!TensorGiven(tensor, "MgdTensorType")) return kMgdNoType;
  switch (tensor->ref->type) {
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

int32_t MgdTensorNumDims(const MgdTensor* tensor) {
  return TensorGiven(tensor, "MgdTensorNumDims") ? tensor->ref->rank() : -1;
}

int32_t MgdTensorDim(const MgdTensor* tensor, int32_t dim_index) {
  if (!TensorGiven(tensor, "MgdTensorDim")) return -1;
  if (!InRange(dim_index, tensor->ref->shape.size(), "dimension", "MgdTensorDim", *tensor->reporter)) return -1;
  return tensor->ref->dim(dim_index);
}

size_t MgdTensorByteSize(const MgdTensor* tensor) { return TensorGiven(tensor, "MgdTensorByteSize") ? tensor->ref->bytes : 0; }
void* MgdTensorData(const MgdTensor* tensor) { return TensorGiven(tensor, "MgdTensorData") ? tensor->ref->data : nullptr; }
const char* MgdTensorName(const MgdTensor* tensor) {
  return TensorGiven(tensor, "MgdTensorName") ? tensor->ref->name.c_str() : nullptr;
}

MgdStatus MgdTensorCopyFromBuffer(MgdTensor* tensor, const void* input_data, size_t input_data_size) {
  if (!CopyAllowed(tensor, input_data, input_data_size, "MgdTensorCopyFromBuffer", "input_data")) return kMgdError;
  if (input_data_size > 0) std::memcpy(tensor->ref->data, input_data, input_data_size);
  return kMgdOk;
}

MgdStatus MgdTensorCopyToBuffer(const MgdTensor* tensor, void* output_data, size_t output_data_size) {
  if (!CopyAllowed(tensor, output_data, output_data_size, "MgdTensorCopyToBuffer", "output_data")) return kMgdError;
  if (output_data_size > 0) std::memcpy(output_data, tensor->ref->data, output_data_size);
  return kMgdOk;
}

}  // extern "C"
