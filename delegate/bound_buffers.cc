// GpuKernel's zero-copy I/O: an app's GPU buffer bound in place of a
// partition input's or output's own buffer. BHWC takes the place of the
// user-side buffer the host would fill or read; PHWC4 takes the place of
// the activation inside, and the conversion between them is not recorded.
#include <fmt/format.h>

#include "delegate/realize.h"

namespace mgd {
namespace {

// The I/O conversion dispatch that reads (writes) user-side buffer `user`,
// and the activation on its other side.
struct Conversion {
  int dispatch = -1;
  int inside = -1;
};

Conversion ConversionOf(const CompiledModel& model, int user) {
  for (size_t i = 0; i < model.dispatches.size(); ++i) {
    const CompiledDispatch& d = model.dispatches[i];
    if (!d.nodes.empty() || d.bindings.size() != 2) continue;
    if (d.bindings[0].buffer == user) return {static_cast<int>(i), d.bindings[1].buffer};
    if (d.bindings[1].buffer == user) return {static_cast<int>(i), d.bindings[0].buffer};
  }
  return {};
}

}  // namespace

const char* GpuLayoutName(GpuLayout layout) { return layout == GpuLayout::kBhwc ? "BHWC" : "PHWC4"; }

bool GpuKernel::Bound(bool output, size_t index) const {
  const size_t k = output ? model_->inputs.size() + index : index;
  return k < bound_.size() && bound_[k].has_value();
}

std::vector<BoundBuffer> GpuKernel::BoundList() const {
  std::vector<BoundBuffer> list;
  for (const std::optional<BoundBuffer>& b : bound_) {
    if (b) list.push_back(*b);
  }
  return list;
}

absl::StatusOr<GpuBufferNeeds> GpuKernel::BufferNeeds(bool output, size_t index) const {
  const std::vector<int>& users = output ? model_->outputs : model_->inputs;
  if (index >= users.size()) {
    return absl::InvalidArgumentError(fmt::format("the partition has {} {}s; there is no {} {}", users.size(),
                                                  output ? "output" : "input", output ? "output" : "input", index));
  }
  const int user = users[index];
  const Conversion c = ConversionOf(*model_, user);
  GpuBufferNeeds needs;
  needs.bhwc_bytes = model_->buffers[static_cast<size_t>(user)].bytes;
  // An input some op reads as it is given (an 8-bit image, a matrix:
  // GeneratedShader::raw_inputs) takes only BHWC: a PHWC4 buffer would
  // leave those reads without their bytes.
  bool read_as_given = false;
  for (size_t i = 0; i < model_->dispatches.size(); ++i) {
    if (static_cast<int>(i) == c.dispatch) continue;
    for (const CompiledBinding& b : model_->dispatches[i].bindings) read_as_given = read_as_given || b.buffer == user;
  }
  // A bool tensor's PHWC4 form holds floats, which no app hands over as
  // bools: it binds as BHWC bytes only.
  const bool floats = c.dispatch >= 0 && model_->dispatches[static_cast<size_t>(c.dispatch)].key.op.find("BOOL") == std::string::npos;
  if (c.inside >= 0 && !read_as_given && floats) {
    needs.phwc4_bytes = model_->buffers[static_cast<size_t>(c.inside)].bytes;
    needs.phwc4_half = model_->dispatches[static_cast<size_t>(c.dispatch)].code.half_storage;
  }
  return needs;
}

absl::Status GpuKernel::Rerecord(Execution& e) {
  const bool timed = e.timed_recording != nullptr || ((timing_ || *timed_runs_) && device_.info().timestamps);
  return RecordDispatches(device_, *model_, *prepared_.shared, e, timed, BoundList());
}

absl::Status GpuKernel::BindBuffer(bool output, size_t index, const std::optional<GpuBuffer>& buffer, GpuLayout layout) {
  absl::StatusOr<GpuBufferNeeds> needs = BufferNeeds(output, index);
  if (!needs.ok()) return needs.status();
  std::optional<BoundBuffer> bound;
  if (buffer) {
    if (layout == GpuLayout::kPhwc4 && needs->phwc4_bytes == 0) {
      return absl::InvalidArgumentError(fmt::format("{} {} is read as it is given: bind it in BHWC", output ? "output" : "input", index));
    }
    const uint64_t wanted = layout == GpuLayout::kBhwc ? needs->bhwc_bytes : needs->phwc4_bytes;
    if (buffer->bytes < wanted) {
      return absl::InvalidArgumentError(fmt::format(
          "the buffer holds {} bytes; {} {} in {} needs {} ({})", buffer->bytes, output ? "output" : "input", index,
          GpuLayoutName(layout), wanted,
          layout == GpuLayout::kPhwc4 ? (needs->phwc4_half ? "float16, slices of 4 channels" : "float32, slices of 4 channels")
          : needs->phwc4_bytes == 0   ? "the tensor's elements as they are, rounded up to 4 bytes"
                                      : "float32"));
    }
    gpu::ExternalBuffer external = *buffer;
    external.bytes = wanted;
    absl::StatusOr<std::unique_ptr<gpu::Buffer>> imported = device_.ImportBuffer(external);
    if (!imported.ok()) return imported.status();
    const int user = (output ? model_->outputs : model_->inputs)[index];
    const Conversion c = ConversionOf(*model_, user);
    bound.emplace();
    bound->buffer = std::move(*imported);
    bound->place = {bound->buffer.get(), gpu::Access::kRead, static_cast<size_t>(buffer->offset), static_cast<size_t>(wanted)};
    bound->replaces = layout == GpuLayout::kBhwc ? user : c.inside;
    bound->skip_dispatch = layout == GpuLayout::kBhwc ? -1 : c.dispatch;
  }
  // Work in flight still uses the buffers being replaced.
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    if (absl::Status s = WaitFor(slot, std::nullopt); !s.ok()) return s;
  }
  bound_[output ? model_->inputs.size() + index : index] = std::move(bound);
  for (size_t slot = 0; slot < more_executions_.size() + 1; ++slot) {
    if (absl::Status s = Rerecord(ExecutionOf(slot)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace mgd
