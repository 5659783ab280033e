// mgd pipeline: a MediaPipe solution end to end on an image (pipeline/):
// what it found in image pixels, and a picture of it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

#include "model/status_macros.h"
#include "model/writer.h"
#include "pipeline/annotate.h"
#include "pipeline/pipeline.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

nlohmann::json DetectionsJson(const pipeline::Result& result) {
  nlohmann::json list = nlohmann::json::array();
  for (const pipeline::Detection& d : result.detections) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : d.keypoints) points.push_back({p[0], p[1]});
    nlohmann::json entry = {{"score", d.score}, {"box", {d.box[0], d.box[1], d.box[2], d.box[3]}}, {"keypoints", points}};
    if (!d.landmarks.empty()) {
      nlohmann::json landmarks = nlohmann::json::array();
      for (const auto& p : d.landmarks) landmarks.push_back({p[0], p[1], p[2]});
      entry["landmarks"] = landmarks;
    }
    if (!d.visibility.empty()) entry["visibility"] = d.visibility;
    if (!d.label.empty()) entry["label"] = {{"name", d.label}, {"score", d.label_score}};
    list.push_back(std::move(entry));
  }
  return list;
}

nlohmann::json MaskJson(const pipeline::Mask& mask) {
  const pipeline::MaskSummary s = pipeline::Summarize(mask);
  return {{"width", mask.width},
          {"height", mask.height},
          {"coverage", s.coverage},
          {"mean", s.mean},
          {"box", {s.box[0], s.box[1], s.box[2], s.box[3]}}};
}

// OUT for one image; OUT's stem with _<k> for several.
std::string AnnotatedPath(const std::string& out, size_t k, size_t count) {
  if (count == 1) return out;
  const size_t dot = out.rfind('.');
  const std::string stem = dot == std::string::npos ? out : out.substr(0, dot);
  return fmt::format("{}_{}.png", stem, k);
}

}  // namespace

absl::Status Pipeline(const PipelineOptions& options) {
  RunOptions run;
  run.backend = options.backend;
  run.precision = options.precision;
  run.cache_dir = options.cache_dir;
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(run));
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(options.backend, gpu_options));
  pipeline::PipelineOptions po;
  po.models_dir = options.models_dir;
  po.measure_timing = options.repeat > 1;
  if (backend.delegate) po.delegates.push_back(backend.delegate.get());
  MGD_ASSIGN_OR_RETURN(std::unique_ptr<pipeline::Pipeline> p, pipeline::Pipeline::Create(options.solution, po));
  nlohmann::json images = nlohmann::json::array();
  std::string text;
  for (size_t k = 0; k < options.images.size(); ++k) {
    const std::string& path = options.images[k];
    MGD_ASSIGN_OR_RETURN(pipeline::Image image, pipeline::ReadImage(path));
    if (k == 0 && !options.save_graphs.empty()) {
      MGD_ASSIGN_OR_RETURN(auto graphs, p->Graphs(image));
      for (const auto& [stage, graph] : graphs) {
        const std::string file = fmt::format("{}/{}_{}.tflite", options.save_graphs, options.solution, stage);
        if (absl::Status s = WriteModelFile(graph, file); !s.ok()) return s;
        text += fmt::format("{} graph: {}\n", stage, file);
      }
    }
    auto result = p->Process(image);
    if (!result.ok()) return absl::Status(result.status().code(), fmt::format("{}: {}", path, result.status().message()));
    // Later frames of the same scene: what an app's steady state costs
    // (Process end to end: uploads, submissions, downloads, host work).
    std::vector<double> frame_ms, gpu_ms;
    int tracked = 0;
    for (int r = 1; r < options.repeat; ++r) {
      const auto start = std::chrono::steady_clock::now();
      auto again = p->Process(image);
      if (!again.ok()) return absl::Status(again.status().code(), fmt::format("{}: {}", path, again.status().message()));
      frame_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      tracked += again->detector_ran ? 0 : 1;
      if (again->gpu_ms) gpu_ms.push_back(*again->gpu_ms);
      result = std::move(again);
    }
    nlohmann::json entry = {{"image", path},
                            {"width", image.width},
                            {"height", image.height},
                            {"invoke_ms", result->invoke_ms},
                            {"submissions", result->submissions},
                            {"detector_ran", result->detector_ran},
                            {"detections", DetectionsJson(*result)}};
    if (result->mask) entry["mask"] = MaskJson(*result->mask);
    if (!frame_ms.empty()) {
      std::sort(frame_ms.begin(), frame_ms.end());
      const double p50 = frame_ms[frame_ms.size() / 2];
      entry["frames"] = {{"count", frame_ms.size()}, {"tracked", tracked}, {"p50_ms", p50}, {"min_ms", frame_ms.front()},
                         {"max_ms", frame_ms.back()}};
      if (!gpu_ms.empty()) {
        std::sort(gpu_ms.begin(), gpu_ms.end());
        entry["frames"]["gpu_p50_ms"] = gpu_ms[gpu_ms.size() / 2];
      }
      text += fmt::format("{}: {} more frames, {} tracked: p50 {:.3f} ms (min {:.3f}, max {:.3f})\n", path, frame_ms.size(),
                          tracked, p50, frame_ms.front(), frame_ms.back());
    }
    text += fmt::format("{} ({}x{}): {} detection{} ({:.2f} ms, {} submission{}{})\n", path, image.width, image.height,
                        result->detections.size(), result->detections.size() == 1 ? "" : "s", result->invoke_ms,
                        result->submissions, result->submissions == 1 ? "" : "s",
                        result->detector_ran || !p->spec().landmarks ? "" : ", tracked from the previous image");
    for (size_t i = 0; i < result->detections.size(); ++i) {
      const pipeline::Detection& d = result->detections[i];
      text += fmt::format("  {} {}: score {:.3f}, box x {:.1f} y {:.1f} width {:.1f} height {:.1f}\n", p->spec().name, i + 1,
                          d.score, d.box[0], d.box[1], d.box[2], d.box[3]);
      if (!d.label.empty()) text += fmt::format("    {} hand ({:.2f})\n", d.label, d.label_score);
      const std::vector<std::string> names = p->spec().detector ? p->spec().detector->keypoint_names : std::vector<std::string>{};
      for (size_t j = 0; j < d.keypoints.size(); ++j) {
        const std::string name = j < names.size() ? names[j] : fmt::format("{}", j);
        text += fmt::format("    {} ({:.1f}, {:.1f})\n", name, d.keypoints[j][0], d.keypoints[j][1]);
      }
      if (!d.landmarks.empty()) text += fmt::format("    {} landmarks (--json lists them)\n", d.landmarks.size());
    }
    if (result->mask) {
      const pipeline::MaskSummary m = pipeline::Summarize(*result->mask);
      text += fmt::format("  mask: {:.1f}% of the image (mean {:.3f}), box x {:.0f} y {:.0f} width {:.0f} height {:.0f}\n",
                          100.0f * m.coverage, m.mean, m.box[0], m.box[1], m.box[2], m.box[3]);
    }
    if (!options.out.empty()) {
      const std::string out = AnnotatedPath(options.out, k, options.images.size());
      if (absl::Status s = pipeline::WritePng(pipeline::Annotate(image, *result, p->spec()), out); !s.ok()) return s;
      entry["annotated"] = out;
      text += fmt::format("  annotated picture: {}\n", out);
    }
    images.push_back(std::move(entry));
  }
  // The last stage that ran (face_mesh: the landmark model's).
  const Interpreter* interpreter = p->landmark_interpreter() ? p->landmark_interpreter() : p->interpreter();
  int delegated = 0;
  for (const NodePlacement& placement : interpreter->placements()) delegated += placement.where == NodePlacement::Where::kDelegate;
  if (options.json) {
    nlohmann::json j = {{"solution", options.solution},
                        {"backend", backend.backend},
                        {"device", backend.device},
                        {"precision", backend.delegate ? options.precision : "fp32"},
                        {"nodes", interpreter->graph().nodes.size()},
                        {"delegated_nodes", delegated},
                        {"partitions", interpreter->partitions().size()},
                        {"detections", images[0]["detections"]},
                        {"images", images}};
    if (images[0].contains("mask")) j["mask"] = images[0]["mask"];
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}: {} on {} ({}), {} of {} nodes in {} GPU partition{}\n{}", options.solution, backend.backend, backend.device,
               backend.delegate ? options.precision : "fp32", delegated, interpreter->graph().nodes.size(),
               interpreter->partitions().size(), interpreter->partitions().size() == 1 ? "" : "s", text);
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
