// How a tool or test sees inside a GPU delegate's prepares (mgd dump,
// compile, tune, bench, run --dump-tensors): observers given to the delegate
// at creation are told of each prepared partition that will run, with its
// compiled form and its realization on the device. The delegate's run path
// does not depend on them; what an observer asks for (needs()) is all that
// changes how a partition is prepared.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delegate/compiled_file.h"
#include "delegate/compiled_model.h"
#include "delegate/realize.h"

namespace mgd {

struct PreparedView {
  size_t index = 0;                          // the delegate's k-th prepared partition
  const std::string& key;                    // its key in an offline compiled model (find_compiled.h)
  const CompiledModel& compiled;             // workgroups chosen, programs' SPIR-V or binaries filled in
  const PreparedPartition& prepared;         // programs, constants, the execution's buffers and recordings
  gpu::Device& device;
  std::weak_ptr<bool> alive;                 // expires with the partition's kernel (and what `prepared` holds)
};

class PrepareObserver {
 public:
  struct Needs {
    bool pipeline_cache = false;   // CompiledModel::pipeline_cache filled in (a compiled file, a dump)
    bool timed_recording = false;  // a timestamped recording beside the plain one (profiles)
    bool every_tensor = false;     // every activation readable after a run: fusion off, no memory reuse
  };
  virtual ~PrepareObserver() = default;
  virtual Needs needs() const { return {}; }
  virtual void Prepared(const PreparedView& view) = 0;
};

// Each prepared partition as compiled (mgd dump).
class CompiledModelKeeper : public PrepareObserver {
 public:
  Needs needs() const override { return {true, false, false}; }
  void Prepared(const PreparedView& view) override { models_.push_back(view.compiled); }
  const std::vector<CompiledModel>& models() const { return models_; }

 private:
  std::vector<CompiledModel> models_;
};

// Each prepared partition as an entry of an offline compiled model (mgd
// compile).
class CompiledEntryCollector : public PrepareObserver {
 public:
  Needs needs() const override { return {true, false, false}; }
  void Prepared(const PreparedView& view) override;
  const std::vector<CompiledFileEntry>& entries() const { return entries_; }

 private:
  std::vector<CompiledFileEntry> entries_;
};

// Every activation of the prepared partitions, readable after a run (mgd run
// --dump-tensors).
class TensorKeeper : public PrepareObserver {
 public:
  Needs needs() const override { return {false, false, true}; }
  void Prepared(const PreparedView& view) override;
  // Every activation tensor of the partitions still alive, as float32 BHWC,
  // by graph tensor index.
  absl::StatusOr<std::map<int, std::vector<float>>> ReadActivations() const;

 private:
  struct Kept {
    int tensor = -1;
    gpu::Binding place;
    layout::Bhwc shape;
    bool half = false;  // fp16 storage
  };
  struct Partition {
    std::vector<Kept> tensors;
    gpu::Device* device = nullptr;
    std::weak_ptr<bool> alive;
  };
  std::vector<Partition> partitions_;
};

// One partition's dispatches and, after a timed run, their GPU times.
struct DispatchProfile {
  std::string name;        // the shader's name
  std::vector<int> nodes;  // model nodes it runs (empty: I/O conversion)
  double gpu_ns = 0;       // last timed run
  double start_ns = 0;     // when it began in that run, after the partition's first dispatch
};

// GPU times per dispatch (mgd bench): the delegate replays the timestamped
// recordings while GpuDelegate::SetTimedRuns(true).
class Profiler : public PrepareObserver {
 public:
  Needs needs() const override { return {false, true, false}; }
  void Prepared(const PreparedView& view) override;
  // Every prepared partition's dispatches still alive, times from its last
  // timed run.
  std::vector<std::vector<DispatchProfile>> Profiles() const;

 private:
  struct Partition {
    std::vector<DispatchProfile> dispatches;
    // The kernel's, read at Profiles(): binding an app's buffer records the
    // execution again, so a recording kept here could be gone.
    const PreparedPartition* prepared = nullptr;
    std::weak_ptr<bool> alive;
  };
  std::vector<Partition> partitions_;
};

}  // namespace mgd
