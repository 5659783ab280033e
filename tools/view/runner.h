// Runs a solution (mgd/pipeline.h) or a plain model (mgd/c_api.h) on
// frames, through mgd's public C API, and says what to draw.
#pragma once

#include <mgd/c_api.h>
#include <mgd/gpu_delegate.h>
#include <mgd/pipeline.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frames.h"
#include "options.h"
#include "overlay.h"
#include "shared_buffers.h"

namespace view {

// Which engine runs the model: the user's choice, changed by the f and b keys.
struct Engine {
  std::string backend;  // auto, vulkan, gl or cpu
  bool fp16 = false;
  // The window's EGL display and context (0: not EGL): a GL delegate is
  // made on them, sharing the window's objects, where the driver allows.
  uint64_t egl_display = 0, egl_context = 0;
  bool window_gl = false;  // a window's GL context is current (shared buffers are possible)
};

class Runner {
 public:
  // Null with `error` set when the delegate, the model or the pipeline cannot be made.
  static std::unique_ptr<Runner> Create(const Options& options, const Engine& engine, std::string& error);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // `frame_on_gpu`: the window has put the frame into SharedFrameBuffer's
  // buffer (else it is read from host memory).
  bool Process(const Frame& frame, bool frame_on_gpu, Overlay& overlay, StageTimes& times, std::string& error);

  // Whether the delegate and the window share buffers (shared_buffers.h):
  // a GL delegate on the window's context, or Vulkan memory GL imports;
  // if not, why.
  bool shares_window() const { return shares_window_; }
  const std::string& sharing_note() const { return sharing_note_; }
  bool is_solution() const { return pipeline_ != nullptr; }
  // The window's GL buffer for a solution's frame of `bytes` (shares_window()),
  // made on first use; 0 (and no sharing from then on) when it cannot be made.
  unsigned SharedFrameBuffer(size_t bytes);
  // A plain model whose output is a map (drawn as a heat map): its size in
  // BHWC float32 bytes; 0 when it is none.
  uint64_t MapOutputBytes() const;
  // Binds a map output to a buffer the window shares: the model writes it
  // there and the window draws it from there. The window's GL buffer, or 0
  // (said in `error`) when it stays in host memory.
  unsigned BindMapOutput(std::string& error);
  bool output_bound() const { return output_buffer_ != nullptr; }

  std::string backend() const { return backend_; }  // vulkan, gl or cpu
  std::string device() const { return device_; }
  bool fp16() const { return fp16_; }

 private:
  Runner() = default;
  bool ProcessSolution(const Frame& frame, bool frame_on_gpu, Overlay& overlay, StageTimes& times, std::string& error);
  bool ProcessModel(const Frame& frame, Overlay& overlay, StageTimes& times, std::string& error);
  void FillInput(const Frame& frame, MgdTensor* input) const;

  std::string error_;  // what the C API last reported
  MgdDelegate* delegate_ = nullptr;
  MgdPipeline* pipeline_ = nullptr;
  MgdModel* model_ = nullptr;
  MgdInterpreter* interpreter_ = nullptr;
  std::vector<std::string> labels_;
  float input_min_ = -1.0f, input_max_ = 1.0f;
  std::string backend_, device_;
  bool fp16_ = false;
  bool shares_window_ = false;
  std::string sharing_note_;
  // Shared with the window. A frame buffer per frame size: the pipeline keeps
  // each size's graphs bound to theirs (mgd/pipeline.h), so none is freed
  // while the pipeline lives.
  std::map<size_t, std::unique_ptr<SharedBuffer>> frame_buffers_;
  SharedBuffer* frame_buffer_ = nullptr;  // this frame's
  std::unique_ptr<SharedBuffer> output_buffer_;
};

}  // namespace view
