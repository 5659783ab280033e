// The C API's objects (the structs behind include/mgd/c_api.h's opaque
// types) and the adapters that turn C registrations and C delegates into the
// interpreter's Kernel and Delegate (c_api_adapters.cc). Private to
// interpreter/c_api*.cc and the pipeline C API (pipeline/c_api.cc), which
// takes delegates the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "mgd/c_api.h"

namespace mgd::c_api {

// Where a C object's errors go: the app's reporter, or stderr; inside a
// custom op, the op's error, which the interpreter reports with the node.
struct Reporter {
  MgdErrorReporter fn = nullptr;
  void* data = nullptr;
  std::string* capture = nullptr;

  void operator()(const std::string& message) const {
    if (capture != nullptr) {
      *capture = message;
    } else if (fn != nullptr) {
      fn(data, message.c_str());
    } else {
      std::fprintf(stderr, "mgd: %s\n", message.c_str());
    }
  }
};

inline const Reporter kStderr{};

// An invoke's C fences as the interpreter's (c_api_gpu_io.cc), and the new
// sync object written back to the app's MgdSync.
struct CFences {
  GpuFences fences;
  GpuSync made;
  MgdSync* out = nullptr;

  absl::Status Read(const MgdFences* c);  // NULL: none
  void WriteBack() const;
};

}  // namespace mgd::c_api

using mgd::c_api::Reporter;

struct MgdModel {
  mgd::Graph graph;
};

struct MgdInterpreterOptions {
  mgd::OpResolver resolver;
  std::vector<MgdDelegate*> delegates;
  int32_t max_partitions = 0;
  bool partition_by_cost = false;
  bool check_finite = false;
  int32_t max_in_flight = 2;
  bool measure_timing = false;
  Reporter reporter;
};

struct MgdTensor {
  mgd::TensorRef* ref = nullptr;
  const Reporter* reporter = &mgd::c_api::kStderr;
};

struct MgdInterpreter {
  // The interpreter goes first: its pending async invokes complete (and
  // report) and its kernels are freed while the reporter and the C
  // delegates' adapters still exist.
  ~MgdInterpreter() { interpreter.reset(); }

  std::unique_ptr<mgd::Interpreter> interpreter;
  std::vector<std::unique_ptr<mgd::Delegate>> delegates;
  Reporter reporter;
  std::vector<MgdTensor> inputs, outputs;
  std::atomic<int64_t> timeout_ns{0};  // MgdInterpreterSetInvokeTimeout; <= 0: none
  mutable std::mutex timing_mutex;
  mgd::InvokeTiming last_timing;  // of the last successful synchronous invoke

  mgd::InvokeOptions InvokeOptionsFor(mgd::InvokeTiming* timing) const {
    mgd::InvokeOptions o;
    if (const int64_t ns = timeout_ns.load(); ns > 0) o.timeout = std::chrono::nanoseconds(ns);
    o.timing = timing;
    return o;
  }
};

struct MgdInvokeEvent {
  std::shared_ptr<mgd::InvokeEvent> event;
};

struct MgdOpContext {
  mgd::KernelContext* kernel = nullptr;
  bool preparing = false;
  std::string error;
};

struct MgdOpNode {
  std::vector<MgdTensor> inputs, outputs;  // null refs for omitted optional inputs
  void* user_data = nullptr;
};

namespace mgd::c_api {

// A custom op given as a C registration.
std::unique_ptr<Kernel> NewRegistrationKernel(const MgdRegistration* registration, const Node& node);
// A C delegate's callbacks behind the Delegate interface.
std::unique_ptr<Delegate> NewCDelegate(MgdDelegate* delegate, const Reporter* reporter);
// One of mgd's own delegates behind the C API, which the interpreter talks
// to directly (it needs the graph, which the C callbacks do not carry).
std::unique_ptr<Delegate> NewBorrowedDelegate(Delegate* delegate);
// Why a C delegate cannot be used, or empty.
std::string DelegateProblem(const MgdDelegate& d);
// An app's MgdGpuBuffer as the interpreter takes it, its type and layout
// checked (c_api_gpu_io.cc).
absl::StatusOr<GpuBuffer> ReadGpuBuffer(const MgdGpuBuffer& buffer);

}  // namespace mgd::c_api
