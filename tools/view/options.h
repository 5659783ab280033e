// mgd view's command line.
#pragma once

#include <string>

namespace view {

struct Options {
  std::string target;  // a solution (face, face_mesh, hands, pose, selfie, ...) or a .tflite model
  std::string image, frames, camera;  // exactly one frame source
  std::string backend = "auto";       // auto|vulkan|gl|cpu
  std::string precision = "fp32";
  std::string models_dir = "tests/data/models";
  std::string cache_dir;  // compilation cache (re-preparing after f and b); default ~/.cache/mgd
  std::string labels;     // a plain model's class names, one a line
  float input_min = -1.0f, input_max = 1.0f;  // a plain float model's input range
  int frames_to_run = 0;                      // 0: until q
  int width = 0, height = 0;                  // the window's first size (0: the frame's, at most 1280x800)
  std::string screenshot;                     // the last frame, with --frames-to-run
  std::string keys;                           // pressed one a frame from the second on (scripted runs)
  bool json = false;
  bool no_window = false;  // the same loop without a window or drawing (GPU hosts without a display)
  bool IsModel() const;  // a .tflite file rather than a solution
};

// Parses the command line into `options`: -1 to go on, else the exit code
// (0 after --help, 2 after a usage error, said on stderr).
int ParseOptions(int argc, char** argv, Options& options);

}  // namespace view
