#include "runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>

namespace view {
namespace {

void Collect(void* error, const char* message) { *static_cast<std::string*>(error) = message; }

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string Fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, v);
  return text;
}

// A plain model's output as a heat map: one channel as it is, two (a
// background/foreground pair) the second, more the largest of them.
Grid HeatOf(const float* data, int height, int width, int channels) {
  Grid grid{width, height, std::vector<float>(static_cast<size_t>(width) * height)};
  for (size_t i = 0; i < grid.values.size(); ++i) {
    const float* v = data + i * channels;
    grid.values[i] = channels == 2 ? v[1] : *std::max_element(v, v + channels);
  }
  const auto [lo, hi] = std::minmax_element(grid.values.begin(), grid.values.end());
  // Probabilities keep their scale, so that a frame with nothing in it looks empty.
  if (*lo >= 0.0f && *hi <= 1.0f) return grid;
  grid.lo = *lo;
  grid.hi = *hi > *lo ? *hi : *lo + 1.0f;
  return grid;
}

}  // namespace

std::unique_ptr<Runner> Runner::Create(const Options& options, const Engine& engine, std::string& error) {
  std::unique_ptr<Runner> r(new Runner);
  r->fp16_ = engine.fp16 && engine.backend != "cpu";
  r->input_min_ = options.input_min;
  r->input_max_ = options.input_max;
  if (engine.backend != "cpu") {
    MgdGpuDelegateOptions o = MgdGpuDelegateOptionsDefault();
    o.api = engine.backend == "vulkan" ? kMgdGpuApiVulkan : engine.backend == "gl" ? kMgdGpuApiGles : kMgdGpuApiAuto;
    o.precision_loss_allowed = r->fp16_ ? 1 : 0;
    o.cache_dir = options.cache_dir.empty() ? nullptr : options.cache_dir.c_str();
    if (engine.backend == "gl" && engine.egl_display != 0) {
      o.egl_display = engine.egl_display;
      o.egl_share_context = engine.egl_context;
      r->delegate_ = MgdGpuDelegateCreate(&o, Collect, &r->error_);
      r->shares_window_ = r->delegate_ != nullptr;
      // Not on this display (another GPU, or a driver without shared
      // configless contexts): a display of mgd's own, through host memory.
      if (r->delegate_ == nullptr) r->sharing_note_ = "not shared with the window: " + r->error_;
      o.egl_display = o.egl_share_context = 0;
    } else if (engine.backend == "gl") {
      r->sharing_note_ = "the window is not on EGL";
    }
    if (r->delegate_ == nullptr) r->delegate_ = MgdGpuDelegateCreate(&o, Collect, &r->error_);
    if (r->delegate_ == nullptr) {
      error = r->error_;
      return nullptr;
    }
    MgdGpuInterop interop;
    MgdGpuDelegateGetInterop(r->delegate_, &interop);
    r->backend_ = interop.api == kMgdGpuApiVulkan ? "vulkan" : "gl";
    r->device_ = MgdGpuDelegateGetDeviceName(r->delegate_);
    if (interop.api == kMgdGpuApiVulkan && engine.window_gl) {
      r->sharing_note_ = VulkanSharingProblem(r->delegate_);
      r->shares_window_ = r->sharing_note_.empty();
      if (!r->shares_window_) r->sharing_note_ = "not shared with the window: " + r->sharing_note_;
    }
  } else {
    r->backend_ = "cpu";
    r->device_ = "the CPU";
  }
  if (!options.IsModel()) {
    MgdPipelineOptions o = MgdPipelineOptionsDefault();
    o.solution = options.target.c_str();
    o.models_dir = options.models_dir.c_str();
    o.delegate = r->delegate_;
    o.reporter = Collect;
    o.reporter_data = &r->error_;
    r->pipeline_ = MgdPipelineCreate(&o);
    if (r->pipeline_ == nullptr) {
      error = r->error_;
      return nullptr;
    }
    return r;
  }
  r->model_ = MgdModelCreateFromFileWithErrorReporter(options.target.c_str(), Collect, &r->error_);
  MgdInterpreterOptions* io = MgdInterpreterOptionsCreate();
  MgdInterpreterOptionsSetErrorReporter(io, Collect, &r->error_);
  if (r->delegate_ != nullptr) MgdInterpreterOptionsAddDelegate(io, r->delegate_);
  if (r->model_ != nullptr) r->interpreter_ = MgdInterpreterCreate(r->model_, io);
  MgdInterpreterOptionsDelete(io);
  if (r->interpreter_ == nullptr || MgdInterpreterAllocateTensors(r->interpreter_) != kMgdOk) {
    error = r->error_;
    return nullptr;
  }
  const MgdTensor* input = MgdInterpreterGetInputTensor(r->interpreter_, 0);
  const MgdType type = MgdTensorType(input);
  const int channels = MgdTensorNumDims(input) == 4 ? MgdTensorDim(input, 3) : 0;
  if (MgdInterpreterGetInputTensorCount(r->interpreter_) != 1 || (type != kMgdFloat32 && type != kMgdUInt8) ||
      (channels != 1 && channels != 3 && channels != 4)) {
    error = options.target + ": input '" + MgdTensorName(input) +
            "' is not an image (the viewer feeds one float32 or uint8 input of shape [1, height, width, 1|3|4])";
    return nullptr;
  }
  if (!options.labels.empty()) {
    std::ifstream in(options.labels);
    if (!in) {
      error = options.labels + ": cannot open the labels";
      return nullptr;
    }
    for (std::string line; std::getline(in, line);) r->labels_.push_back(line);
  }
  return r;
}

Runner::~Runner() {
  MgdPipelineDelete(pipeline_);
  MgdInterpreterDelete(interpreter_);
  MgdModelDelete(model_);
  frame_buffers_.clear();  // after what bound them, before their device
  output_buffer_.reset();
  if (delegate_ != nullptr) MgdGpuDelegateDelete(delegate_);
}

unsigned Runner::SharedFrameBuffer(size_t bytes) {
  if (!shares_window_) return 0;
  std::unique_ptr<SharedBuffer>& buffer = frame_buffers_[bytes];
  if (buffer == nullptr) {
    std::string why;
    buffer = MakeSharedBuffer(delegate_, bytes, why);
    if (buffer == nullptr) {
      frame_buffers_.erase(bytes);
      frame_buffer_ = nullptr;
      shares_window_ = false;
      sharing_note_ = "not shared with the window: " + why;
      return 0;
    }
  }
  frame_buffer_ = buffer.get();
  return frame_buffer_->gl_buffer();
}

bool Runner::Process(const Frame& frame, bool frame_on_gpu, Overlay& overlay, StageTimes& times, std::string& error) {
  overlay = Overlay{};
  return pipeline_ != nullptr ? ProcessSolution(frame, frame_on_gpu, overlay, times, error)
                              : ProcessModel(frame, overlay, times, error);
}

bool Runner::ProcessSolution(const Frame& frame, bool frame_on_gpu, Overlay& overlay, StageTimes& times,
                             std::string& error) {
  const auto start = std::chrono::steady_clock::now();
  MgdPipelineResult* result = nullptr;
  if (frame_on_gpu && frame_buffer_ != nullptr) {
    const MgdGpuBuffer buffer = frame_buffer_->mgd_buffer();
    result = MgdPipelineProcessGpuBuffer(pipeline_, &buffer, frame.width, frame.height, frame.channels);
  } else {
    result = MgdPipelineProcess(pipeline_, frame.pixels.data(), frame.width, frame.height, frame.channels,
                                static_cast<size_t>(frame.width) * frame.channels);
  }
  if (result == nullptr) {
    error = error_;
    return false;
  }
  const double call_ms = MsSince(start);
  const auto post = std::chrono::steady_clock::now();
  times.model = MgdPipelineResultInvokeMilliseconds(result);
  const int32_t* pairs = nullptr;
  const int32_t connections = MgdPipelineGetConnections(pipeline_, &pairs);
  for (int32_t i = 0; i < MgdPipelineResultDetectionCount(result); ++i) {
    MgdPipelineDetection d;
    MgdPipelineResultGetDetection(result, i, &d);
    overlay.boxes.push_back({d.box[0], d.box[1], d.box[2], d.box[3]});
    for (int32_t k = 0; k < d.num_keypoints; ++k) overlay.keypoints.push_back({d.keypoints[2 * k], d.keypoints[2 * k + 1]});
    for (int32_t k = 0; k < d.num_landmarks; ++k) overlay.landmarks.push_back({d.landmarks[3 * k], d.landmarks[3 * k + 1]});
    for (int32_t c = 0; c < connections; ++c) {
      const int32_t a = pairs[2 * c], b = pairs[2 * c + 1];
      if (a >= d.num_landmarks || b >= d.num_landmarks) continue;
      overlay.lines.push_back({d.landmarks[3 * a], d.landmarks[3 * a + 1], d.landmarks[3 * b], d.landmarks[3 * b + 1]});
    }
    const std::string label = *d.label != '\0' ? std::string(d.label) + " " + Fixed(d.label_score, 2) : Fixed(d.score, 2);
    overlay.labels.push_back({{d.box[0], d.box[1]}, label});
  }
  int32_t mask_width = 0, mask_height = 0;
  if (const float* mask = MgdPipelineResultMask(result, &mask_width, &mask_height)) {
    overlay.mask = Grid{mask_width, mask_height,
                        std::vector<float>(mask, mask + static_cast<size_t>(mask_width) * mask_height)};
  }
  MgdPipelineResultDelete(result);
  // The call's part beyond the invokes is the host's: tracking, crops, results.
  times.post = std::max(0.0, call_ms - times.model) + MsSince(post);
  return true;
}

// The frame resized (nearest) to the input's size, scaled to the input's
// range for a float input.
void Runner::FillInput(const Frame& frame, MgdTensor* input) const {
  const int height = MgdTensorDim(input, 1), width = MgdTensorDim(input, 2), channels = MgdTensorDim(input, 3);
  const bool is_float = MgdTensorType(input) == kMgdFloat32;
  auto* f = static_cast<float*>(MgdTensorData(input));
  auto* u = static_cast<uint8_t*>(MgdTensorData(input));
  const float scale = (input_max_ - input_min_) / 255.0f;
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(frame.height - 1, static_cast<int>((y + 0.5f) * frame.height / height));
    for (int x = 0; x < width; ++x) {
      const int sx = std::min(frame.width - 1, static_cast<int>((x + 0.5f) * frame.width / width));
      const uint8_t* p = &frame.pixels[(static_cast<size_t>(sy) * frame.width + sx) * frame.channels];
      for (int c = 0; c < channels; ++c) {
        const uint8_t v = channels == 1 ? static_cast<uint8_t>((p[0] * 77 + p[1] * 150 + p[2] * 29) >> 8)
                                        : c < frame.channels ? p[c] : 255;
        const size_t i = (static_cast<size_t>(y) * width + x) * channels + c;
        if (is_float) {
          f[i] = input_min_ + v * scale;
        } else {
          u[i] = v;
        }
      }
    }
  }
}

// [1,] height, width, channels (1-4): a map over the frame.
uint64_t Runner::MapOutputBytes() const {
  if (interpreter_ == nullptr) return 0;
  const MgdTensor* out = MgdInterpreterGetOutputTensor(interpreter_, 0);
  const int rank = MgdTensorNumDims(out);
  if (MgdTensorType(out) != kMgdFloat32 || (rank != 3 && !(rank == 4 && MgdTensorDim(out, 0) == 1))) return 0;
  const int h = MgdTensorDim(out, rank - 3), w = MgdTensorDim(out, rank - 2), c = MgdTensorDim(out, rank - 1);
  return h > 1 && w > 1 && c >= 1 && c <= 4 ? static_cast<uint64_t>(MgdTensorByteSize(out)) : 0;
}

unsigned Runner::BindMapOutput(std::string& error) {
  std::unique_ptr<SharedBuffer> buffer = MakeSharedBuffer(delegate_, MapOutputBytes(), error);
  if (buffer == nullptr) return 0;
  const MgdGpuBuffer b = buffer->mgd_buffer();
  if (MgdInterpreterBindOutputBuffer(interpreter_, 0, &b) != kMgdOk) {
    error = error_;
    return 0;
  }
  output_buffer_ = std::move(buffer);
  return output_buffer_->gl_buffer();
}

bool Runner::ProcessModel(const Frame& frame, Overlay& overlay, StageTimes& times, std::string& error) {
  auto start = std::chrono::steady_clock::now();
  FillInput(frame, MgdInterpreterGetInputTensor(interpreter_, 0));
  times.pre = MsSince(start);
  start = std::chrono::steady_clock::now();
  if (MgdInterpreterInvoke(interpreter_) != kMgdOk) {
    error = error_;
    return false;
  }
  times.model = MsSince(start);
  start = std::chrono::steady_clock::now();
  const MgdTensor* out = MgdInterpreterGetOutputTensor(interpreter_, 0);
  const int rank = MgdTensorNumDims(out);
  // [1,] height, width, channels: a map over the frame.
  const int h = rank >= 3 ? MgdTensorDim(out, rank - 3) : 0, w = rank >= 3 ? MgdTensorDim(out, rank - 2) : 0;
  if (output_buffer_ != nullptr) {
    overlay.gpu_heat = GpuGrid{output_buffer_->gl_buffer(), w, h, MgdTensorDim(out, rank - 1)};
    overlay.notes.push_back(std::string("heat map of '") + MgdTensorName(out) + "', drawn from the GPU");
  } else if (MgdTensorType(out) != kMgdFloat32) {
    overlay.notes.push_back(std::string("output '") + MgdTensorName(out) + "' is not float32: not shown");
  } else if ((rank == 3 || (rank == 4 && MgdTensorDim(out, 0) == 1)) && h > 1 && w > 1) {
    const int c = MgdTensorDim(out, rank - 1);
    overlay.heat = HeatOf(static_cast<const float*>(MgdTensorData(out)), h, w, c);
    overlay.notes.push_back(std::string("heat map of '") + MgdTensorName(out) + "' (" + std::to_string(w) + "x" +
                            std::to_string(h) + "x" + std::to_string(c) + ")");
  } else {
    const auto* v = static_cast<const float*>(MgdTensorData(out));
    std::vector<int> order(MgdTensorByteSize(out) / sizeof(float));
    std::iota(order.begin(), order.end(), 0);
    const size_t top = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(top), order.end(),
                      [v](int a, int b) { return v[a] > v[b]; });
    for (size_t i = 0; i < top; ++i) {
      const int k = order[i];
      const std::string name = static_cast<size_t>(k) < labels_.size() ? labels_[k] : "class " + std::to_string(k);
      overlay.notes.push_back(name + ": " + Fixed(v[k], 3));
    }
  }
  times.post = MsSince(start);
  return true;
}

}  // namespace view
