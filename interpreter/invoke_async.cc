// Interpreter::InvokeAsync: invokes in flight, completed in the order they
// were made on one thread per interpreter. A graph that is one delegated
// partition whose kernel has slots is pipelined (each invoke in a slot of
// its own: inputs uploaded and work submitted by the caller, waited for and
// downloaded by the completion thread); any other graph runs its queued
// invokes one after another on that thread, from copies of their inputs.
#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <thread>

#include "interpreter/interpreter.h"
#include "model/status_macros.h"

namespace mgd {

void InvokeEvent::Wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  completed_.wait(lock, [&] { return status_.has_value(); });
}

bool InvokeEvent::WaitFor(std::chrono::nanoseconds timeout) const {
  if (timeout > std::chrono::hours(24 * 365)) {  // no limit (now + timeout could overflow)
    Wait();
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  return completed_.wait_for(lock, timeout, [&] { return status_.has_value(); });
}

bool InvokeEvent::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_.has_value();
}

absl::Status InvokeEvent::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_.has_value() ? *status_ : absl::UnavailableError("the invoke has not completed");
}

InvokeTiming InvokeEvent::timing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timing_;
}

void InvokeEvent::Complete(absl::Status status, const InvokeTiming& timing) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = std::move(status);
    timing_ = timing;
  }
  completed_.notify_all();
}

struct Interpreter::Async {
  struct Request {
    size_t slot = 0;                            // pipelined: the kernel's slot
    absl::Status started;                       // pipelined: how Start went
    std::vector<std::vector<uint8_t>> inputs;   // one after another: the inputs, copied
    std::vector<OutputBytes> outputs;
    InvokeCallback done;
    std::shared_ptr<InvokeEvent> event;
    Deadline deadline;
    std::chrono::steady_clock::time_point called;
    InvokeTiming timing;  // pipelined: the time Start took, so far
  };

  // Pipelined: the partition's kernel, and which graph input (output) each
  // of the partition's inputs (outputs) is.
  DelegateKernel* kernel = nullptr;
  std::vector<size_t> input_of, output_of;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Request> queue;
  std::vector<bool> slot_busy;  // pipelined; slot 0 stays Invoke's
  int pending = 0;              // made and not yet completed
  bool stopping = false;
  std::thread thread;
};

namespace {

// Where each of `part` lies in `whole`; empty when one is not there.
std::vector<size_t> PositionsIn(const std::vector<int>& part, const std::vector<int>& whole) {
  std::vector<size_t> positions;
  for (int t : part) {
    auto it = std::find(whole.begin(), whole.end(), t);
    if (it == whole.end()) return {};
    positions.push_back(static_cast<size_t>(it - whole.begin()));
  }
  return positions;
}

}  // namespace

absl::Status Interpreter::StartAsync() {
  async_ = std::make_shared<Async>();
  Async& a = *async_;
  if (steps_.size() == 1 && steps_[0].partition >= 0) {
    const Partition& p = partitions_[static_cast<size_t>(steps_[0].partition)];
    a.input_of = PositionsIn(p.inputs, graph_.inputs);
    a.output_of = PositionsIn(p.outputs, graph_.outputs);
    const bool all_outputs = a.output_of.size() == graph_.outputs.size() && PositionsIn(graph_.outputs, p.outputs).size() == graph_.outputs.size();
    if (a.input_of.size() == p.inputs.size() && all_outputs) {
      DelegateKernel* kernel = delegate_kernels_[static_cast<size_t>(steps_[0].partition)].get();
      std::lock_guard<std::mutex> turn(run_mutex_);
      absl::Status slots = kernel->SetSlots(static_cast<size_t>(max_in_flight_) + 1);
      if (slots.ok()) {
        a.kernel = kernel;
      } else if (!absl::IsUnimplemented(slots)) {
        return absl::Status(slots.code(), fmt::format("buffers for {} invokes in flight: {}", max_in_flight_, slots.message()));
      }
    }
  }
  a.slot_busy.assign(static_cast<size_t>(max_in_flight_) + 1, false);
  a.thread = std::thread([this] { CompleteAsync(); });
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<InvokeEvent>> Interpreter::InvokeAsync(const std::vector<InputBytes>& inputs,
                                                                      std::vector<OutputBytes> outputs,
                                                                      InvokeCallback done, const InvokeOptions& options) {
  using Clock = std::chrono::steady_clock;
  MGD_RETURN_IF_ERROR(CheckBuffers(inputs, outputs));
  {
    // A failure (no memory for the slots) is for this call only: the next
    // one tries again.
    std::lock_guard<std::mutex> lock(async_start_mutex_);
    if (!async_started_) {
      absl::Status started = StartAsync();
      if (!started.ok()) {
        async_.reset();
        return started;
      }
      async_started_ = true;
    }
  }
  Async& a = *async_;
  if (!options.fences.empty() && a.kernel == nullptr) {
    MGD_RETURN_IF_ERROR(WholeGraphPartition().status());
    return absl::FailedPreconditionError("fenced async invokes need a delegate that runs invokes in flight");
  }
  Async::Request r;
  r.outputs = std::move(outputs);
  r.done = std::move(done);
  r.event = std::make_shared<InvokeEvent>();
  r.called = Clock::now();
  r.deadline = DeadlineAfter(r.called, options.timeout);
  {
    std::unique_lock<std::mutex> lock(a.mutex);
    a.changed.wait(lock, [&] { return a.pending < max_in_flight_ || a.stopping; });
    if (a.stopping) return absl::FailedPreconditionError("InvokeAsync: the interpreter is being deleted");
    ++a.pending;
    if (a.kernel != nullptr) {
      r.slot = static_cast<size_t>(std::find(a.slot_busy.begin() + 1, a.slot_busy.end(), false) - a.slot_busy.begin());
      a.slot_busy[r.slot] = true;
    }
  }
  if (a.kernel != nullptr) {
    std::lock_guard<std::mutex> turn(run_mutex_);
    for (size_t i = 0; i < inputs.size() && check_finite_ && r.started.ok(); ++i) {
      if (bound(graph_.inputs[i])) continue;
      TensorRef given = tensors_[static_cast<size_t>(graph_.inputs[i])];
      given.data = static_cast<uint8_t*>(const_cast<void*>(inputs[i].data));
      r.started = CheckFinite(given, "input", i);
    }
    if (r.started.ok()) {
      std::vector<const void*> ins;
      for (size_t k : a.input_of) ins.push_back(inputs[k].data);
      const Clock::time_point start = Clock::now();
      r.started = a.kernel->Start(r.slot, ins, r.deadline, options.fences);
      r.timing.in_delegates_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
  } else {
    for (const InputBytes& in : inputs) {
      const auto* bytes = static_cast<const uint8_t*>(in.data);
      r.inputs.emplace_back(bytes, bytes + in.bytes);
    }
  }
  std::shared_ptr<InvokeEvent> event = r.event;
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    a.queue.push_back(std::move(r));
  }
  a.changed.notify_all();
  return event;
}

void Interpreter::CompleteAsync() {
  Async& a = *async_;
  for (;;) {
    Async::Request r;
    {
      std::unique_lock<std::mutex> lock(a.mutex);
      a.changed.wait(lock, [&] { return !a.queue.empty() || a.stopping; });
      if (a.queue.empty()) return;
      r = std::move(a.queue.front());
      a.queue.pop_front();
    }
    using Clock = std::chrono::steady_clock;
    absl::Status status;
    if (a.kernel != nullptr) {
      status = r.started;
      if (status.ok()) {
        std::vector<void*> outs;
        for (size_t k : a.output_of) outs.push_back(r.outputs[k].data);
        const Clock::time_point start = Clock::now();
        status = a.kernel->Finish(r.slot, outs, r.deadline);
        if (status.ok()) status = Exceeded(r.deadline, "by the end of the run");
        r.timing.in_delegates_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (measure_timing_) r.timing.device_ms = a.kernel->DeviceMs(r.slot);
      }
      for (size_t i = 0; i < r.outputs.size() && check_finite_ && status.ok(); ++i) {
        if (bound(graph_.outputs[i])) continue;
        TensorRef written = output(i);
        written.data = static_cast<uint8_t*>(r.outputs[i].data);
        status = CheckFinite(written, "output", i);
      }
      r.timing.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - r.called).count();
    } else {
      std::lock_guard<std::mutex> turn(run_mutex_);
      for (size_t i = 0; i < r.inputs.size(); ++i) {
        if (!r.inputs[i].empty() && !bound(graph_.inputs[i])) std::memcpy(input(i).data, r.inputs[i].data(), r.inputs[i].size());
      }
      status = CheckedRun(r.deadline, &r.timing, {});
      for (size_t i = 0; i < r.outputs.size() && status.ok(); ++i) {
        if (r.outputs[i].bytes > 0 && !bound(graph_.outputs[i])) std::memcpy(r.outputs[i].data, output(i).data, r.outputs[i].bytes);
      }
    }
    {
      std::lock_guard<std::mutex> lock(a.mutex);
      if (a.kernel != nullptr) a.slot_busy[r.slot] = false;
      --a.pending;
    }
    a.changed.notify_all();
    if (r.done) r.done(status);
    r.event->Complete(std::move(status), r.timing);
  }
}

void Interpreter::DrainAsync() {
  {
    std::lock_guard<std::mutex> lock(async_start_mutex_);
    if (!async_started_) return;
  }
  std::unique_lock<std::mutex> lock(async_->mutex);
  async_->changed.wait(lock, [&] { return async_->pending == 0; });
}

void Interpreter::StopAsync() {
  if (async_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(async_->mutex);
    async_->stopping = true;
  }
  async_->changed.notify_all();
  if (async_->thread.joinable()) async_->thread.join();
}

}  // namespace mgd
