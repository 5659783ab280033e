#include "delegate/observer.h"

#include "delegate/cache.h"
#include "delegate/serialize.h"
#include "layout/phwc4.h"

namespace mgd {

void CompiledEntryCollector::Prepared(const PreparedView& view) {
  std::vector<uint8_t> bytes = SerializeCompiledModel(view.compiled);
  const std::string sha = ContentHashHex(bytes.data(), bytes.size());
  entries_.push_back({view.key, sha, std::move(bytes)});
}

void TensorKeeper::Prepared(const PreparedView& view) {
  Partition kept{{}, &view.device, view.alive};
  for (size_t i = 0; i < view.compiled.buffers.size(); ++i) {
    const CompiledBuffer& b = view.compiled.buffers[i];
    if (b.role != BufferRole::kActivation || b.tensor < 0) continue;
    kept.tensors.push_back({b.tensor, view.prepared.execution.places[i], b.shape, b.bytes == b.shape.phwc4_elements() * 2});
  }
  partitions_.push_back(std::move(kept));
}

absl::StatusOr<std::map<int, std::vector<float>>> TensorKeeper::ReadActivations() const {
  std::map<int, std::vector<float>> tensors;
  for (const Partition& partition : partitions_) {
    if (partition.alive.expired()) continue;
    for (const Kept& t : partition.tensors) {
      const size_t values = t.shape.phwc4_elements();
      std::vector<float> bhwc(t.shape.elements());
      if (t.half) {
        std::vector<uint16_t> phwc4(values);
        if (absl::Status s = partition.device->Download(*t.place.buffer, phwc4.data(), values * 2, t.place.offset); !s.ok()) return s;
        layout::Phwc4HalfToBhwc(phwc4.data(), t.shape, bhwc.data());
      } else {
        std::vector<float> phwc4(values);
        if (absl::Status s = partition.device->Download(*t.place.buffer, phwc4.data(), values * 4, t.place.offset); !s.ok()) return s;
        layout::Phwc4ToBhwc(phwc4.data(), t.shape, bhwc.data());
      }
      tensors[t.tensor] = std::move(bhwc);
    }
  }
  return tensors;
}

void Profiler::Prepared(const PreparedView& view) {
  Partition profiled;
  for (const CompiledDispatch& cd : view.compiled.dispatches) profiled.dispatches.push_back({cd.code.name, cd.nodes, 0});
  profiled.prepared = &view.prepared;
  profiled.alive = view.alive;
  partitions_.push_back(std::move(profiled));
}

std::vector<std::vector<DispatchProfile>> Profiler::Profiles() const {
  std::vector<std::vector<DispatchProfile>> all;
  for (const Partition& p : partitions_) {
    if (p.alive.expired()) continue;
    const gpu::Recording* timed = p.prepared->execution.timed_recording.get();
    if (timed == nullptr) continue;
    std::vector<DispatchProfile> dispatches = p.dispatches;
    const std::vector<double> ns = timed->dispatch_ns(), start = timed->dispatch_start_ns();
    for (size_t i = 0; i < dispatches.size() && i < ns.size(); ++i) dispatches[i].gpu_ns = ns[i];
    for (size_t i = 0; i < dispatches.size() && i < start.size(); ++i) dispatches[i].start_ns = start[i];
    all.push_back(std::move(dispatches));
  }
  return all;
}

}  // namespace mgd
