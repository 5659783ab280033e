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
};

class Runner {
 public:
  // Null with `error` set when the delegate, the model or the pipeline cannot be made.
  static std::unique_ptr<Runner> Create(const Options& options, const Engine& engine, std::string& error);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  bool Process(const Frame& frame, Overlay& overlay, StageTimes& times, std::string& error);

  std::string backend() const { return backend_; }  // vulkan, gl or cpu
  std::string device() const { return device_; }
  bool fp16() const { return fp16_; }

 private:
  Runner() = default;
  bool ProcessSolution(const Frame& frame, Overlay& overlay, StageTimes& times, std::string& error);
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
};

}  // namespace view
