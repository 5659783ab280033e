// mgd view: plays frames through a solution or a model and shows what it
// found, live, in a GLFW window. Written against mgd's public C API only
// (mgd/c_api.h, mgd/gpu_delegate.h, mgd/pipeline.h), as an app would be.
#include <GLFW/glfw3.h>
#define GLFW_EXPOSE_NATIVE_EGL
#include <GLFW/glfw3native.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "draw.h"
#include "frames.h"
#include "hud.h"
#include "options.h"
#include "runner.h"

namespace {

using view::Frame;
using Clock = std::chrono::steady_clock;

std::string glfw_error;
void OnGlfwError(int, const char* message) { glfw_error = message; }

std::deque<int> keys;  // pressed since the last frame
void OnKey(GLFWwindow*, int key, int, int action, int) {
  if (action == GLFW_PRESS) keys.push_back(key);
}

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Mesa's DRI driver, loaded for the window, keeps a little of its one-time
// set-up when glfwTerminate unloads it, which LeakSanitizer then reports
// from an unknown module. Kept loaded to the end (as mgd keeps it for its
// own displays, and as a long-running app does), that stays reachable.
void KeepGlDriverLoaded() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::string suffix = "_dri.so";
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
          dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
        return 0;
      },
      nullptr);
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "mgd view: %s\n", message.c_str());
  return code;
}

// A window with the frame at its size (at most 1280x800) over the HUD's
// panel, and an OpenGL ES 3.0 context: through EGL where the display
// offers it, else GLX.
GLFWwindow* OpenWindow(const Frame& frame, const view::Options& o) {
  const float shrink = std::min({1.0f, 1280.0f / frame.width, 800.0f / frame.height});
  const int width = o.width > 0 ? o.width : std::max(480, static_cast<int>(frame.width * shrink));
  const int height = o.height > 0 ? o.height : static_cast<int>(frame.height * shrink + view::HudHeight(width));
  const std::string title = "mgd view: " + o.target;
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  for (int api : {GLFW_EGL_CONTEXT_API, GLFW_NATIVE_CONTEXT_API}) {
    glfwWindowHint(GLFW_CONTEXT_CREATION_API, api);
    if (GLFWwindow* window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr)) return window;
  }
  return nullptr;
}

// How frames and results travel between the window, host memory and the model.
std::string DataPath(const view::Runner& runner) {
  const std::string shared = runner.backend() == "vulkan" ? "Vulkan memory the window's GL imports" : "a GL buffer the window shares";
  if (runner.is_solution()) {
    return runner.shares_window() ? "frame: uploaded once, read by the model in place (" + shared + "); results: host"
                                  : "frame: host memory, uploaded to the model and the window" +
                                        (runner.sharing_note().empty() ? "" : " (" + runner.sharing_note() + ")");
  }
  if (runner.output_bound()) return "input: host memory; output: drawn from the GPU (" + shared + ")";
  return "input and output: host memory" + (runner.sharing_note().empty() ? "" : " (" + runner.sharing_note() + ")");
}

// The runner for `engine`; a plain model's map output is bound to a buffer
// of the window where the delegate shares the window's objects.
std::unique_ptr<view::Runner> MakeRunner(const view::Options& o, const view::Engine& engine, std::string& error) {
  std::unique_ptr<view::Runner> runner = view::Runner::Create(o, engine, error);
  if (runner != nullptr && runner->shares_window() && runner->MapOutputBytes() > 0) {
    std::string why;
    if (runner->BindMapOutput(why) == 0) std::fprintf(stderr, "mgd view: the output stays in host memory: %s\n", why.c_str());
  }
  return runner;
}

std::string Describe(const view::Runner& runner) {
  return runner.backend() + " on " + runner.device() + (runner.backend() == "cpu" ? "" : runner.fp16() ? ", fp16" : ", fp32");
}

nlohmann::json Summary(const view::Options& o, const view::Runner& runner, const view::Stats& stats,
                       const view::Overlay& overlay, const view::Placement& at, int width, int height) {
  nlohmann::json detections = nlohmann::json::array();
  for (size_t i = 0; i < overlay.boxes.size(); ++i) {
    const auto& b = overlay.boxes[i];
    detections.push_back({{"box", {b[0], b[1], b[2], b[3]}}, {"label", overlay.labels[i].second}});
  }
  return {{"target", o.target},
          {"frames", stats.frames},
          {"frames_per_second", stats.frames_per_second},
          {"latency_ms", {{"pre", stats.average.pre}, {"model", stats.average.model}, {"post", stats.average.post}}},
          {"backend", runner.backend()},
          {"device", runner.device()},
          {"precision", runner.fp16() ? "fp16" : "fp32"},
          {"data_path", DataPath(runner)},
          {"shared_with_window", runner.shares_window()},
          {"window", {width, height}},
          {"placement", {{"x", at.x}, {"y", at.y}, {"scale", at.scale}}},
          {"detections", detections},
          {"mask", !overlay.mask.empty()},
          {"heat_map", !overlay.heat.empty() || overlay.gpu_heat.buffer != 0},
          {"notes", overlay.notes},
          {"screenshot", o.screenshot}};
}

// --no-window: frames, the model and the results' host part, timed as the
// window's loop times them, without drawing.
int RunWithoutWindow(const view::Options& o, view::FrameSource& source, Frame& frame) {
  std::string error;
  const view::Engine engine{o.backend, o.precision == "fp16"};
  std::unique_ptr<view::Runner> runner = view::Runner::Create(o, engine, error);
  if (runner == nullptr) return Fail(2, error);
  view::Overlay overlay;
  view::Stats stats;
  Clock::time_point last = Clock::now(), first_done = last;
  for (int i = 0; i < o.frames_to_run; ++i) {
    view::StageTimes times;
    const auto start = Clock::now();
    if (i > 0 && !source.Next(frame, error)) return Fail(2, error);
    times.pre = MsBetween(start, Clock::now());
    if (!runner->Process(frame, false, overlay, times, error)) return Fail(1, error);
    const auto now = Clock::now();
    stats.Add(times, MsBetween(last, now));
    last = now;
    if (i == 0) first_done = now;
  }
  if (o.json) {
    nlohmann::json j = Summary(o, *runner, stats, overlay, view::Placement{}, 0, 0);
    // Frames/s over the whole run, after the first (preparing) frame.
    j["frames_per_second_overall"] =
        o.frames_to_run > 1 ? (o.frames_to_run - 1) * 1000.0 / MsBetween(first_done, last) : 0.0;
    j["data_path"] = "frame: host memory (no window)";
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  view::Options o;
  if (int code = view::ParseOptions(argc, argv, o); code >= 0) return code;

  std::string error;
  std::unique_ptr<view::FrameSource> source = !o.image.empty()    ? view::OpenImage(o.image, error)
                                              : !o.frames.empty() ? view::OpenFolder(o.frames, error)
                                                                  : view::OpenCamera(o.camera, error);
  Frame frame;
  if (source == nullptr || !source->Next(frame, error)) return Fail(2, error);
  if (o.no_window) return RunWithoutWindow(o, *source, frame);

  glfwSetErrorCallback(OnGlfwError);
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((display == nullptr || *display == '\0') && (wayland == nullptr || *wayland == '\0')) {
    return Fail(1, "cannot open a window: no display (DISPLAY is not set; headless: run it under xvfb-run)");
  }
  if (!glfwInit()) return Fail(1, "cannot open a window: " + glfw_error + " (headless: run it under xvfb-run)");
  GLFWwindow* window = OpenWindow(frame, o);
  if (window == nullptr) {
    glfwTerminate();
    return Fail(1, "cannot open a window with OpenGL ES 3.0: " + glfw_error);
  }
  glfwMakeContextCurrent(window);
  KeepGlDriverLoaded();
  glfwSwapInterval(0);  // frames/s says what mgd does, not the display's refresh
  glfwSetKeyCallback(window, OnKey);

  int code = 0;
  {
    view::Canvas canvas;
    view::Engine engine{o.backend, o.precision == "fp16"};
    engine.window_gl = true;
    if (glfwGetWindowAttrib(window, GLFW_CONTEXT_CREATION_API) == GLFW_EGL_CONTEXT_API) {
      engine.egl_display = reinterpret_cast<uint64_t>(glfwGetEGLDisplay());
      engine.egl_context = reinterpret_cast<uint64_t>(glfwGetEGLContext(window));
    }
    std::unique_ptr<view::Runner> runner;
    if (!canvas.Init(error)) {
      code = Fail(1, error);
    } else if (runner = MakeRunner(o, engine, error); runner == nullptr) {
      code = Fail(2, error);
    }
    view::Overlay overlay;
    view::Stats stats;
    view::Placement at;
    bool paused = false, have_result = false, have_range = false;
    float lo = 0.0f, hi = 1.0f;  // a heat map's range, fixed on its first frame
    bool frame_on_gpu = false;    // the frame in a buffer the delegate shares
    std::string message;  // what the last key did
    int saved = 0, width = 0, height = 0;
    Clock::time_point last = Clock::now();
    size_t scripted = 0;
    while (code == 0 && !glfwWindowShouldClose(window)) {
      if (stats.frames > 0 && scripted < o.keys.size()) {
        const char key = o.keys[scripted++];
        keys.push_back(key == ' ' ? GLFW_KEY_SPACE : GLFW_KEY_A + (key - 'a'));
      }
      for (; !keys.empty(); keys.pop_front()) {
        const int key = keys.front();
        if (key == GLFW_KEY_Q || key == GLFW_KEY_ESCAPE) glfwSetWindowShouldClose(window, GLFW_TRUE);
        if (key == GLFW_KEY_SPACE) paused = !paused;
        if (key == GLFW_KEY_S) {
          const std::string path = "mgd-view-" + std::to_string(++saved) + ".png";
          message = canvas.Save(path, error) ? "saved " + path : error;
        }
        if ((key == GLFW_KEY_F || key == GLFW_KEY_B) && runner->backend() == "cpu") {
          message = "the CPU backend has no GPU precision or API to switch";
        } else if (key == GLFW_KEY_F || key == GLFW_KEY_B) {
          view::Engine next = engine;
          next.backend = runner->backend();
          next.fp16 = runner->fp16();
          if (key == GLFW_KEY_F) next.fp16 = !next.fp16;
          if (key == GLFW_KEY_B) next.backend = next.backend == "vulkan" ? "gl" : "vulkan";
          const auto start = Clock::now();
          if (auto made = MakeRunner(o, next, error)) {
            runner = std::move(made);
            have_range = false;
            stats.Restart();
            message = "prepared " + Describe(*runner) + " in " + view::Milliseconds(MsBetween(start, Clock::now()));
          } else {
            message = "kept " + Describe(*runner) + ": " + error;
          }
        }
      }
      view::StageTimes times;
      if (!paused || !have_result) {
        const auto start = Clock::now();
        if (stats.frames > 0 && !source->Next(frame, error)) {
          code = Fail(2, error);
          break;
        }
        const unsigned shared = runner->is_solution() ? runner->SharedFrameBuffer(frame.pixels.size()) : 0;
        if (shared != 0) canvas.UploadFrameBuffer(frame, shared);
        frame_on_gpu = shared != 0;
        const double read_ms = MsBetween(start, Clock::now());
        if (!runner->Process(frame, frame_on_gpu, overlay, times, error)) {
          code = Fail(1, error);
          break;
        }
        times.pre += read_ms;
        have_result = true;
      }
      const auto draw_start = Clock::now();
      glfwGetFramebufferSize(window, &width, &height);
      canvas.Begin(width, height);
      at = view::Fit(frame.width, frame.height, width, std::max(1, height - static_cast<int>(view::HudHeight(width))));
      if (frame_on_gpu) {
        canvas.DrawFrameFromBuffer(frame, at);
      } else {
        canvas.DrawFrame(frame, at);
      }
      if (overlay.gpu_heat.buffer != 0 && !have_range) have_range = canvas.BufferRange(overlay.gpu_heat, lo, hi);
      overlay.gpu_heat.lo = lo;
      overlay.gpu_heat.hi = hi;
      view::DrawOverlay(canvas, overlay, frame, at);
      std::vector<std::string> hud = {
          "mgd view: " + o.target + "   " + source->Describe(),
          Describe(*runner),
          std::to_string(static_cast<int>(stats.frames_per_second + 0.5)) + " frames/s   frame " +
              std::to_string(stats.frames + (paused ? 0 : 1)) + (paused ? "   paused" : ""),
          "pre " + view::Milliseconds(stats.average.pre) + "   model " + view::Milliseconds(stats.average.model) +
              "   post " + view::Milliseconds(stats.average.post),
          DataPath(*runner),
      };
      hud.push_back(message.empty() ? "space pause  s screenshot  f fp16/fp32  b Vulkan/GLES  q quit" : message);
      hud.insert(hud.end(), overlay.notes.begin(), overlay.notes.end());
      view::DrawHud(canvas, hud, width, height);
      canvas.Flush();
      const auto now = Clock::now();
      if (!paused) {
        times.post += MsBetween(draw_start, now);
        stats.Add(times, MsBetween(last, now));
      }
      last = now;
      if (o.frames_to_run > 0 && stats.frames >= o.frames_to_run) {
        if (!o.screenshot.empty() && !canvas.Save(o.screenshot, error)) code = Fail(1, error);
        break;
      }
      glfwSwapBuffers(window);
      if (paused) {
        glfwWaitEventsTimeout(0.05);
      } else {
        glfwPollEvents();
      }
    }
    if (code == 0 && o.json) {
      std::printf("%s\n", Summary(o, *runner, stats, overlay, at, width, height).dump().c_str());
    }
  }
  glfwDestroyWindow(window);
  glfwTerminate();
  return code;
}
