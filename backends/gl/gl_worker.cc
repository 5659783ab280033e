#include "backends/gl/gl_worker.h"

#include <exception>
#include <future>
#include <string>

namespace mgd::gpu::gl {

Worker::Worker() : thread_([this] { Loop(); }) {}

Worker::~Worker() { Stop([] {}); }

absl::Status Worker::RunAndWait(const std::function<void()>& task, gpu::WaitPlan wait) {
  if (OnWorkerThread()) {
    task();
    return absl::OkStatus();
  }
  // The task runs before this frame returns, so it may hold references into it.
  std::promise<absl::Status> done;
  std::future<absl::Status> result = done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return absl::FailedPreconditionError("the GL device has been destroyed");
    queue_.push_back([&task, &done] {
      // No exception may escape onto the worker thread (it would end the
      // process); the caller gets it as a status instead.
      try {
        task();
        done.set_value(absl::OkStatus());
      } catch (const std::exception& e) {
        done.set_value(absl::InternalError(std::string("exception on the GL thread: ") + e.what()));
      } catch (...) {
        done.set_value(absl::InternalError("unknown exception on the GL thread"));
      }
    });
  }
  wake_.notify_one();
  if (wait.sleep.count() > 0) result.wait_for(wait.sleep);
  gpu::PollFor(wait.poll, [&] { return result.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  return result.get();
}

void Worker::Stop(const std::function<void()>& last) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    queue_.push_back([&last] {
      try {
        last();
      } catch (...) {
        // Teardown is best effort; there is nobody left to tell.
      }
    });
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Worker::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      // Stop() queues the teardown after setting stopping_, so an empty queue
      // here means the teardown has run.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace mgd::gpu::gl
