// include/mgd/pipeline.h over pipeline::Pipeline.
#include "mgd/pipeline.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "interpreter/c_api_parts.h"
#include "pipeline/pipeline.h"

struct MgdPipeline {
  Reporter reporter;
  std::unique_ptr<mgd::Delegate> delegate;  // the app's, as the interpreter takes it
  std::unique_ptr<mgd::pipeline::Pipeline> pipeline;
  std::vector<int32_t> connections;  // the spec's pairs, flat
};

struct MgdPipelineResult {
  mgd::pipeline::Result result;
};

namespace {

// Reports `status` (prefixed with the call) and returns null.
template <typename T>
T* Fail(const Reporter& reporter, const char* call, const absl::Status& status) {
  reporter(fmt::format("{}: {}", call, std::string(status.message())));
  return nullptr;
}

MgdPipelineResult* Finish(MgdPipeline* p, const char* call, absl::StatusOr<mgd::pipeline::Result> result) {
  if (!result.ok()) return Fail<MgdPipelineResult>(p->reporter, call, result.status());
  auto out = std::make_unique<MgdPipelineResult>();
  out->result = std::move(*result);
  return out.release();
}

}  // namespace

extern "C" {

MgdPipelineOptions MgdPipelineOptionsDefault(void) {
  MgdPipelineOptions o;
  std::memset(&o, 0, sizeof(o));
  o.solution = "face";
  return o;
}

MgdPipeline* MgdPipelineCreate(const MgdPipelineOptions* options) {
  if (options == nullptr) return Fail<MgdPipeline>(mgd::c_api::kStderr, "MgdPipelineCreate", absl::InvalidArgumentError("options is NULL"));
  auto p = std::make_unique<MgdPipeline>();
  p->reporter = Reporter{options->reporter, options->reporter_data, nullptr};
  if (options->solution == nullptr) {
    return Fail<MgdPipeline>(p->reporter, "MgdPipelineCreate", absl::InvalidArgumentError("options->solution is NULL"));
  }
  mgd::pipeline::PipelineOptions po;
  po.models_dir = options->models_dir != nullptr ? options->models_dir : ".";
  const Reporter report = p->reporter;
  po.logger = [report](mgd::LogLevel level, const std::string& message) {
    if (level >= mgd::LogLevel::kWarning) report(message);
  };
  if (MgdDelegate* d = options->delegate; d != nullptr) {
    if (const std::string problem = mgd::c_api::DelegateProblem(*d); !problem.empty()) {
      return Fail<MgdPipeline>(p->reporter, "MgdPipelineCreate", absl::InvalidArgumentError(problem));
    }
    p->delegate = d->native_delegate != nullptr
                      ? mgd::c_api::NewBorrowedDelegate(static_cast<mgd::Delegate*>(d->native_delegate))
                      : mgd::c_api::NewCDelegate(d, &p->reporter);
    po.delegates.push_back(p->delegate.get());
  }
  auto pipeline = mgd::pipeline::Pipeline::Create(options->solution, std::move(po));
  if (!pipeline.ok()) return Fail<MgdPipeline>(p->reporter, "MgdPipelineCreate", pipeline.status());
  p->pipeline = std::move(*pipeline);
  if (const auto& landmarks = p->pipeline->spec().landmarks) {
    for (const auto& [a, b] : landmarks->connections) {
      p->connections.push_back(a);
      p->connections.push_back(b);
    }
  }
  return p.release();
}

void MgdPipelineDelete(MgdPipeline* pipeline) { delete pipeline; }

MgdPipelineResult* MgdPipelineProcess(MgdPipeline* pipeline, const uint8_t* pixels, int32_t width, int32_t height,
                                      int32_t channels, size_t row_bytes) {
  const char* call = "MgdPipelineProcess";
  if (pipeline == nullptr) return Fail<MgdPipelineResult>(mgd::c_api::kStderr, call, absl::InvalidArgumentError("pipeline is NULL"));
  if (pixels == nullptr) return Fail<MgdPipelineResult>(pipeline->reporter, call, absl::InvalidArgumentError("pixels is NULL"));
  if (width <= 0 || height <= 0 || width > mgd::pipeline::kMaxImageSide || height > mgd::pipeline::kMaxImageSide ||
      static_cast<int64_t>(width) * height > mgd::pipeline::kMaxImagePixels) {
    return Fail<MgdPipelineResult>(pipeline->reporter, call,
                                   absl::InvalidArgumentError(fmt::format("an image of {}x{} pixels", width, height)));
  }
  if (channels != 3 && channels != 4) {
    return Fail<MgdPipelineResult>(pipeline->reporter, call,
                                   absl::InvalidArgumentError(fmt::format("{} channels (3: RGB, 4: RGBA)", channels)));
  }
  const size_t row = static_cast<size_t>(width) * static_cast<size_t>(channels);
  if (row_bytes < row) {
    return Fail<MgdPipelineResult>(
        pipeline->reporter, call, absl::InvalidArgumentError(fmt::format("row_bytes {} is less than a row's {} bytes", row_bytes, row)));
  }
  mgd::pipeline::Image image{width, height, channels, std::vector<uint8_t>(row * static_cast<size_t>(height))};
  for (int32_t y = 0; y < height; ++y) std::memcpy(&image.pixels[row * static_cast<size_t>(y)], pixels + row_bytes * static_cast<size_t>(y), row);
  return Finish(pipeline, call, pipeline->pipeline->Process(image));
}

MgdPipelineResult* MgdPipelineProcessGpuBuffer(MgdPipeline* pipeline, const MgdGpuBuffer* buffer, int32_t width,
                                               int32_t height, int32_t channels) {
  const char* call = "MgdPipelineProcessGpuBuffer";
  if (pipeline == nullptr) return Fail<MgdPipelineResult>(mgd::c_api::kStderr, call, absl::InvalidArgumentError("pipeline is NULL"));
  if (buffer == nullptr) return Fail<MgdPipelineResult>(pipeline->reporter, call, absl::InvalidArgumentError("buffer is NULL"));
  auto b = mgd::c_api::ReadGpuBuffer(*buffer);
  if (!b.ok()) return Fail<MgdPipelineResult>(pipeline->reporter, call, b.status());
  if (buffer->layout != kMgdGpuLayoutBhwc) {
    return Fail<MgdPipelineResult>(pipeline->reporter, call,
                                   absl::InvalidArgumentError("an image's buffer is laid out as its rows (kMgdGpuLayoutBhwc)"));
  }
  return Finish(pipeline, call, pipeline->pipeline->Process(mgd::pipeline::GpuImage{width, height, channels, *b}));
}

MgdPipelineResult* MgdPipelineProcessFile(MgdPipeline* pipeline, const char* path) {
  const char* call = "MgdPipelineProcessFile";
  if (pipeline == nullptr) return Fail<MgdPipelineResult>(mgd::c_api::kStderr, call, absl::InvalidArgumentError("pipeline is NULL"));
  if (path == nullptr) return Fail<MgdPipelineResult>(pipeline->reporter, call, absl::InvalidArgumentError("path is NULL"));
  auto image = mgd::pipeline::ReadImage(path);
  if (!image.ok()) return Fail<MgdPipelineResult>(pipeline->reporter, call, image.status());
  return Finish(pipeline, call, pipeline->pipeline->Process(*image));
}

MgdStatus MgdPipelineResetTracking(MgdPipeline* pipeline) {
  if (pipeline == nullptr) {
    Fail<void>(mgd::c_api::kStderr, "MgdPipelineResetTracking", absl::InvalidArgumentError("pipeline is NULL"));
    return kMgdError;
  }
  pipeline->pipeline->ResetTracking();
  return kMgdOk;
}

int32_t MgdPipelineResultDetectionCount(const MgdPipelineResult* result) {
  return result != nullptr ? static_cast<int32_t>(result->result.detections.size()) : 0;
}

MgdStatus MgdPipelineResultGetDetection(const MgdPipelineResult* result, int32_t index, MgdPipelineDetection* detection) {
  if (result == nullptr || detection == nullptr || index < 0 ||
      static_cast<size_t>(index) >= result->result.detections.size()) {
    Fail<void>(mgd::c_api::kStderr, "MgdPipelineResultGetDetection",
               absl::InvalidArgumentError(result == nullptr      ? "result is NULL"
                                          : detection == nullptr ? "detection is NULL"
                                                                 : fmt::format("no detection {} of {}", index,
                                                                               result->result.detections.size())));
    return kMgdError;
  }
  const mgd::pipeline::Detection& d = result->result.detections[static_cast<size_t>(index)];
  detection->score = d.score;
  std::memcpy(detection->box, d.box.data(), sizeof(detection->box));
  detection->num_keypoints = static_cast<int32_t>(d.keypoints.size());
  detection->keypoints = d.keypoints.empty() ? nullptr : d.keypoints[0].data();
  detection->num_landmarks = static_cast<int32_t>(d.landmarks.size());
  detection->landmarks = d.landmarks.empty() ? nullptr : d.landmarks[0].data();
  detection->visibility = d.visibility.empty() ? nullptr : d.visibility.data();
  detection->label = d.label.c_str();
  detection->label_score = d.label_score;
  return kMgdOk;
}

const float* MgdPipelineResultMask(const MgdPipelineResult* result, int32_t* width, int32_t* height) {
  const bool has = result != nullptr && result->result.mask.has_value();
  if (width != nullptr) *width = has ? result->result.mask->width : 0;
  if (height != nullptr) *height = has ? result->result.mask->height : 0;
  return has ? result->result.mask->values.data() : nullptr;
}

int32_t MgdPipelineResultSubmissions(const MgdPipelineResult* result) { return result != nullptr ? result->result.submissions : 0; }

int32_t MgdPipelineResultDetectorRan(const MgdPipelineResult* result) {
  return result != nullptr && result->result.detector_ran ? 1 : 0;
}

double MgdPipelineResultInvokeMilliseconds(const MgdPipelineResult* result) {
  return result != nullptr ? result->result.invoke_ms : 0.0;
}

void MgdPipelineResultDelete(MgdPipelineResult* result) { delete result; }

int32_t MgdPipelineGetConnections(const MgdPipeline* pipeline, const int32_t** pairs) {
  const bool has = pipeline != nullptr && !pipeline->connections.empty();
  if (pairs != nullptr) *pairs = has ? pipeline->connections.data() : nullptr;
  return has ? static_cast<int32_t>(pipeline->connections.size() / 2) : 0;
}

MgdImage* MgdImageReadFile(const char* path, MgdErrorReporter reporter, void* reporter_data) {
  const Reporter report{reporter, reporter_data, nullptr};
  if (path == nullptr) return Fail<MgdImage>(report, "MgdImageReadFile", absl::InvalidArgumentError("path is NULL"));
  auto image = mgd::pipeline::ReadImage(path);
  if (!image.ok()) return Fail<MgdImage>(report, "MgdImageReadFile", image.status());
  auto* out = new MgdImage{image->width, image->height, image->channels, new uint8_t[image->pixels.size()]};
  std::memcpy(out->pixels, image->pixels.data(), image->pixels.size());
  return out;
}

MgdStatus MgdImageWritePng(const MgdImage* image, const char* path, MgdErrorReporter reporter, void* reporter_data) {
  const Reporter report{reporter, reporter_data, nullptr};
  const char* call = "MgdImageWritePng";
  absl::Status status = absl::OkStatus();
  if (image == nullptr || image->pixels == nullptr || path == nullptr) {
    status = absl::InvalidArgumentError(path == nullptr ? "path is NULL" : "image or its pixels is NULL");
  } else if (image->width <= 0 || image->height <= 0 || image->width > mgd::pipeline::kMaxImageSide ||
             image->height > mgd::pipeline::kMaxImageSide || (image->channels != 3 && image->channels != 4)) {
    status = absl::InvalidArgumentError(
        fmt::format("an image of {}x{} pixels, {} channels", image->width, image->height, image->channels));
  } else {
    const size_t bytes = static_cast<size_t>(image->width) * static_cast<size_t>(image->height) *
                         static_cast<size_t>(image->channels);
    mgd::pipeline::Image copy{image->width, image->height, image->channels,
                              std::vector<uint8_t>(image->pixels, image->pixels + bytes)};
    status = mgd::pipeline::WritePng(copy, path);
  }
  if (status.ok()) return kMgdOk;
  Fail<void>(report, call, status);
  return kMgdError;
}

void MgdImageDelete(MgdImage* image) {
  if (image == nullptr) return;
  delete[] image->pixels;
  delete image;
}

}  // extern "C"
