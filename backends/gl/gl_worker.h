// The one thread a GL device's context lives on. GL contexts are bound to a
// thread, so every device call runs as a task here while the caller waits;
// callers on any thread are then safe, and calls are serialized.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "backends/gpu/gpu.h"

namespace mgd::gpu::gl {

class Worker {
 public:
  Worker();
  ~Worker();  // Stop()s if nobody did
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs `task` on the worker thread and waits for it. Inline when already on
  // the worker thread (a GL object released inside another task would
  // otherwise wait for itself). FailedPrecondition once stopped; Internal when
  // the task threw. The caller waits for the task's end as `wait` says
  // (gpu::PlanWait: a sleep, then a poll) before it sleeps for good: a woken
  // caller runs tens of microseconds later. Only for tasks that wait for the
  // GPU.
  absl::Status RunAndWait(const std::function<void()>& task, gpu::WaitPlan wait = {});

  // As RunAndWait for a task returning absl::Status or absl::StatusOr<T>.
  template <typename F>
  auto Call(F&& fn, gpu::WaitPlan wait = {}) -> decltype(fn()) {
    using R = decltype(fn());
    std::optional<R> result;
    const absl::Status posted = RunAndWait([&] { result.emplace(fn()); }, wait);
    if (!posted.ok()) return R(posted);
    return std::move(*result);
  }

  // Runs the tasks already queued, then `last` (the context teardown), then
  // ends the thread. Later calls fail with FailedPrecondition. Must not be
  // called from the worker thread.
  void Stop(const std::function<void()>& last);

  bool OnWorkerThread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace mgd::gpu::gl
