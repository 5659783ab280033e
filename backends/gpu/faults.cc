// A device wrapper that fails where FaultSwitches say, and otherwise
// forwards every call.
#include "backends/gpu/faults.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace mgd::gpu {

absl::Status DeviceLostError(const std::string& where) {
  return absl::UnavailableError(fmt::format(
      "{}: the GPU device was lost; this delegate cannot run again: delete its interpreters and the delegate, and "
      "create them again",
      where));
}

absl::StatusOr<std::shared_ptr<FaultSwitches>> FaultsFromEnvironment() {
  const char* env = std::getenv("MGD_FAULTS");
  if (env == nullptr || *env == '\0') return nullptr;
  auto switches = std::make_shared<FaultSwitches>();
  std::stringstream words(env);
  std::string word;
  while (std::getline(words, word, ',')) {
    if (word == "out_of_memory") {
      switches->out_of_memory = true;
    } else if (word == "hang") {
      switches->hang = true;
    } else if (word == "lose_device") {
      switches->lose_device = true;
    } else {
      return absl::InvalidArgumentError(
          fmt::format("MGD_FAULTS: unknown fault '{}' (known: out_of_memory, hang, lose_device)", word));
    }
  }
  return switches;
}

namespace {

class FaultyDevice final : public Device {
 public:
  FaultyDevice(std::unique_ptr<Device> device, std::shared_ptr<FaultSwitches> switches)
      : device_(std::move(device)), switches_(std::move(switches)) {}

  const GpuInfo& info() const override { return device_->info(); }
  std::vector<std::string> validation_messages() const override { return device_->validation_messages(); }

  using Device::CreateBuffer;
  absl::StatusOr<std::unique_ptr<Buffer>> CreateBuffer(size_t bytes, Use use) override {
    if (lost_) return DeviceLostError("CreateBuffer");
    if (switches_->out_of_memory) {
      return absl::ResourceExhaustedError(fmt::format("CreateBuffer({} bytes): out of device memory (fault injected)", bytes));
    }
    return device_->CreateBuffer(bytes, use);
  }
  absl::Status Upload(Buffer& buffer, const void* data, size_t bytes, size_t offset) override {
    if (lost_) return DeviceLostError("Upload");
    return device_->Upload(buffer, data, bytes, offset);
  }
  absl::Status Download(const Buffer& buffer, void* data, size_t bytes, size_t offset) override {
    if (lost_) return DeviceLostError("Download");
    return device_->Download(buffer, data, bytes, offset);
  }
  absl::Status UploadAll(const std::vector<UploadRequest>& uploads) override {
    if (lost_) return DeviceLostError("UploadAll");
    return device_->UploadAll(uploads);
  }
  void ReserveUploadBytes(size_t bytes) override { device_->ReserveUploadBytes(bytes); }
  absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSource& source) override {
    if (lost_) return DeviceLostError("CreateProgram");
    return device_->CreateProgram(source);
  }
  std::vector<absl::StatusOr<std::unique_ptr<Program>>> CreatePrograms(const std::vector<ProgramSource>& sources,
                                                                       size_t threads) override {
    return device_->CreatePrograms(sources, threads);
  }
  absl::StatusOr<std::unique_ptr<Recording>> Record(const std::vector<Dispatch>& dispatches,
                                                    const RecordOptions& options) override {
    if (lost_) return DeviceLostError("Record");
    return device_->Record(dispatches, options);
  }

  // A hung run is reported as the real one's timeout would be, at once.
  absl::Status Run(Recording& recording) override {
    if (absl::Status s = BeforeSubmit("Run"); !s.ok()) return s;
    absl::Status ran = device_->Run(recording);
    if (ran.ok() && switches_->hang) {
      return absl::DeadlineExceededError("Run: the GPU did not finish within the run timeout (fault injected: hang)");
    }
    return ran;
  }
  absl::StatusOr<uint64_t> Submit(Recording& recording, const SubmitSync& sync) override {
    if (absl::Status s = BeforeSubmit("Submit"); !s.ok()) return s;
    absl::StatusOr<uint64_t> ticket = device_->Submit(recording, sync);
    if (ticket.ok() && switches_->hang) {
      std::lock_guard<std::mutex> lock(mutex_);
      hung_.insert(*ticket);
    }
    return ticket;
  }
  // A hung submission's fence does not signal until the switch is cleared.
  absl::Status Wait(uint64_t ticket, std::chrono::nanoseconds timeout) override {
    if (lost_) return DeviceLostError("Wait");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (Hung(ticket)) {
      if (!switches_->hang) {
        std::lock_guard<std::mutex> lock(mutex_);
        hung_.erase(ticket);
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return absl::DeadlineExceededError("the GPU did not finish in time (fault injected: hang)");
      }
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(1), timeout));
    }
    return device_->Wait(ticket, std::max(std::chrono::nanoseconds(0), std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                             deadline - std::chrono::steady_clock::now())));
  }

  absl::StatusOr<std::unique_ptr<Buffer>> ImportBuffer(const ExternalBuffer& external) override {
    if (lost_) return DeviceLostError("ImportBuffer");
    return device_->ImportBuffer(external);
  }
  Interop interop() const override { return device_->interop(); }
  void LockQueue() override { device_->LockQueue(); }
  void UnlockQueue() override { device_->UnlockQueue(); }

  std::vector<uint8_t> PipelineCacheData() const override { return device_->PipelineCacheData(); }
  absl::Status MergePipelineCacheData(const std::vector<uint8_t>& data) override {
    return device_->MergePipelineCacheData(data);
  }

 private:
  absl::Status BeforeSubmit(const char* where) {
    if (switches_->lose_device.exchange(false)) lost_ = true;
    return lost_ ? DeviceLostError(where) : absl::OkStatus();
  }
  bool Hung(uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mutex_);
    return hung_.count(ticket) != 0;
  }

  std::unique_ptr<Device> device_;
  std::shared_ptr<FaultSwitches> switches_;
  std::atomic<bool> lost_{false};
  std::mutex mutex_;
  std::set<uint64_t> hung_;  // submitted while the hang switch was on
};

}  // namespace

std::unique_ptr<Device> WithFaults(std::unique_ptr<Device> device, std::shared_ptr<FaultSwitches> switches) {
  return std::make_unique<FaultyDevice>(std::move(device), std::move(switches));
}

}  // namespace mgd::gpu
