// Runs a solution (mgd/pipeline.h) or a plain model (mgd/c_api.h) on
// frames, through mgd's public C API, and says what to draw.
#pragma once

#include <mgd/c_api.h>
#include <mgd/gpu_delegate.h>
#include <mgd/pipeline.h>

#include <memory>
#include <string>
#include <vector>

#include "frames.h"
#include "options.h"
#include "overlay.h"

namespace view {

// Which engine runs the model: the user's choice, changed by the f and b keys.
struct Engine {
  std::string backend;  // auto, vulkan, gl or cpu
  bool fp16 = false;
  // The window's EGL display and context (0: not EGL): a GL delegate is
  // made on them, sharing the window's objects, where the driver allows.
  uint64_t egl_display = 0, egl_context = 0;
};

class Runner {
 public:
  // Null with `error` set when the delegate, the model or the pipeline cannot be made.
  static std::unique_ptr<Runner> Create(const Options& options, const Engine& engine, std::string& error);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // `frame_buffer`: the frame already in a GL buffer the delegate shares
  // (0: from host memory).
  bool Process(const Frame& frame, unsigned frame_buffer, Overlay& overlay, StageTimes& times, std::string& error);

  // Whether the delegate shares the window's GL objects; if not, why.
  bool shares_window() const { return shares_window_; }
  const std::string& sharing_note() const { return sharing_note_; }
  bool is_solution() const { return pipeline_ != nullptr; }
  // A plain model whose output is a map (drawn as a heat map): its size in
  // BHWC float32 bytes, for a buffer to bind it to; 0 when it is none.
  uint64_t MapOutputBytes() const;
  // Binds the output to a GL buffer of the window (shares_window()): the
  // model then writes it there and the window draws it from there.
  bool BindOutput(unsigned gl_buffer, std::string& error);
  bool output_bound() const { return output_buffer_ != 0; }

  std::string backend() const { return backend_; }  // vulkan, gl or cpu
  std::string device() const { return device_; }
  bool fp16() const { return fp16_; }

 private:
  Runner() = default;
  bool ProcessSolution(const Frame& frame, unsigned frame_buffer, Overlay& overlay, StageTimes& times, std::string& error);
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
  unsigned output_buffer_ = 0;
};

}  // namespace view
