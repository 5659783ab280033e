#include "frames.h"

#include <mgd/pipeline.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

namespace view {
namespace {

void Collect(void* error, const char* message) { *static_cast<std::string*>(error) = message; }

class StillImage : public FrameSource {
 public:
  explicit StillImage(Frame frame) : frame_(std::move(frame)) {}
  bool Next(Frame& frame, std::string&) override {
    frame = frame_;
    return true;
  }
  std::string Describe() const override { return frame_.name; }

 private:
  Frame frame_;
};

class Folder : public FrameSource {
 public:
  Folder(std::string folder, std::vector<std::string> files) : folder_(std::move(folder)), files_(std::move(files)) {}
  bool Next(Frame& frame, std::string& error) override {
    const std::string& path = files_[next_];
    next_ = (next_ + 1) % files_.size();
    return ReadImageFile(path, frame, error);
  }
  std::string Describe() const override { return folder_ + " (" + std::to_string(files_.size()) + " files)"; }

 private:
  std::string folder_;
  std::vector<std::string> files_;
  size_t next_ = 0;
};

bool IsImageName(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

bool ReadImageFile(const std::string& path, Frame& frame, std::string& error) {
  MgdImage* image = MgdImageReadFile(path.c_str(), Collect, &error);
  if (image == nullptr) return false;
  frame.width = image->width;
  frame.height = image->height;
  frame.channels = image->channels;
  const size_t bytes = static_cast<size_t>(image->width) * image->height * image->channels;
  frame.pixels.assign(image->pixels, image->pixels + bytes);
  frame.name = std::filesystem::path(path).filename().string();
  MgdImageDelete(image);
  return true;
}

std::unique_ptr<FrameSource> OpenImage(const std::string& path, std::string& error) {
  Frame frame;
  if (!ReadImageFile(path, frame, error)) return nullptr;
  return std::make_unique<StillImage>(std::move(frame));
}

std::unique_ptr<FrameSource> OpenFolder(const std::string& folder, std::string& error) {
  std::error_code ec;
  std::vector<std::string> files;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && IsImageName(it->path())) files.push_back(it->path().string());
  }
  if (ec) {
    error = folder + ": cannot list the folder: " + ec.message();
    return nullptr;
  }
  if (files.empty()) {
    error = folder + ": no PNG or JPEG files in the folder";
    return nullptr;
  }
  std::sort(files.begin(), files.end());
  // The first file is read now, so that a bad one is said before a window opens.
  Frame first;
  if (!ReadImageFile(files[0], first, error)) return nullptr;
  return std::make_unique<Folder>(folder, std::move(files));
}

}  // namespace view
