// Waiting for a GL device's GPU work: Run's fence, and Submit's fences kept
// by ticket until Wait. Everything named ...OnThread, and WaitForGpu, runs on
// the device's context thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gl/gl_objects.h"

namespace mgd::gpu::gl {

// Blocks until the GPU has finished everything submitted so far, sleeping
// and polling first as `wait` says (an active wait, gpu::PlanWait); Run's
// errors name `num_dispatches`.
absl::Status WaitForGpu(size_t num_dispatches, WaitPlan wait);

// The timestamps of the run that just completed; none when the GPU reported
// a disjoint event (clock change, power state), which makes them meaningless.
std::vector<uint64_t> ReadTimestamps(const GlExtensions& ext, const std::vector<GLuint>& queries);

// Submit's fences not yet waited for, by ticket. GL objects in them are
// touched on the context thread only; the lock is for Wait's caller, who
// plans its wait by the recording's last run.
class GlSubmissions {
 public:
  using Clock = std::chrono::steady_clock;

  explicit GlSubmissions(DeviceCore& core) : core_(core) {}

  // On the context thread: `fence` (flushed) ends a run of `recording`
  // submitted at `at`; its ticket.
  uint64_t AddOnThread(GLsync fence, GlRecording& recording, Clock::time_point at);

  // Until submission `ticket` has finished or `timeout` has passed: the fence
  // deleted, the recording's timestamps and run time kept. An active wait
  // (PlanWait) takes sleeping turns on the context thread until kWakeLead
  // before the recording's last run time has passed since Submit, then polls
  // in one turn, this thread and the context thread alike; later turns, and a
  // passive wait's, block in glClientWaitSync.
  absl::Status Wait(uint64_t ticket, std::chrono::nanoseconds timeout);

 private:
  struct Submitted {
    GLsync sync = nullptr;
    GlRecording* recording = nullptr;  // its timestamps are read when it completes
    Clock::time_point at;              // when Submit was called (Recording::last_run)
  };
  // How one of Wait's turns spends its time on the context thread. kSleep
  // sleeps in the OS (gpu::SleepFor), not in glClientWaitSync, which NVIDIA
  // spins through; kBlock's wait in the driver wakes as soon as the fence
  // signals (a software GPU's passive wait).
  enum class Turn { kBlock, kSleep, kPoll };
  // One of Wait's turns: true once the fence is done. `first_turn` tells
  // whether the run finished before the wait began (`finished_before`), when
  // how long it ran is not known.
  absl::StatusOr<bool> TurnOnThread(uint64_t ticket, Turn turn, std::chrono::nanoseconds left,
                                    std::chrono::nanoseconds turn_time, bool first_turn, bool& finished_before);

  DeviceCore& core_;
  std::mutex mutex_;
  std::map<uint64_t, Submitted> submitted_;
  uint64_t last_ticket_ = 0;  // context thread only
};

}  // namespace mgd::gpu::gl
