// A V4L2 camera as a frame source: YUYV frames (the format every UVC camera
// offers) through memory-mapped streaming buffers, converted to RGB.
#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "frames.h"

namespace view {
namespace {

int Ioctl(int fd, unsigned long request, void* arg) {
  int r;
  do r = ioctl(fd, request, arg);
  while (r == -1 && errno == EINTR);
  return r;
}

uint8_t Clamp(int v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

// BT.601 limited range, as UVC cameras send it.
void YuyvToRgb(const uint8_t* in, int width, int height, size_t row_bytes, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = in + row_bytes * y;
    uint8_t* o = &out[static_cast<size_t>(y) * width * 3];
    for (int x = 0; x + 1 < width; x += 2, row += 4) {
      const int u = row[1] - 128, v = row[3] - 128;
      for (int k = 0; k < 2; ++k) {
        const int c = 298 * (row[k * 2] - 16);
        *o++ = Clamp((c + 409 * v + 128) >> 8);
        *o++ = Clamp((c - 100 * u - 208 * v + 128) >> 8);
        *o++ = Clamp((c + 516 * u + 128) >> 8);
      }
    }
  }
}

class Camera : public FrameSource {
 public:
  explicit Camera(std::string device) : device_(std::move(device)) {}
  ~Camera() override {
    if (fd_ < 0) return;
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    Ioctl(fd_, VIDIOC_STREAMOFF, &type);
    for (auto& [data, size] : buffers_) munmap(data, size);
    close(fd_);
  }

  bool Open(std::string& error) {
    fd_ = open(device_.c_str(), O_RDWR);
    if (fd_ < 0) return Fail(error, std::string("cannot open the camera: ") + std::strerror(errno));
    v4l2_capability cap{};
    if (Ioctl(fd_, VIDIOC_QUERYCAP, &cap) != 0) return Fail(error, "not a V4L2 device");
    if (!(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) || !(cap.device_caps & V4L2_CAP_STREAMING)) {
      return Fail(error, "the device does not stream video capture");
    }
    v4l2_format format{};
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    format.fmt.pix.width = 1280;
    format.fmt.pix.height = 720;
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    if (Ioctl(fd_, VIDIOC_S_FMT, &format) != 0 || format.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV) {
      return Fail(error, "the camera offers no YUYV frames");
    }
    width_ = static_cast<int>(format.fmt.pix.width);
    height_ = static_cast<int>(format.fmt.pix.height);
    row_bytes_ = std::max<size_t>(format.fmt.pix.bytesperline, static_cast<size_t>(width_) * 2);
    v4l2_requestbuffers request{};
    request.count = 4;
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request.memory = V4L2_MEMORY_MMAP;
    if (Ioctl(fd_, VIDIOC_REQBUFS, &request) != 0 || request.count < 2) return Fail(error, "no streaming buffers");
    for (uint32_t i = 0; i < request.count; ++i) {
      v4l2_buffer b{};
      b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
      b.memory = V4L2_MEMORY_MMAP;
      b.index = i;
      if (Ioctl(fd_, VIDIOC_QUERYBUF, &b) != 0) return Fail(error, "VIDIOC_QUERYBUF failed");
      void* data = mmap(nullptr, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, b.m.offset);
      if (data == MAP_FAILED) return Fail(error, "cannot map a streaming buffer");
      buffers_.emplace_back(data, b.length);
      if (Ioctl(fd_, VIDIOC_QBUF, &b) != 0) return Fail(error, "VIDIOC_QBUF failed");
    }
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (Ioctl(fd_, VIDIOC_STREAMON, &type) != 0) return Fail(error, "VIDIOC_STREAMON failed");
    return true;
  }

  bool Next(Frame& frame, std::string& error) override {
    v4l2_buffer b{};
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    if (Ioctl(fd_, VIDIOC_DQBUF, &b) != 0) return Fail(error, std::string("no frame: ") + std::strerror(errno));
    if (b.bytesused < row_bytes_ * static_cast<size_t>(height_ - 1) + static_cast<size_t>(width_) * 2) {
      Ioctl(fd_, VIDIOC_QBUF, &b);
      return Fail(error, "a short frame");
    }
    YuyvToRgb(static_cast<const uint8_t*>(buffers_[b.index].first), width_, height_, row_bytes_, frame.pixels);
    frame.width = width_;
    frame.height = height_;
    frame.channels = 3;
    frame.name = device_;
    return Ioctl(fd_, VIDIOC_QBUF, &b) == 0 || Fail(error, "VIDIOC_QBUF failed");
  }

  std::string Describe() const override {
    return device_ + " (" + std::to_string(width_) + "x" + std::to_string(height_) + " YUYV)";
  }

 private:
  bool Fail(std::string& error, const std::string& what) const {
    error = device_ + ": " + what;
    return false;
  }

  std::string device_;
  int fd_ = -1;
  int width_ = 0, height_ = 0;
  size_t row_bytes_ = 0;
  std::vector<std::pair<void*, size_t>> buffers_;
};

}  // namespace

std::unique_ptr<FrameSource> OpenCamera(const std::string& device, std::string& error) {
  auto camera = std::make_unique<Camera>(device);
  if (!camera->Open(error)) return nullptr;
  return camera;
}

}  // namespace view
