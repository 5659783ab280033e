#include "options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

namespace view {

bool Options::IsModel() const { return target.size() > 7 && target.compare(target.size() - 7, 7, ".tflite") == 0; }

namespace {

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/mgd";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return std::string(home) + "/.cache/mgd";
  return "";
}

}  // namespace

int ParseOptions(int argc, char** argv, Options& o) {
  CLI::App app{"mgd view: a live window over what a model or a pipeline sees (frames/s, latency, results drawn)\n"
               "Keys: space pause, s screenshot, f fp16/fp32, b Vulkan/GLES, q or Esc quit.",
               "mgd view"};
  app.add_option("target", o.target, "face|face_full_range|face_mesh|hands|pose|selfie, or MODEL.tflite")->required();
  auto* sources = app.add_option_group("frames", "Where frames come from (one of)");
  sources->add_option("--image", o.image, "A PNG or JPEG file, shown again and again");
  sources->add_option("--frames", o.frames, "A folder of PNG/JPEG files, played in name order, looping");
  sources->add_option("--camera", o.camera, "A V4L2 camera (/dev/videoN)");
  sources->require_option(1);
  app.add_option("--backend", o.backend, "auto|vulkan|gl|cpu")->check(CLI::IsMember({"auto", "vulkan", "gl", "cpu"}));
  app.add_option("--precision", o.precision, "fp32|fp16 (GPU backends)")->check(CLI::IsMember({"fp32", "fp16"}));
  app.add_option("--models", o.models_dir, "Where a solution's .tflite files are");
  app.add_option("--cache-dir", o.cache_dir, "Compilation cache, so that f and b re-prepare quickly (default ~/.cache/mgd)");
  app.add_option("--labels", o.labels, "A plain model's class names, one a line (its top classes are shown)");
  std::vector<float> range;
  app.add_option("--input-range", range, "A plain float model's input range, MIN,MAX (default -1,1)")
      ->delimiter(',')
      ->expected(2);
  std::string size;
  app.add_option("--size", size, "The window's size, WIDTHxHEIGHT (default: the frame's, at most 1280x800, and the panel)")
      ->check([](const std::string& s) {
        int w = 0, h = 0;
        char x = 0;
        return std::sscanf(s.c_str(), "%d%c%d", &w, &x, &h) == 3 && x == 'x' && w >= 64 && h >= 64 && w <= 8192 &&
                       h <= 8192
                   ? ""
                   : "a size is WIDTHxHEIGHT, 64 to 8192 each";
      });
  app.add_option("--frames-to-run", o.frames_to_run, "Render this many frames, then exit (headless use)")
      ->check(CLI::PositiveNumber);
  app.add_option("--screenshot", o.screenshot, "With --frames-to-run: the last frame as a PNG");
  app.add_option("--keys", o.keys, "Keys to press, one a frame from the second frame on (e.g. fb), as scripts and tests do")
      ->check([](const std::string& keys) {
        return keys.find_first_not_of(" sfbq") == std::string::npos ? "" : "keys are space, s, f, b and q";
      });
  app.add_flag("--no-window", o.no_window,
               "Run the frames through the model without a window (nothing drawn): the loop's own frames/s, where no "
               "display exists; needs --frames-to-run");
  app.add_flag("--json", o.json, "At exit, one JSON object on stdout: frames, frames/s, latency, what was drawn");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);
      return 0;
    }
    std::fprintf(stderr, "mgd view: %s\n", e.what());
    return 2;
  }
  if (!size.empty()) {
    char x = 0;
    std::sscanf(size.c_str(), "%d%c%d", &o.width, &x, &o.height);
  }
  if (range.size() == 2) {
    o.input_min = range[0];
    o.input_max = range[1];
  }
  if (!o.screenshot.empty() && o.frames_to_run == 0) {
    std::fprintf(stderr, "mgd view: --screenshot needs --frames-to-run (the frame it saves)\n");
    return 2;
  }
  if ((o.no_window && o.frames_to_run == 0) || (o.no_window && !o.screenshot.empty())) {
    std::fprintf(stderr, "mgd view: --no-window needs --frames-to-run and draws no --screenshot\n");
    return 2;
  }
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  return -1;
}

}  // namespace view
