// The C API's apps' GPU buffers and sync objects (include/mgd/c_api.h):
// binding buffers to inputs and outputs, and the fences of an invoke.
#include <fmt/format.h>

#include "interpreter/c_api_parts.h"

namespace mgd::c_api {
namespace {

absl::StatusOr<GpuSync> SyncOf(const MgdSync& c, const char* role, int32_t i) {
  if (c.type < kMgdSyncVulkanSemaphore || c.type > kMgdSyncEgl) {
    return absl::InvalidArgumentError(fmt::format("{} sync {}: type {} is not an MgdSyncType", role, i, static_cast<int>(c.type)));
  }
  GpuSync s;
  s.type = static_cast<GpuSync::Type>(c.type);
  s.handle = c.handle;
  s.value = c.value;
  s.fd = c.fd;
  return s;
}

absl::Status ReadList(const MgdSync* list, int32_t count, const char* role, std::vector<GpuSync>& out) {
  if (count < 0 || (count > 0 && list == nullptr)) {
    return absl::InvalidArgumentError(fmt::format("{} syncs: {} of them at {}", role, count, list == nullptr ? "NULL" : "a list"));
  }
  for (int32_t i = 0; i < count; ++i) {
    absl::StatusOr<GpuSync> s = SyncOf(list[i], role, i);
    if (!s.ok()) return s.status();
    out.push_back(*s);
  }
  return absl::OkStatus();
}

bool Given(const MgdInterpreter* interpreter, const char* function) {
  if (interpreter != nullptr) return true;
  kStderr(fmt::format("{}: interpreter is NULL", function));
  return false;
}

MgdStatus Report(const MgdInterpreter& interpreter, const char* function, const absl::Status& status) {
  if (status.ok()) return kMgdOk;
  interpreter.reporter(fmt::format("{}: {}", function, std::string(status.message())));
  return kMgdError;
}

absl::StatusOr<int> TensorOf(const MgdInterpreter& interpreter, bool output, int32_t index) {
  const Interpreter& in = *interpreter.interpreter;
  const size_t count = output ? in.num_outputs() : in.num_inputs();
  if (index < 0 || static_cast<size_t>(index) >= count) {
    return absl::InvalidArgumentError(fmt::format("{} {} does not exist (the model has {})", output ? "output" : "input",
                                                  index, count));
  }
  return (output ? in.graph().outputs : in.graph().inputs)[static_cast<size_t>(index)];
}

MgdStatus Bind(MgdInterpreter* interpreter, bool output, int32_t index, const MgdGpuBuffer* buffer, const char* function) {
  if (!Given(interpreter, function)) return kMgdError;
  absl::StatusOr<int> tensor = TensorOf(*interpreter, output, index);
  if (!tensor.ok()) return Report(*interpreter, function, tensor.status());
  if (buffer == nullptr) return Report(*interpreter, function, interpreter->interpreter->BindBuffer(*tensor, std::nullopt));
  absl::StatusOr<GpuBuffer> b = ReadGpuBuffer(*buffer);
  if (!b.ok()) return Report(*interpreter, function, b.status());
  const GpuLayout layout = buffer->layout == kMgdGpuLayoutBhwc ? GpuLayout::kBhwc : GpuLayout::kPhwc4;
  return Report(*interpreter, function, interpreter->interpreter->BindBuffer(*tensor, *b, layout));
}

}  // namespace

absl::StatusOr<GpuBuffer> ReadGpuBuffer(const MgdGpuBuffer& buffer) {
  if (buffer.type < kMgdGpuBufferVulkan || buffer.type > kMgdGpuBufferGl) {
    return absl::InvalidArgumentError(fmt::format("type {} is not an MgdGpuBufferType", static_cast<int>(buffer.type)));
  }
  if (buffer.layout != kMgdGpuLayoutBhwc && buffer.layout != kMgdGpuLayoutPhwc4) {
    return absl::InvalidArgumentError(fmt::format("layout {} is not an MgdGpuLayout", static_cast<int>(buffer.layout)));
  }
  GpuBuffer b;
  b.type = static_cast<GpuBuffer::Type>(buffer.type);
  b.handle = buffer.handle;
  b.fd = buffer.fd;
  b.offset = buffer.offset;
  b.bytes = buffer.bytes;
  b.memory_bytes = buffer.memory_bytes;
  b.memory_type = buffer.memory_type;
  return b;
}

absl::Status CFences::Read(const MgdFences* c) {
  if (c == nullptr) return absl::OkStatus();
  if (absl::Status s = ReadList(c->wait, c->num_wait, "wait", fences.wait); !s.ok()) return s;
  if (absl::Status s = ReadList(c->signal, c->num_signal, "signal", fences.signal); !s.ok()) return s;
  if (c->signal_new != nullptr) {
    absl::StatusOr<GpuSync> s = SyncOf(*c->signal_new, "signal_new", 0);
    if (!s.ok()) return s.status();
    made = *s;
    made.handle = 0;
    made.fd = -1;
    fences.signal_new = &made;
    out = c->signal_new;
  }
  return absl::OkStatus();
}

void CFences::WriteBack() const {
  if (out == nullptr) return;
  out->handle = made.handle;
  out->fd = made.fd;
}

}  // namespace mgd::c_api

using mgd::c_api::Bind;

extern "C" {

MgdStatus MgdInterpreterBindInputBuffer(MgdInterpreter* interpreter, int32_t index, const MgdGpuBuffer* buffer) {
  return Bind(interpreter, false, index, buffer, "MgdInterpreterBindInputBuffer");
}

MgdStatus MgdInterpreterBindOutputBuffer(MgdInterpreter* interpreter, int32_t index, const MgdGpuBuffer* buffer) {
  return Bind(interpreter, true, index, buffer, "MgdInterpreterBindOutputBuffer");
}

MgdStatus MgdInterpreterGetGpuBufferBytes(const MgdInterpreter* interpreter, int32_t is_output, int32_t index,
                                          MgdGpuLayout layout, uint64_t* bytes, int32_t* half) {
  static constexpr const char* kFunction = "MgdInterpreterGetGpuBufferBytes";
  if (!mgd::c_api::Given(interpreter, kFunction)) return kMgdError;
  absl::StatusOr<int> tensor = mgd::c_api::TensorOf(*interpreter, is_output != 0, index);
  absl::StatusOr<mgd::GpuBufferNeeds> needs = tensor.ok() ? interpreter->interpreter->BufferNeeds(*tensor)
                                                          : absl::StatusOr<mgd::GpuBufferNeeds>(tensor.status());
  if (needs.ok() && bytes == nullptr) needs = absl::InvalidArgumentError("bytes is NULL");
  if (!needs.ok()) return mgd::c_api::Report(*interpreter, kFunction, needs.status());
  *bytes = layout == kMgdGpuLayoutPhwc4 ? needs->phwc4_bytes : needs->bhwc_bytes;
  if (half != nullptr) *half = layout == kMgdGpuLayoutPhwc4 && needs->phwc4_half ? 1 : 0;
  return kMgdOk;
}

}  // extern "C"
