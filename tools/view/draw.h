// Drawing a frame and its overlay with OpenGL ES 3.0 into the window's
// default framebuffer: the frame as a texture, masks and heat maps as
// translucent textures over it, lines, dots, boxes and text as triangles.
#pragma once

#include <GLES3/gl3.h>

#include <array>
#include <string>
#include <vector>

#include "frames.h"
#include "overlay.h"

namespace view {

using Color = std::array<float, 4>;

// Where the frame sits in the window: window pixel = offset + frame pixel x scale.
struct Placement {
  float x = 0.0f, y = 0.0f, scale = 1.0f;
  std::array<float, 2> operator()(float fx, float fy) const { return {x + fx * scale, y + fy * scale}; }
};

// The frame as large as the window allows, centred, its aspect kept.
Placement Fit(int frame_width, int frame_height, int window_width, int window_height);

class Canvas {
 public:
  ~Canvas();
  // Compiles the programs in the current context; false with `error` set.
  bool Init(std::string& error);
  void Begin(int width, int height);

  void DrawFrame(const Frame& frame, const Placement& at);
  // A mask as `tint` where it is 1; a heat map (colour ramp) over the frame.
  void DrawMask(const Grid& mask, const Frame& frame, const Placement& at, const Color& tint);
  void DrawHeat(const Grid& heat, const Frame& frame, const Placement& at);

  // Buffers the window shares with the delegate (shared_buffers.h).
  // The frame uploaded once: into the frame's texture and, on the GPU, into
  // `shared` (which a pipeline then reads in place). Finishes the GL work,
  // so that the delegate sees it.
  void UploadFrameBuffer(const Frame& frame, unsigned shared);
  void DrawFrameFromBuffer(const Frame& frame, const Placement& at);
  // The smallest and largest value of a BHWC float buffer (reads it back:
  // once, to fix a heat map's range).
  bool BufferRange(const GpuGrid& grid, float& lo, float& hi);
  void DrawHeatFromBuffer(const GpuGrid& grid, const Frame& frame, const Placement& at);

  // Shapes, in window pixels, drawn at the next Flush.
  void Line(float x0, float y0, float x1, float y1, float width, const Color& color);
  void Rect(float x, float y, float w, float h, const Color& color);
  void Outline(float x, float y, float w, float h, float width, const Color& color);
  void Dot(float x, float y, float radius, const Color& color);
  // Text in stb_easy_font's glyphs, `scale` times their size; returns the width.
  float Text(float x, float y, const std::string& text, float scale, const Color& color);
  void Flush();

  // The window's pixels as a PNG (after the frame is drawn, before the swap).
  bool Save(const std::string& path, std::string& error) const;

 private:
  void DrawTexture(GLuint texture, const Frame& frame, const Placement& at, int mode, const Color& tint,
                   float lo = 0.0f, float hi = 1.0f, int channels = 1);
  void UploadGrid(const Grid& grid);
  void SizeFrameTexture(const Frame& frame, const void* pixels);

  int width_ = 0, height_ = 0;
  GLuint image_program_ = 0, flat_program_ = 0;
  // Their uniforms' locations, looked up once at Init (not at every draw).
  struct ImageUniforms {
    GLint viewport = -1, mode = -1, tint = -1, lo = -1, hi = -1, channels = -1;
  } image_uniforms_;
  GLint flat_viewport_ = -1;
  GLuint frame_texture_ = 0, grid_texture_ = 0, float_texture_ = 0;
  GLuint staging_ = 0;  // the frame on its way to the texture and a shared buffer
  GLuint vertex_array_ = 0, vertex_buffer_ = 0;
  int texture_width_ = 0, texture_height_ = 0, texture_channels_ = 0;
  std::vector<float> triangles_;  // x, y, r, g, b, a per vertex
};

}  // namespace view
