// Where the viewer's frames come from: a still image (repeated), a folder
// of PNG/JPEG files (in name order, looping) or a V4L2 camera.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace view {

struct Frame {
  int width = 0, height = 0, channels = 0;  // 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;               // rows packed, top to bottom
  std::string name;                          // the file or the camera, for the HUD
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // The next frame into `frame`; false with `error` set when there is none.
  virtual bool Next(Frame& frame, std::string& error) = 0;
  virtual std::string Describe() const = 0;
};

std::unique_ptr<FrameSource> OpenImage(const std::string& path, std::string& error);
std::unique_ptr<FrameSource> OpenFolder(const std::string& folder, std::string& error);
std::unique_ptr<FrameSource> OpenCamera(const std::string& device, std::string& error);

// An 8-bit image file through mgd's public image reader.
bool ReadImageFile(const std::string& path, Frame& frame, std::string& error);

}  // namespace view
