#include "backends/gl/gl_submissions.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd::gpu::gl {
namespace {

// Run waits for the GPU up to kRunTimeout (gpu.h) before calling it hung.
constexpr GLuint64 kWaitSliceNs = 100'000'000;  // 100 ms per glClientWaitSync
constexpr std::chrono::nanoseconds kWaitTurn{1'000'000};  // Wait's turn on the context thread

}  // namespace

absl::Status WaitForGpu(size_t num_dispatches, WaitPlan wait) {
  GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (sync == nullptr) return CheckGl("Run", "glFenceSync");
  const auto deadline = std::chrono::steady_clock::now() + kRunTimeout;
  GLbitfield flags = GL_SYNC_FLUSH_COMMANDS_BIT;  // once: the fence must reach the GPU
  auto finished = [&] {
    const GLenum result = glClientWaitSync(sync, flags, 0);
    flags = 0;
    return result != GL_TIMEOUT_EXPIRED;  // the wait below then answers at once
  };
  if (!SleepFor(wait.sleep, finished)) PollFor(wait.poll, finished);
  absl::Status status;
  for (;;) {
    const GLenum result = glClientWaitSync(sync, flags, kWaitSliceNs);
    flags = 0;
    if (result == GL_ALREADY_SIGNALED || result == GL_CONDITION_SATISFIED) break;
    if (result == GL_WAIT_FAILED) {
      status = CheckGl("Run", "glClientWaitSync");
      if (status.ok()) status = absl::InternalError("Run: glClientWaitSync failed");
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      status = absl::DeadlineExceededError(fmt::format("Run: {} dispatches did not complete within {} s (GPU hung?)",
                                                       num_dispatches, std::chrono::duration_cast<std::chrono::seconds>(kRunTimeout).count()));
      break;
    }
  }
  glDeleteSync(sync);
  return status;
}

std::vector<uint64_t> ReadTimestamps(const GlExtensions& ext, const std::vector<GLuint>& queries) {
  GLint disjoint = 0;
  glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
  std::vector<uint64_t> values(queries.size(), 0);
  for (size_t q = 0; q < queries.size(); ++q) {
    GLuint64 value = 0;
    ext.get_query_object_ui64v(queries[q], GL_QUERY_RESULT_EXT, &value);
    values[q] = value;
  }
  if (disjoint != 0) return {};
  return values;
}

uint64_t GlSubmissions::AddOnThread(GLsync fence, GlRecording& recording, Clock::time_point at) {
  std::lock_guard<std::mutex> lock(mutex_);
  submitted_[++last_ticket_] = {fence, &recording, at};
  return last_ticket_;
}

absl::Status GlSubmissions::Wait(uint64_t ticket, std::chrono::nanoseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  bool will_poll = false;  // one turn polls, from poll_from on
  Clock::time_point poll_from;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = submitted_.find(ticket); it != submitted_.end()) {
      const WaitPlan plan = PlanWait(core_.poll_time, it->second.recording->last_run());
      will_poll = plan.poll.count() > 0;
      poll_from = it->second.at + plan.sleep;
    }
  }
  const WaitPlan polling = PlanWait(core_.poll_time, {});  // how the polling turn's caller waits
  bool finished_before = false;
  for (bool first_turn = true;; first_turn = false) {
    const auto now = Clock::now();
    const bool poll = will_poll && now >= poll_from;
    if (poll) will_poll = false;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    auto turn_time = std::clamp<std::chrono::nanoseconds>(left, {}, kWaitTurn);
    if (will_poll) turn_time = std::clamp<std::chrono::nanoseconds>(poll_from - now, {}, turn_time);
    const Turn turn = poll ? Turn::kPoll : will_poll ? Turn::kSleep : Turn::kBlock;
    absl::StatusOr<bool> done = core_.worker.Call(
        [&] { return TurnOnThread(ticket, turn, left, turn_time, first_turn, finished_before); },
        poll ? polling : WaitPlan{});
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(fmt::format(
          "the GPU did not finish within {:.3f} ms", std::chrono::duration<double, std::milli>(timeout).count()));
    }
  }
}

absl::StatusOr<bool> GlSubmissions::TurnOnThread(uint64_t ticket, Turn turn, std::chrono::nanoseconds left,
                                                 std::chrono::nanoseconds turn_time, bool first_turn,
                                                 bool& finished_before) {
  Submitted submitted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = submitted_.find(ticket);
    if (it == submitted_.end()) {
      return absl::InvalidArgumentError(fmt::format("Wait: no submission {} is waiting (completed already?)", ticket));
    }
    submitted = it->second;
  }
  GLenum result = glClientWaitSync(submitted.sync, 0, 0);
  if (first_turn) finished_before = result != GL_TIMEOUT_EXPIRED;
  auto finished = [&] {
    result = glClientWaitSync(submitted.sync, 0, 0);
    return result != GL_TIMEOUT_EXPIRED;
  };
  if (result == GL_TIMEOUT_EXPIRED) {
    if (turn == Turn::kSleep) {
      SleepFor(turn_time, finished);
    } else if (turn == Turn::kBlock || !PollFor(std::min(core_.poll_time, left), finished)) {
      result = glClientWaitSync(submitted.sync, 0, static_cast<GLuint64>(turn_time.count()));
    }
  }
  if (result == GL_TIMEOUT_EXPIRED) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    submitted_.erase(ticket);
  }
  glDeleteSync(submitted.sync);
  if (result == GL_WAIT_FAILED) {
    absl::Status s = CheckGl("Wait", "glClientWaitSync");
    return s.ok() ? absl::InternalError("Wait: glClientWaitSync failed") : s;
  }
  if (!finished_before) submitted.recording->set_last_run(Clock::now() - submitted.at);
  if (!submitted.recording->queries().empty()) {
    submitted.recording->set_timestamps(ReadTimestamps(core_.ext, submitted.recording->queries()));
  }
  return true;
}

}  // namespace mgd::gpu::gl
