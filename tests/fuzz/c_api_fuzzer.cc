// libFuzzer target: sequences of C API calls (mgd/c_api.h) read from the
// bytes, with the arguments a careless app passes: NULLs, indices out of
// range, wrong sizes, models made of the fuzzer's bytes, custom ops and C
// delegates without callbacks. Handles stay valid or NULL (a dangling
// pointer is beyond what any C API can check); everything else must be
// refused with a report, never crash or trip a sanitizer. CPU only: the GPU
// delegate has its own tests.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "mgd/c_api.h"
#include "model/writer.h"
#include "ops/elementwise/elementwise.h"
#include "tests/graph_builder.h"

namespace {

void Quiet(void*, const char*) {}

// A small model whose ops the calls can exercise: y = relu(x + x), z = 2y.
const std::vector<uint8_t>& SmallModel() {
  static const std::vector<uint8_t> bytes = [] {
    mgd::testing::GraphBuilder b;
    const int x = b.Input({1, 4});
    const int y = b.Tensor({1, 4});
    const int z = b.Tensor({1, 4});
    b.Op(mgd::OpKind::kAdd, mgd::ops::ElementwiseAttributes{mgd::Activation::kRelu}, {x, x}, {y});
    b.Op(mgd::OpKind::kCustom, mgd::CustomAttributes{"Twice", {}}, {y}, {z});
    b.Output(y);
    b.Output(z);
    return *mgd::WriteModel(b.Build());
  }();
  return bytes;
}

MgdStatus TwiceInvoke(MgdOpContext* context, MgdOpNode* node) {
  const MgdTensor* in = MgdOpNodeGetInput(node, 0);
  MgdTensor* out = MgdOpNodeGetOutput(node, 0);
  if (in == nullptr || out == nullptr) {
    MgdOpContextReportError(context, "Twice needs an input and an output");
    return kMgdError;
  }
  std::vector<float> v(MgdTensorByteSize(in) / 4);
  if (MgdTensorCopyToBuffer(in, v.data(), v.size() * 4) != kMgdOk) return kMgdError;
  for (float& f : v) f *= 2;
  return MgdTensorCopyFromBuffer(out, v.data(), v.size() * 4);
}
const MgdRegistration kTwice = {nullptr, nullptr, nullptr, TwiceInvoke};
const MgdRegistration kNoInvoke = {nullptr, nullptr, nullptr, nullptr};

int Supported(void*, int32_t, int32_t code, const char*, char*, size_t) { return code == 0; }
MgdDelegate kNoCallbacks = {nullptr, "no-callbacks", nullptr, nullptr, nullptr, nullptr, nullptr};
MgdDelegate kNoPrepare = {nullptr, "no-prepare", Supported, nullptr, nullptr, nullptr, nullptr};

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  int32_t Int() { return static_cast<int8_t>(Byte()); }  // small, often negative
  const uint8_t* Take(size_t n, size_t* got) {
    *got = std::min(n, size_ - std::min(at_, size_));
    const uint8_t* p = data_ + std::min(at_, size_);
    at_ += *got;
    return p;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  MgdModel* model = nullptr;
  MgdInterpreterOptions* options = nullptr;
  MgdInterpreter* interpreter = nullptr;
  std::vector<float> buffer(64, 1.0f);
  std::vector<float> out_buffer(64, 0.0f);  // outputs of invokes with buffers (never overlapping inputs)
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    switch (in.Byte() % 26) {
      case 0:
        MgdModelDelete(model);
        model = MgdModelCreateWithErrorReporter(SmallModel().data(), SmallModel().size(), Quiet, nullptr);
        break;
      case 1: {  // a model of the fuzzer's own bytes
        size_t got = 0;
        const uint8_t* p = in.Take(in.Byte() * 8u, &got);
        MgdModelDelete(model);
        model = MgdModelCreateWithErrorReporter(got ? p : nullptr, got, Quiet, nullptr);
        break;
      }
      case 2:  // with a reporter, so that most reports stay off stderr
        MgdInterpreterOptionsDelete(options);
        options = MgdInterpreterOptionsCreate();
        MgdInterpreterOptionsSetErrorReporter(options, Quiet, nullptr);
        break;
      case 3: MgdInterpreterOptionsSetErrorReporter(options, in.Byte() % 8 ? Quiet : nullptr, nullptr); break;
      case 4: MgdInterpreterOptionsAddCustomOp(options, in.Byte() % 4 ? "Twice" : nullptr, in.Byte() % 3 ? &kTwice : &kNoInvoke, in.Int(), in.Int()); break;
      case 5: MgdInterpreterOptionsAddDelegate(options, in.Byte() % 2 ? &kNoCallbacks : &kNoPrepare); break;
      case 6: MgdInterpreterOptionsAddDelegate(options, nullptr); break;
      case 7:
        if (in.Byte() % 2) {
          MgdInterpreterOptionsSetMaxDelegatedPartitions(options, in.Int());
        } else {
          MgdInterpreterOptionsSetPartitionByCost(options, in.Int());
        }
        break;
      case 8: MgdInterpreterOptionsSetCheckFinite(options, in.Int()); break;
      case 9:
        MgdInterpreterDelete(interpreter);
        interpreter = MgdInterpreterCreate(model, in.Byte() % 4 ? options : nullptr);
        break;
      case 10: {
        MgdTensor* t = MgdInterpreterGetInputTensor(interpreter, in.Int());
        const size_t bytes = in.Byte() % 2 ? MgdTensorByteSize(t) : static_cast<size_t>(in.Byte());
        const uint8_t mode = in.Byte();
        if (bytes <= buffer.size() * 4) {
          if (mode % 5 == 0) buffer[0] = std::numeric_limits<float>::quiet_NaN();
          MgdTensorCopyFromBuffer(t, mode % 7 ? buffer.data() : nullptr, bytes);
        }
        break;
      }
      case 11: MgdInterpreterInvoke(interpreter); break;
      case 12: {
        const MgdTensor* t = MgdInterpreterGetOutputTensor(interpreter, in.Int());
        const size_t bytes = in.Byte() % 2 ? MgdTensorByteSize(t) : static_cast<size_t>(in.Byte());
        if (bytes <= buffer.size() * 4) MgdTensorCopyToBuffer(t, in.Byte() % 7 ? buffer.data() : nullptr, bytes);
        break;
      }
      case 13: {
        const MgdTensor* t = in.Byte() % 2 ? MgdInterpreterGetOutputTensor(interpreter, in.Int())
                                           : MgdInterpreterGetInputTensor(interpreter, in.Int());
        (void)MgdTensorType(t);
        (void)MgdTensorNumDims(t);
        (void)MgdTensorDim(t, in.Int());
        (void)MgdTensorData(t);
        (void)MgdTensorName(t);
        break;
      }
      case 14:
        (void)MgdInterpreterGetInputTensorCount(interpreter);
        (void)MgdInterpreterGetOutputTensorCount(interpreter);
        (void)MgdInterpreterAllocateTensors(interpreter);
        break;
      case 15:  // the interpreter keeps what it needs: the model may go first
        MgdModelDelete(model);
        model = nullptr;
        break;
      case 16:
        MgdInterpreterOptionsDelete(options);
        options = nullptr;
        break;
      case 17:
        MgdInterpreterDelete(interpreter);
        interpreter = nullptr;
        break;
      case 18: (void)MgdModelCreateFromFileWithErrorReporter(in.Byte() % 2 ? nullptr : "/nonexistent/m.tflite", Quiet, nullptr); break;
      case 20:    // invokes with the caller's buffers: counts, sizes and NULLs fuzzed
      case 21: {  // the same in flight, waited for or not
        const bool async = in.Byte() % 2;
        const int32_t num_in = in.Int() % 3, num_out = in.Int() % 3;
        std::array<const void*, 2> ins{};
        std::array<void*, 2> outs{};
        std::array<size_t, 2> in_sizes{}, out_sizes{};
        for (size_t k = 0; k < 2; ++k) {
          const MgdTensor* ti = MgdInterpreterGetInputTensor(interpreter, static_cast<int32_t>(k));
          const MgdTensor* to = MgdInterpreterGetOutputTensor(interpreter, static_cast<int32_t>(k));
          in_sizes[k] = in.Byte() % 4 ? MgdTensorByteSize(ti) : in.Byte();
          out_sizes[k] = in.Byte() % 4 ? MgdTensorByteSize(to) : in.Byte();
          ins[k] = in.Byte() % 8 && in_sizes[k] <= 128 ? static_cast<const void*>(buffer.data() + 32 * k) : nullptr;
          outs[k] = in.Byte() % 8 && out_sizes[k] <= 128 ? static_cast<void*>(out_buffer.data() + 32 * k) : nullptr;
        }
        const bool arrays = in.Byte() % 8;
        if (!async) {
          MgdInterpreterInvokeWithBuffers(interpreter, arrays ? ins.data() : nullptr, in_sizes.data(), num_in,
                                          arrays ? outs.data() : nullptr, out_sizes.data(), num_out);
          break;
        }
        MgdInvokeEvent* event = MgdInterpreterInvokeAsync(interpreter, arrays ? ins.data() : nullptr, in_sizes.data(),
                                                          num_in, outs.data(), out_sizes.data(), num_out, nullptr, nullptr);
        if (in.Byte() % 2) (void)MgdInvokeEventWait(event, in.Byte() % 2 ? -1 : 0);
        MgdTiming timing;
        (void)MgdInvokeEventGetTiming(event, in.Byte() % 2 ? &timing : nullptr);
        (void)MgdInvokeEventIsDone(event);
        MgdInvokeEventDelete(event);  // the invoke still completes (before the interpreter goes)
        break;
      }
      case 22:
        MgdInterpreterSetInvokeTimeout(interpreter, in.Int() * 1000);
        MgdInterpreterOptionsSetMaxInFlight(options, in.Int());
        MgdInterpreterOptionsSetMeasureTiming(options, in.Int());
        break;
      case 23: {
        MgdTiming timing;
        (void)MgdInterpreterGetLastTiming(interpreter, in.Byte() % 2 ? &timing : nullptr);
        break;
      }
      case 24: {  // GPU buffers bound to inputs and outputs: indexes, types, layouts fuzzed
        MgdGpuBuffer b{static_cast<MgdGpuBufferType>(in.Byte() % 5), static_cast<uint64_t>(in.Int()), static_cast<int32_t>(in.Int() % 3) - 1,
                       static_cast<uint64_t>(in.Byte()), static_cast<uint64_t>(in.Int()), 0, 0,
                       static_cast<MgdGpuLayout>(in.Byte() % 3)};
        const int32_t index = in.Int() % 4 - 1;
        const MgdGpuBuffer* given = in.Byte() % 4 ? &b : nullptr;
        if (in.Byte() % 2) {
          (void)MgdInterpreterBindInputBuffer(interpreter, index, given);
        } else {
          (void)MgdInterpreterBindOutputBuffer(interpreter, index, given);
        }
        uint64_t bytes = 0;
        int32_t half = 0;
        (void)MgdInterpreterGetGpuBufferBytes(interpreter, in.Byte() % 2, index, b.layout, in.Byte() % 4 ? &bytes : nullptr,
                                              in.Byte() % 2 ? &half : nullptr);
        break;
      }
      case 25: {  // fenced invokes: lists, counts and sync types fuzzed (no fd is ever real: -1)
        std::array<MgdSync, 2> syncs{};
        for (MgdSync& sync : syncs) sync = {static_cast<MgdSyncType>(in.Byte() % 6), static_cast<uint64_t>(in.Int()), 0, -1};
        MgdSync made{static_cast<MgdSyncType>(in.Byte() % 6), 0, 0, -1};
        const MgdFences fences{in.Byte() % 4 ? syncs.data() : nullptr, static_cast<int32_t>(in.Int() % 4) - 1,
                               in.Byte() % 4 ? syncs.data() + 1 : nullptr, static_cast<int32_t>(in.Int() % 3) - 1,
                               in.Byte() % 2 ? &made : nullptr};
        if (interpreter == nullptr) {
          (void)MgdInterpreterInvokeFenced(nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, &fences);
          break;
        }
        std::array<const void*, 1> ins{buffer.data()};
        std::array<void*, 2> outs{out_buffer.data(), out_buffer.data() + 32};
        std::array<size_t, 2> sizes{MgdTensorByteSize(MgdInterpreterGetInputTensor(interpreter, 0)),
                                    MgdTensorByteSize(MgdInterpreterGetOutputTensor(interpreter, 0))};
        if (sizes[0] > 128 || sizes[1] > 128) break;
        const std::array<size_t, 2> out_sizes{sizes[1], sizes[1]};
        if (in.Byte() % 2) {
          (void)MgdInterpreterInvokeFenced(interpreter, ins.data(), sizes.data(), 1, outs.data(), out_sizes.data(), 1,
                                           in.Byte() % 4 ? &fences : nullptr);
        } else if (MgdInvokeEvent* e = MgdInterpreterInvokeAsyncFenced(interpreter, ins.data(), sizes.data(), 1, outs.data(),
                                                                     out_sizes.data(), 1, in.Byte() % 4 ? &fences : nullptr,
                                                                     nullptr, nullptr)) {
          (void)MgdInvokeEventWait(e, -1);
          MgdInvokeEventDelete(e);
        }
        break;
      }
      default: (void)MgdOpNodeNumInputs(nullptr); break;
    }
  }
  MgdInterpreterDelete(interpreter);
  MgdInterpreterOptionsDelete(options);
  MgdModelDelete(model);
  return 0;
}
